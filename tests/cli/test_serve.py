"""The HTTP endpoints: probes answer like the Kubernetes components' and /metrics is Prometheus text."""

from __future__ import annotations

import logging
import socket
import struct
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
import structlog
from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import GaugeMetricFamily
from structlog.testing import capture_logs

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


class _Large:
    """A /metrics answer far larger than the socket buffers, so writing it waits on the client."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("big", "h", labels=["pad"])
        for i in range(400):
            family.add_metric([f"{i}-" + "x" * 50_000], 1.0)
        yield family


@pytest.fixture
def debug_lines() -> Iterator[None]:
    """Debug lines reach capture_logs whatever level an earlier `eventsched` call set."""
    config = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    yield
    structlog.configure(**config)


def test_a_scrape_that_hangs_up_is_one_debug_line_not_a_traceback(
    capsys: pytest.CaptureFixture[str], debug_lines: None
) -> None:
    registry = CollectorRegistry()
    registry.register(_Large())
    endpoints = Endpoints("127.0.0.1:0", registry, lambda: [])
    endpoints.start()
    try:
        with capture_logs() as logs:
            client = socket.create_connection(("127.0.0.1", endpoints.port), timeout=5)
            client.sendall(b"GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n")
            assert client.recv(64).startswith(b"HTTP/1.0 200")  # the answer has begun
            # Hang up with a reset, as a scraper that timed out does.
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.close()
            deadline = time.monotonic() + 10
            while not any(e["event"].startswith("client went away") for e in logs):
                assert time.monotonic() < deadline, logs
                time.sleep(0.01)
        assert get(endpoints, "/healthz")[::2] == (200, "ok\n")  # still serving
    finally:
        endpoints.stop()
    assert "Traceback" not in capsys.readouterr().err
