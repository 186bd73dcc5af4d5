"""`eventsched run` serves /metrics over HTTPS as kube-scheduler does, against a real
kube-apiserver's TokenReview and SubjectAccessReview (not collected without its binaries).

Two ServiceAccounts' tokens (TokenRequest): one bound to a ClusterRole granting `get` on
the `/metrics` non-resource URL (what Prometheus' ServiceAccount is given), one bound to
nothing. The scheduler reviews with the admin kubeconfig: the allowed token gets the
metrics, the other 403 with kube-scheduler's body, no token 401, /healthz is open to
anyone; a client certificate signed by --client-ca-file is the user of its CN, which the
same ClusterRole then allows.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kube.realserver import RealApiServer
from tests.kube.test_kube_runner import free_port
from tests.processes import child_env, terminate
from tests.serving.certs import issue, make_ca
from tests.serving.httpsclient import get

ROLE = "eventsched-test-metrics-reader"
ALLOWED, DENIED = "metrics-scraper", "no-metrics"
CERT_USER = "scraper-by-certificate"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
ACCOUNTS = "/api/v1/namespaces/default/serviceaccounts"


def _token(server: RealApiServer, account: str) -> str:
    server.call("POST", ACCOUNTS, {"metadata": {"name": account}})
    answer = server.call(
        "POST",
        f"{ACCOUNTS}/{account}/token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600},
        },
    )
    return str(answer["status"]["token"])


def wait_healthy(server: RealApiServer, proc: subprocess.Popen[str], port: int, log: Path) -> None:
    """Until `proc` answers /healthz over HTTPS on `port` (its `log` if it exits first)."""

    def healthy() -> bool:
        try:
            return get(port, "/healthz").code == 200
        except OSError:
            assert proc.poll() is None, log.read_text()
            return False

    server.wait_for(healthy, timeout=60)


@pytest.fixture
def tokens(real_apiserver: RealApiServer) -> Iterator[dict[str, str]]:
    """The two accounts' tokens; the role bound to ALLOWED and to CERT_USER."""
    server = real_apiserver
    role = {
        "metadata": {"name": ROLE},
        "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
    }
    binding = {
        "metadata": {"name": ROLE},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE},
        "subjects": [
            {"kind": "ServiceAccount", "name": ALLOWED, "namespace": "default"},
            {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": CERT_USER},
        ],
    }
    server.call("POST", f"{RBAC}/clusterroles", role)
    server.call("POST", f"{RBAC}/clusterrolebindings", binding)
    try:
        yield {account: _token(server, account) for account in (ALLOWED, DENIED)}
    finally:
        server.request("DELETE", f"{RBAC}/clusterrolebindings/{ROLE}")
        server.request("DELETE", f"{RBAC}/clusterroles/{ROLE}")
        for account in (ALLOWED, DENIED):
            server.request("DELETE", f"{ACCOUNTS}/{account}")


def test_metrics_need_a_token_or_certificate_rbac_allows(
    real_apiserver: RealApiServer, tokens: dict[str, str], tmp_path: Path
) -> None:
    ca = make_ca(tmp_path)
    port = free_port()
    log = tmp_path / "run.log"
    with log.open("a") as out:
        proc = subprocess.Popen(
            [
                sys.executable, "-m", "eventsched.cli.main",
                "--db", f"sqlite:///{tmp_path / 'events.db'}", "--log-format", "json",
                "run", "--kubeconfig", str(real_apiserver.kubeconfig(tmp_path / "kubeconfig")),
                "--leader-elect", "false", "--bind-address", "127.0.0.1",
                "--secure-port", str(port), "--client-ca-file", str(ca.crt),
            ],
            stdout=out, stderr=subprocess.STDOUT, text=True, env=child_env(),
        )  # fmt: skip
    try:
        wait_healthy(real_apiserver, proc, port, log)
        assert get(port, "/healthz").body == "ok\n"

        allowed = get(port, "/metrics", token=tokens[ALLOWED])
        assert allowed.code == 200, allowed.body
        assert "scheduler_schedule_attempts_total" in allowed.body

        denied = get(port, "/metrics", token=tokens[DENIED])
        assert denied.code == 403
        user = f"system:serviceaccount:default:{DENIED}"
        assert json.loads(denied.body)["message"] == (
            f'forbidden: User "{user}" cannot get path "/metrics"'
        )
        assert json.loads(denied.body)["reason"] == "Forbidden"

        anonymous = get(port, "/metrics")
        assert anonymous.code == 401 and json.loads(anonymous.body)["reason"] == "Unauthorized"
        assert get(port, "/metrics", token="not-a-token-the-server-knows").code == 401

        certificate = issue(ca, tmp_path, "scraper", CERT_USER)
        assert get(port, "/metrics", cert=certificate).code == 200
        stranger = issue(ca, tmp_path, "stranger", "someone-else")
        assert get(port, "/metrics", cert=stranger).code == 403
    finally:
        terminate(proc, lambda: log.read_text(errors="replace"))
