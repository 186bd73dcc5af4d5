"""The HTTP endpoints: probes answer like the Kubernetes components' and /metrics is Prometheus text."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry, Counter

from eventsched.cli.serve import Check, Endpoints, parse_address


@pytest.fixture
def served() -> Iterator[tuple[Endpoints, list[Check]]]:
    checks: list[Check] = [("event-log-schema", True, ""), ("informer-sync", False, "waiting")]
    registry = CollectorRegistry()
    Counter(
        "scheduler_schedule_attempts_total", "h", ["result", "profile"], registry=registry
    ).labels("scheduled", "eventsched").inc(3)
    endpoints = Endpoints("127.0.0.1:0", registry, lambda: checks)
    endpoints.start()
    yield endpoints, checks
    endpoints.stop()


def get(endpoints: Endpoints, path: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{endpoints.port}{path}", timeout=5) as r:
            return r.status, r.headers["Content-Type"], r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers["Content-Type"], err.read().decode()


def test_readyz_fails_naming_the_check_then_passes(served: tuple[Endpoints, list[Check]]) -> None:
    endpoints, checks = served
    code, _, body = get(endpoints, "/readyz")
    assert code == 503
    assert body.splitlines() == [
        "[+]event-log-schema ok",
        "[-]informer-sync failed: waiting",
        "readyz check failed",
    ]
    checks[1] = ("informer-sync", True, "")
    assert get(endpoints, "/readyz")[::2] == (200, "ok\n")
    assert get(endpoints, "/readyz?verbose")[2].endswith("readyz check passed\n")


def test_healthz_and_metrics(served: tuple[Endpoints, list[Check]]) -> None:
    endpoints, _ = served
    assert get(endpoints, "/healthz")[::2] == (200, "ok\n")
    code, content_type, body = get(endpoints, "/metrics")
    assert code == 200
    assert content_type.startswith("text/plain; version=")
    assert 'scheduler_schedule_attempts_total{profile="eventsched",result="scheduled"} 3.0' in body
    assert get(endpoints, "/nope")[0] == 404


@pytest.mark.parametrize(
    ("address", "expected"),
    [(":10259", ("0.0.0.0", 10259)), ("127.0.0.1:80", ("127.0.0.1", 80)), ("[::1]:9", ("::1", 9))],
)
def test_addresses(address: str, expected: tuple[str, int]) -> None:
    assert parse_address(address) == expected


@pytest.mark.parametrize("address", ["10259", "host:", "host:99999", "host:port"])
def test_bad_addresses_name_the_flag(address: str) -> None:
    with pytest.raises(ValueError, match="--http-address"):
        parse_address(address)
