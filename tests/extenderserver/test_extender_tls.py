"""`eventsched extender` over HTTPS: the verbs only to a client certificate the client CA
signed (kube-scheduler's, from its extenders[].tlsConfig), never to a request without
one, whatever bearer token it carries; a certificate another authority signed fails the
handshake. /metrics and the probes go through run's guard (a reviewer stands in for the
API server here; the real one calls the extender in
tests/differential/extenderserver/test_extender_tls_real.py)."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from eventsched._httpguard import Guard, UserInfo
from eventsched._httpserver import Security
from eventsched.cli.secureserving import load_client_ca, server_context
from eventsched.events import EventStore
from tests.extenderserver.helpers import (
    Client,
    Running,
    node_manifest,
    pod_manifest,
    profile_config,
    running_extender,
)
from tests.serving.certs import Pair, issue, make_ca
from tests.serving.reviewer import FakeReviewer

NODES = [node_manifest("node-a"), node_manifest("node-b")]


@dataclass
class Served:
    ext: Running
    reviewer: FakeReviewer
    ca: Pair
    tmp: Path

    def client(self, cert: Pair | None = None, token: str = "") -> Client:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # the self-signed serving certificate
        if cert is not None:
            context.load_cert_chain(cert.crt, cert.key)
        return Client(self.ext.server.port, context, token)

    def requests(self, verb: str, code: str) -> float:
        value = self.ext.server.registry.get_sample_value(
            "eventsched_extender_requests_total", {"verb": verb, "code": code}
        )
        return value or 0.0


@pytest.fixture
def served(store: EventStore, tmp_path: Path) -> Iterator[Served]:
    reviewer = FakeReviewer(
        # A token the API server knows, whose user may even post to /filter: the verbs
        # still take no token.
        {"prom-token": UserInfo("prometheus"), "admin-token": UserInfo("admin")},
        {("prometheus", "get", "/metrics"), ("admin", "post", "/filter")},
    )
    ca = make_ca(tmp_path, "client-ca")
    context = server_context(None, None, "")
    load_client_ca(context, str(ca.crt))
    security = Security(context, Guard(reviewer))
    with running_extender(store, profile_config(), NODES, security=security) as ext:
        yield Served(ext, reviewer, ca, tmp_path)


def _verbs(store: EventStore, uid: str) -> list[str]:
    return [
        e.data["extender"]["verb"]
        for e in store.read()
        if e.kind == "attempt_started" and e.uid == uid and "extender" in e.data
    ]


def test_kube_schedulers_client_certificate_is_served(served: Served, store: EventStore) -> None:
    kube_scheduler = issue(served.ca, served.tmp, "ks", "system:kube-scheduler")
    pod = pod_manifest("web")
    answer = served.client(kube_scheduler).filter(pod, NODES)
    assert answer.status == 200
    assert answer.body["NodeNames"] == ["node-a", "node-b"]
    assert _verbs(store, "uid-web") == ["filter"]


def test_no_client_certificate_gets_401_and_the_verb_is_not_served(
    served: Served, store: EventStore
) -> None:
    pod = pod_manifest("web")
    for client in (served.ext.client, served.client(token="admin-token")):
        answer = client.filter(pod, NODES)
        assert answer.status == 401
        assert answer.body["reason"] == "Unauthorized"
    assert served.requests("filter", "200") == 0.0
    assert served.requests("filter", "401") == 2.0
    assert served.reviewer.asked == []  # a token is not even reviewed for a verb
    # The server still serves kube-scheduler's next call, and the refused ones left no trace.
    kube_scheduler = issue(served.ca, served.tmp, "ks", "system:kube-scheduler")
    assert served.client(kube_scheduler).filter(pod_manifest("db"), NODES).status == 200
    assert _verbs(store, "uid-web") == []
    assert _verbs(store, "uid-db") == ["filter"]


def test_a_client_certificate_of_another_authority_fails_the_handshake(
    served: Served, store: EventStore
) -> None:
    other = make_ca(served.tmp, "other")
    forged = issue(other, served.tmp, "forged", "system:kube-scheduler")
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        served.client(forged).bind(pod_manifest("web"), "node-a")
    assert _verbs(store, "uid-web") == []
    assert served.requests("bind", "200") == 0.0
    assert served.ext.cluster.get_pod("default/web") is None


def test_metrics_and_the_probes_go_through_the_guard(served: Served) -> None:
    anonymous = served.ext.client
    assert anonymous.get("/healthz") == (200, "ok")
    assert anonymous.get("/readyz")[0] == 200
    assert anonymous.get("/metrics")[0] == 401
    assert served.client(token="prom-token").get("/metrics")[0] == 200
    assert served.client(token="admin-token").get("/metrics")[0] == 403
    # kube-scheduler's certificate is its CN for the guard: the reviewer is asked.
    kube_scheduler = issue(served.ca, served.tmp, "ks", "system:kube-scheduler")
    assert served.client(kube_scheduler).get("/metrics")[0] == 403
    assert ("system:kube-scheduler", "get", "/metrics") in served.reviewer.asked


def test_always_allowed_paths_do_not_open_the_verbs(store: EventStore, tmp_path: Path) -> None:
    ca = make_ca(tmp_path, "client-ca")
    context = server_context(None, None, "")
    load_client_ca(context, str(ca.crt))
    everything = Guard(FakeReviewer({}, set()), always_allow_paths=("/*",))
    with running_extender(
        store, profile_config(), NODES, security=Security(context, everything)
    ) as ext:
        assert ext.client.get("/metrics")[0] == 200  # the guard lets anyone read
        assert ext.client.filter(pod_manifest("web"), NODES).status == 401
    assert _verbs(store, "uid-web") == []
