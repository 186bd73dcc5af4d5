"""/metrics and the probes over HTTPS behind kube-scheduler's delegated authentication and
authorization, with a reviewer standing in for the API server (the real one:
tests/kube/test_secure_serving_real.py): 401 without credentials or with a token the
reviewer does not know, 403 with upstream's Status body when it says no, the
always-allowed paths open, client certificates of the client CA accepted as their CN."""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Counter

from eventsched._httpguard import Guard, UserInfo
from eventsched._httpserver import Security
from eventsched.cli.secureserving import load_client_ca, server_context
from eventsched.cli.serve import Endpoints
from tests.serving.certs import Pair, issue, make_ca
from tests.serving.httpsclient import get
from tests.serving.reviewer import FakeReviewer


@dataclass
class Served:
    port: int
    reviewer: FakeReviewer
    ca: Pair
    tmp: Path


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    registry = CollectorRegistry()
    Counter("scheduler_schedule_attempts_total", "h", registry=registry).inc()
    reviewer = FakeReviewer(
        {"prom-token": UserInfo("prometheus"), "nobody-token": UserInfo("nobody")},
        {("prometheus", "get", "/metrics")},
    )
    ca = make_ca(tmp_path)
    context = server_context(None, None, "")
    load_client_ca(context, str(ca.crt))
    endpoints = Endpoints(
        "127.0.0.1:0",
        registry,
        lambda: (("informer-sync", True, ""),),
        security=Security(context, Guard(reviewer)),
    )
    endpoints.start()
    try:
        yield Served(endpoints.port, reviewer, ca, tmp_path)
    finally:
        endpoints.stop()


def test_anonymous_gets_401_but_the_probes(served: Served) -> None:
    reply = get(served.port, "/metrics")
    assert reply.code == 401
    assert reply.body == (
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        '"message":"Unauthorized","reason":"Unauthorized","code":401}\n'
    )
    for path in ("/healthz", "/readyz", "/livez"):
        assert (get(served.port, path).code, get(served.port, path).body) == (200, "ok\n")
    assert served.reviewer.asked == []


def test_a_token_allowed_gets_metrics_and_one_denied_gets_403(served: Served) -> None:
    reply = get(served.port, "/metrics", token="prom-token")
    assert reply.code == 200 and "scheduler_schedule_attempts_total 1.0" in reply.body
    reply = get(served.port, "/metrics", token="nobody-token")
    assert reply.code == 403
    assert json.loads(reply.body) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'forbidden: User "nobody" cannot get path "/metrics"',
        "reason": "Forbidden",
        "details": {},
        "code": 403,
    }
    assert served.reviewer.asked == [
        ("prometheus", "get", "/metrics"),
        ("nobody", "get", "/metrics"),
    ]


def test_a_token_the_api_server_does_not_know_gets_401_even_on_a_probe(served: Served) -> None:
    assert get(served.port, "/healthz", token="stolen").code == 401
    assert get(served.port, "/metrics", token="stolen").code == 401


def test_an_api_server_that_cannot_review_means_401_or_500(served: Served) -> None:
    prometheus = issue(served.ca, served.tmp, "prom", "prometheus")
    served.reviewer.down = True
    assert get(served.port, "/metrics", token="prom-token").code == 401
    reply = get(served.port, "/metrics", cert=prometheus)  # authenticated, not authorized
    assert reply.code == 500 and reply.body.startswith('Internal Server Error: "/metrics": ')
    assert get(served.port, "/healthz").code == 200


def test_client_certificates_of_the_client_ca_are_their_cn(served: Served) -> None:
    prometheus = issue(served.ca, served.tmp, "prom", "prometheus")
    assert get(served.port, "/metrics", cert=prometheus).code == 200
    stranger = issue(served.ca, served.tmp, "stranger", "stranger")
    assert get(served.port, "/metrics", cert=stranger).code == 403
    master = issue(served.ca, served.tmp, "admin", "admin", "system:masters")
    assert get(served.port, "/metrics", cert=master).code == 200
    assert ("admin", "get", "/metrics") not in served.reviewer.asked


def test_a_certificate_another_authority_signed_gets_no_answer(served: Served) -> None:
    other = make_ca(served.tmp, "other")
    forged = issue(other, served.tmp, "forged", "prometheus")
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        get(served.port, "/metrics", cert=forged)
    assert get(served.port, "/healthz").code == 200  # the server still answers the next
