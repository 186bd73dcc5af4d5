"""The chaos scenarios of eventsched/benchmarks/failover/ in a short variant each, end to end
on a real control plane (collected only where the kube binaries are): kill -9 three times,
and API faults for five seconds. A module of their own, so that pytest-xdist runs them
beside test_failover.py's kill-leader run rather than after it."""

from __future__ import annotations

import json
import subprocess
import sys

from eventsched.benchmarks.kubebinaries import kube_binaries

if kube_binaries() is not None:

    def _failover(*args: str, server: str) -> dict[str, object]:
        """The benchmark's JSON; past the timeout it gets SIGTERM, which stops its
        control plane and drops its database (SIGKILL would leave them running)."""
        proc = subprocess.Popen(
            [sys.executable, "-m", "eventsched.benchmarks.failover", "--json", "--server", server,
             "--nodes", "5", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            out, err = proc.communicate(timeout=150)
        except subprocess.TimeoutExpired:
            proc.terminate()
            out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, out[-3000:] + err[-3000:]
        result: dict[str, object] = json.loads(out)
        assert result["ok"] and result["error"] is None
        return result

    def _all_bound_once(checks: dict[str, object], pods: int) -> None:
        assert checks["bound_api"] == checks["bound_events"] == pods
        assert not checks["bound_twice"] and not checks["conflicts"]
        assert not checks["without_decision"] and not checks["bound_before_decided"]
        assert not checks["open_reservations"] and not checks["pending_that_fit"]
        assert checks["chain_ok"]

    def test_kill_9_three_times_end_to_end(postgres_server: str) -> None:
        """One replica killed three times and started again on its log (a 3 s lease, so
        that each successor takes it quickly); binding spread out by QPS 20, burst 1."""
        result = _failover(
            "--scenario", "kill-9", "--pods", "60", "--kills", "3", "--lease-duration", "3",
            "--qps", "20", "--burst", "1", server=postgres_server,
        )  # fmt: skip
        _all_bound_once(result["checks"], 60)  # type: ignore[arg-type]
        figures = result["figures"]
        assert isinstance(figures, dict) and figures["kills"] == 3
        # each kill is followed by a bind of a later process's own
        waits = figures["kill -> first bind by a later process, median / max (s)"]
        assert "inf" not in waits and float(waits.split(" / ")[1]) > 0

    def test_api_faults_for_five_seconds_end_to_end(postgres_server: str) -> None:
        """Half the requests faulted for 5 s: faults of every kind were answered, the
        replica saw them, and every pod is bound once all the same."""
        result = _failover(
            "--scenario", "api-faults", "--pods", "60", "--fault-seconds", "5",
            "--fault-share", "0.5", "--rate", "20", server=postgres_server,
        )  # fmt: skip
        _all_bound_once(result["checks"], 60)  # type: ignore[arg-type]
        figures = result["figures"]
        assert isinstance(figures, dict)
        assert figures["rest_client_requests_total{code='500'} during"] > 0
        assert sum(figures["faults by code"].values()) > 10
