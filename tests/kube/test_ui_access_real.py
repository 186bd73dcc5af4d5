"""`eventsched ui` over HTTPS against a real kube-apiserver: each reader sees the pods of
the namespaces RBAC lets them `get pods` in (not collected without its binaries).

A ServiceAccount bound to a Role granting `get pods` in namespace `a` (and a user of a
client certificate bound to the same Role), another bound to nothing; a log with one
pod in `a` and one in `b` on the same node. The reader sees `a`'s pod on every page and
gets 403 for `b`'s; no token is 401 with kube's Status body; /healthz is open.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from eventsched.cli.main import main
from eventsched.events import upgrade
from tests.kube.realserver import RealApiServer
from tests.kube.test_kube_runner import free_port
from tests.kube.test_secure_serving_real import _token, wait_healthy
from tests.processes import child_env, terminate
from tests.serving.certs import issue, make_ca
from tests.serving.httpsclient import get

ROLE = "eventsched-test-pod-reader"
READER, STRANGER = "pods-in-a", "nothing"
CERT_USER = "reader-by-certificate"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
ACCOUNTS = "/api/v1/namespaces/default/serviceaccounts"
NODE = "node-1"


def _pod(namespace: str, name: str, cpu: str) -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  schedulerName: eventsched
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


NODE_MANIFEST = f"""
apiVersion: v1
kind: Node
metadata: {{name: {NODE}, labels: {{kubernetes.io/hostname: {NODE}}}}}
status:
  capacity: {{cpu: "8", memory: 32Gi, pods: "110"}}
  allocatable: {{cpu: "8", memory: 32Gi, pods: "110"}}
"""
#: One pod bound in a, one bound in b, one in b that fits nowhere (pending).
MANIFESTS = "---".join(
    [
        NODE_MANIFEST,
        _pod("a", "shown-pod", "100m"),
        _pod("b", "hidden-pod", "100m"),
        _pod("b", "hidden-pending", "64"),
    ]
)


@pytest.fixture
def tokens(real_apiserver: RealApiServer) -> Iterator[dict[str, str]]:
    """The two accounts' tokens; `get pods` in namespace a bound to READER and CERT_USER."""
    server = real_apiserver
    # Kept once made: without a namespace controller, a deleted namespace stays
    # Terminating and refuses new objects, so the tests share a and b.
    for namespace in ("a", "b"):
        server.request("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
    role = {
        "metadata": {"name": ROLE, "namespace": "a"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
    }
    binding = {
        "metadata": {"name": ROLE, "namespace": "a"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": ROLE},
        "subjects": [
            {"kind": "ServiceAccount", "name": READER, "namespace": "default"},
            {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": CERT_USER},
        ],
    }
    server.call("POST", f"{RBAC}/namespaces/a/roles", role)
    server.call("POST", f"{RBAC}/namespaces/a/rolebindings", binding)
    try:
        yield {account: _token(server, account) for account in (READER, STRANGER)}
    finally:
        for account in (READER, STRANGER):
            server.request("DELETE", f"{ACCOUNTS}/{account}")
        server.request("DELETE", f"{RBAC}/namespaces/a/rolebindings/{ROLE}")
        server.request("DELETE", f"{RBAC}/namespaces/a/roles/{ROLE}")


def _log(tmp_path: Path) -> str:
    manifests = tmp_path / "cluster"
    manifests.mkdir()
    (manifests / "all.yaml").write_text(MANIFESTS)
    url = f"sqlite:///{tmp_path / 'events.db'}"
    upgrade(url)
    assert main(["simulate", str(manifests), "--db", url]) == 0
    return url


def test_a_reader_sees_only_the_namespaces_rbac_allows(
    real_apiserver: RealApiServer, tokens: dict[str, str], tmp_path: Path
) -> None:
    url = _log(tmp_path)
    ca = make_ca(tmp_path)
    port = free_port()
    log = tmp_path / "ui.log"
    with log.open("a") as out:
        proc = subprocess.Popen(
            [
                sys.executable, "-m", "eventsched.cli.main", "--db", url,
                "ui", "--kubeconfig", str(real_apiserver.kubeconfig(tmp_path / "kubeconfig")),
                "--bind-address", "127.0.0.1", "--secure-port", str(port),
                "--client-ca-file", str(ca.crt),
            ],
            stdout=out, stderr=subprocess.STDOUT, text=True, env=child_env(),
        )  # fmt: skip
    try:
        wait_healthy(real_apiserver, proc, port, log)
        reader = tokens[READER]

        anonymous = get(port, "/")
        assert anonymous.code == 401, anonymous.body
        assert json.loads(anonymous.body)["reason"] == "Unauthorized"
        assert get(port, "/pods/a/shown-pod").code == 401
        assert get(port, "/", token="not-a-token-the-server-knows").code == 401

        overview = get(port, "/", token=reader)
        assert overview.code == 200, overview.body
        assert "/pods/a/shown-pod" in overview.body
        assert "hidden-pod" not in overview.body and "hidden-pending" not in overview.body

        for path in ("", "/attempts", f"/why-not?node={NODE}"):
            shown = get(port, f"/pods/a/shown-pod{path}", token=reader)
            assert shown.code == 200, (path, shown.body)
            hidden = get(port, f"/pods/b/hidden-pod{path}", token=reader)
            assert hidden.code == 403, (path, hidden.code)
            user = f"system:serviceaccount:default:{READER}"
            assert f"User &#34;{user}&#34; cannot get resource &#34;pods&#34;" in hidden.body
            assert "the namespace &#34;b&#34;" in hidden.body
        # 403, not 404, for a pod of a hidden namespace that the log does not have.
        assert get(port, "/pods/b/no-such-pod", token=reader).code == 403

        for query in ("pod=b/hidden-pod", "pod=hidden-pod", "pod=a/shown-pod", f"node={NODE}"):
            found = get(port, f"/search?{query}", token=reader)
            assert found.code == 200, (query, found.body)
            assert "/pods/b/" not in found.body  # the query is echoed in the form: no link
        assert "/pods/a/shown-pod" in get(port, "/search?pod=a/shown-pod", token=reader).body
        assert "/pods/a/shown-pod" in get(port, f"/search?node={NODE}", token=reader).body

        node = get(port, f"/nodes/{NODE}", token=reader)
        assert node.code == 200, node.body
        assert "shown-pod" in node.body and "hidden-pod" not in node.body

        assert get(port, "/what-if", token=reader).code == 403
        assert get(port, "/cluster-at/1", token=reader).code == 403

        stranger = tokens[STRANGER]
        assert get(port, "/pods/a/shown-pod", token=stranger).code == 403
        assert "shown-pod" not in get(port, "/", token=stranger).body

        certificate = issue(ca, tmp_path, "reader", CERT_USER)
        assert get(port, "/pods/a/shown-pod", cert=certificate).code == 200
        assert get(port, "/pods/b/hidden-pod", cert=certificate).code == 403
        masters = issue(ca, tmp_path, "admin", "root", "system:masters")
        admin = get(port, "/pods/b/hidden-pod", cert=masters)
        assert admin.code == 200, admin.body
    finally:
        terminate(proc, lambda: log.read_text(errors="replace"))


def test_the_pod_reviews_are_kept_per_user_and_namespace(
    real_apiserver: RealApiServer, tokens: dict[str, str], tmp_path: Path
) -> None:
    """An answer is kept per (user, namespace): once the API server denies what it
    allowed (the RoleBinding removed), a reviewer that asked before still says allowed
    until its answer expires; one that keeps nothing says denied."""
    from eventsched.cluster.kube.connection import ClientConnection, api_client
    from eventsched.cluster.kube.reviews import Reviews

    kubeconfig = real_apiserver.kubeconfig(tmp_path / "kubeconfig")
    api = api_client(ClientConnection(kubeconfig=str(kubeconfig)))
    kept, fresh = Reviews(api, cache_seconds=60.0), Reviews(api, cache_seconds=0.0)
    user = kept.user_of(tokens[READER])
    assert user is not None and user.name == f"system:serviceaccount:default:{READER}"
    assert kept.may_get_pods(user, "a").allowed
    assert not kept.may_get_pods(user, "b").allowed
    assert not kept.may_get_pods(user, "").allowed
    real_apiserver.call("DELETE", f"{RBAC}/namespaces/a/rolebindings/{ROLE}")
    real_apiserver.wait_for(lambda: not fresh.may_get_pods(user, "a").allowed, timeout=30)
    assert kept.may_get_pods(user, "a").allowed
