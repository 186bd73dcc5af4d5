"""eventsched/benchmarks/failover/: the figures from recorded times and scrapes (no control
plane), and, where the kube binaries are (EVENTSCHED_KUBE_BIN), one small kill-leader run
end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from eventsched.benchmarks.failover import (
    APPEND_FAILURES,
    MASTER,
    SCRAPE_EVERY,
    UNREACHABLE,
    Checks,
    Sample,
    bound_twice,
    changes,
    delta,
    failover,
    first_at,
    longest_gap,
    main,
    metric_values,
    postgres_down,
    without_decision,
)
from eventsched.benchmarks.failover.checks import (
    bound_before_decided,
    pending_that_fit,
    unexplained_conflicts,
)
from eventsched.benchmarks.failover.faultproxy import Fault, codes_for, named, status_body
from eventsched.benchmarks.failover.kill9 import STARTUP_WINDOW, moments
from eventsched.benchmarks.kube import _nodes, _pod
from eventsched.benchmarks.kubebinaries import kube_binaries
from eventsched.events import StoredEvent


def test_failover_is_measured_from_the_kill_and_from_the_old_leaders_last_bind() -> None:
    binds = {"a": 1.0, "b": 2.0, "c": 5.1, "d": 21.5, "e": 22.0}
    # c was posted by the old leader before the kill at 5.0 but seen just after it
    figures = failover(5.0, binds, by_new_leader={"d", "e"})
    assert (figures.last_before, figures.first_after) == (5.1, 21.5)
    assert figures.from_kill == 16.5
    assert round(figures.from_last_bind or 0, 6) == 16.4


def test_no_bind_by_the_new_leader_leaves_failover_unknown() -> None:
    figures = failover(5.0, {"a": 1.0}, by_new_leader=set())
    assert figures.last_before == 1.0
    assert figures.from_kill is None and figures.from_last_bind is None


def test_a_uid_with_two_bound_events_is_bound_twice() -> None:
    assert bound_twice(["u1", "u2", "u1", "u3", "u1"]) == {"u1": 3}
    assert bound_twice(["u1", "u2"]) == {}


def test_a_pod_bound_in_the_api_without_its_bound_event_is_reported() -> None:
    api = {"p1": "u1", "p2": "u2", "p3": "u3"}
    assert without_decision(api, ["u1", "u3", "u9"]) == ["p2"]


def test_checks_fail_on_any_problem() -> None:
    good = Checks(pods=2, bound_api=2, bound_events=2, chain_ok=True)
    assert good.ok
    assert not Checks(pods=2, bound_api=2, bound_events=3, bound_twice={"u": 2}, chain_ok=True).ok
    assert not Checks(pods=2, bound_api=1, bound_events=1, chain_ok=True).ok
    assert not Checks(pods=2, bound_api=2, bound_events=2, conflicts=["p"], chain_ok=True).ok
    for problem in ("open_reservations", "pending_that_fit", "bound_before_decided"):
        bad = Checks(pods=2, bound_api=2, bound_events=2, chain_ok=True)
        setattr(bad, problem, ["p"])
        assert not bad.ok, problem


def _event(position: int, kind: str, uid: str) -> StoredEvent:
    return StoredEvent(
        position=position,
        recorded_at=datetime(2026, 11, 28, tzinfo=UTC),
        kind=kind,
        scheduler="eventsched",
        instance="i",
        attempt=None,
        uid=uid,
        namespace="bench",
        name=f"pod-{uid}",
        node="node-00000",
        plugin=None,
        data={},
    )


def test_a_bound_event_needs_a_reserved_of_its_uid_before_it() -> None:
    events = [
        _event(1, "reserved", "a"),
        _event(2, "bound", "a"),
        _event(3, "bound", "b"),  # decided after it was bound
        _event(4, "reserved", "b"),
        _event(5, "reserved", "c"),
        _event(6, "bound", "d"),  # another uid's decision does not count
    ]
    assert bound_before_decided(events) == ["pod-b", "pod-d"]


def test_409s_the_fault_proxy_answered_are_not_conflicts() -> None:
    assert unexplained_conflicts(["p1", "p1", "p2"], ["p1"]) == ["p1", "p2"]
    assert unexplained_conflicts(["p1", "p1"], ["p1", "p1", "p3"]) == []


def test_a_pending_pod_that_fits_beside_the_bound_ones_is_reported() -> None:
    nodes = _nodes(1)  # 4 cpu, 16Gi, 110 pods
    bound = [_pod(f"b{i}", "x") for i in range(39)]  # 100m each: 3.9 cpu used
    for pod in bound:
        pod["spec"]["nodeName"] = "node-00000"
    small, big = _pod("small", "x"), _pod("big", "x")
    big["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "200m"
    assert pending_that_fit(nodes, [*bound, small, big]) == ["small"]


def test_kill_moments_are_seeded_sorted_and_within_the_run() -> None:
    first = moments(20, 2000, seed=7)
    assert first == moments(20, 2000, seed=7) != moments(20, 2000, seed=8)
    counts = [m.bound for m in first]
    assert counts == sorted(counts) and counts[0] >= 1 and counts[-1] < 2000
    assert all(0 <= m.after <= STARTUP_WINDOW for m in first)


def test_the_proxy_answers_each_request_with_faults_the_api_server_could_give() -> None:
    assert codes_for("POST", {}) == (409, 429, 500)
    assert codes_for("GET", {"watch": ["true"], "resourceVersion": ["12"]}) == (410, 429, 500)
    assert codes_for("GET", {"resourceVersion": ["12"]}) == (410, 429, 500)
    assert codes_for("GET", {"resourceVersion": ["0"]}) == (429, 500)
    expired = status_body(410, "/api/v1/pods")
    assert (expired["kind"], expired["code"], expired["reason"]) == ("Status", 410, "Expired")
    assert status_body(429, "/x")["details"] == {"retryAfterSeconds": 1}
    assert named("/api/v1/namespaces/bench/pods/p1/status") == 'pods "p1"'
    assert named("/api/v1/namespaces/bench/pods/p1/binding") == 'pods/binding "p1"'
    assert named("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l") == 'leases "l"'
    assert named("/api/v1/nodes/n1") == 'nodes "n1"'
    assert named("/api/v1/namespaces/bench/pods") == "pods"
    binding = Fault(0.0, "POST", "/api/v1/namespaces/bench/pods/pod-00001/binding", 409)
    assert binding.binding_of == "pod-00001"
    assert Fault(0.0, "GET", "/api/v1/namespaces/bench/pods/pod-00001", 500).binding_of is None


SCRAPE = """\
# HELP leader_election_master_status [ALPHA] Gauge of if the reporting system is master.
# TYPE leader_election_master_status gauge
leader_election_master_status{name="eventsched"} 1.0
# HELP eventsched_log_unreachable 1 while appends fail
# TYPE eventsched_log_unreachable gauge
eventsched_log_unreachable 0.0
# HELP eventsched_log_append_failures_total failed appends
# TYPE eventsched_log_append_failures_total counter
eventsched_log_append_failures_total 3.0
# HELP rest_client_requests_total [ALPHA] Number of HTTP requests
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="201",host="127.0.0.1:6443",method="POST"} 40.0
rest_client_requests_total{code="<error>",host="127.0.0.1:6443",method="GET"} 2.0
rest_client_requests_total{code="<error>",host="127.0.0.1:6443",method="POST"} 5.0
"""


def test_metric_values_keeps_the_followed_families_and_sums_requests_by_code() -> None:
    assert metric_values(SCRAPE) == {
        MASTER: 1.0,
        UNREACHABLE: 0.0,
        APPEND_FAILURES: 3.0,
        "rest:201": 40.0,
        "rest:<error>": 7.0,
    }


def _samples(*points: tuple[float, int, float]) -> list[Sample]:
    return [Sample(t, ready, {UNREACHABLE: v, APPEND_FAILURES: t}) for t, ready, v in points]


def test_an_outage_is_read_from_the_scrapes() -> None:
    samples = _samples((0, 200, 0), (1, 200, 0), (2, 503, 1), (3, 0, 1), (4, 503, 0), (5, 200, 0))
    readyz = changes(samples, "readyz")
    assert readyz == [(0, 200), (2, 503), (3, 0), (4, 503), (5, 200)]
    assert first_at(readyz, 200, after=2) == 5
    unreachable = changes(samples, UNREACHABLE)
    assert unreachable == [(0, 0), (2, 1), (4, 0)]
    assert first_at(unreachable, 1, after=0.5) == 2
    assert delta(samples, APPEND_FAILURES, 1.5, 4.5) == 3.0  # last seen before each moment


def test_a_counter_series_that_appears_counts_from_zero_and_a_failed_scrape_is_skipped() -> None:
    key = "rest:<error>"
    samples = [
        Sample(0, 200, {MASTER: 1.0}),
        Sample(1, 200, {MASTER: 1.0, key: 6.0}),  # the first errors make the series
        Sample(2, 0, {}),  # the replica did not answer
        Sample(3, 200, {MASTER: 1.0, key: 8.0}),
        Sample(4, 200, {MASTER: 1.0, key: 1.0}),  # a new process
    ]
    assert delta(samples, key, 0.5, 4) == 6.0 + 2.0 + 1.0


def test_longest_gap_between_binds() -> None:
    assert longest_gap([3.0, 1.0, 2.0, 9.5, 10.0]) == (3.0, 6.5)
    assert longest_gap([1.0]) == (0.0, 0.0)


PG_LOG = """\
2026-11-25 10:48:41.725 UTC [2221] LOG:  checkpoint starting: immediate force wait
2026-11-25 10:49:09.588 UTC [2220] LOG:  received fast shutdown request
2026-11-25 10:49:09.588 UTC [667] postgres@db FATAL:  terminating connection due to administrator command
2026-11-25 10:49:09.699 UTC [2220] LOG:  database system is shut down
2026-11-25 10:49:09.759 UTC [697] LOG:  database system is ready to accept connections
""".splitlines()


def test_the_restart_is_read_from_postgresqls_log_after_a_moment() -> None:
    since = 1795603740.0  # 2026-11-25 10:49:00 UTC
    down, up = postgres_down(PG_LOG, since)
    assert down is not None and up is not None
    assert round(down - since, 3) == 9.588 and round(up - down, 3) == 0.171
    assert postgres_down(PG_LOG, since + 60) == (None, None)  # nothing after that


def test_a_lease_too_short_or_a_share_out_of_range_is_refused_naming_the_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for argv, flag in (
        (["--lease-duration", "2"], "--lease-duration: at least 3"),
        (["--fault-share", "1.5"], "--fault-share: a share from 0 to 1"),
    ):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2
        assert flag in capsys.readouterr().err


#: Collected only where the binaries are, as tests/cli/test_bench_kube.py.
if kube_binaries() is not None:

    def test_kill_leader_end_to_end(postgres_server: str) -> None:
        """Two replicas on a real control plane; the leader is killed with pods pending.

        QPS 20, burst 1 (about 10 pods/s) so that pods are left for the new leader.
        """
        done = subprocess.run(
            [
                sys.executable, "-m", "eventsched.benchmarks.failover",
                "--scenario", "kill-leader", "--pods", "50", "--nodes", "5",
                "--qps", "20", "--burst", "1", "--server", postgres_server, "--json",
            ],
            capture_output=True, text=True, timeout=150,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        result = json.loads(done.stdout)
        assert result["ok"] and result["error"] is None
        checks = result["checks"]
        assert checks["bound_api"] == checks["bound_events"] == 50
        assert not checks["bound_twice"] and not checks["conflicts"]
        assert not checks["without_decision"] and checks["chain_ok"]
        figures = result["figures"]
        # the lease is taken after leaseDuration (15 s) without renewal, not before; the
        # scrape that sees it taken comes up to SCRAPE_EVERY after the first bind may
        lease = figures["kill -> lease taken (s)"]
        assert lease > 10
        assert figures["failover, kill -> first bind after (s)"] > lease - SCRAPE_EVERY - 0.05
        assert figures["failover, last bind before -> first bind after (s)"] > 10
