"""`eventsched bench --kube`: eventsched and kube-scheduler on a real control plane.

Runs when kube-apiserver (and etcd) are found through $EVENTSCHED_KUBE_BIN; otherwise the
one-line exit-2 message is checked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import eventsched.benchmarks.kubebinaries
import eventsched.benchmarks.kuberesults


def _bench(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eventsched.cli.main", "bench", "--kube", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def _binaries() -> object | None:
    found: object | None = eventsched.benchmarks.kubebinaries.kube_binaries()
    return found


#: Collected only where the binaries are (CI has them): nothing is skipped elsewhere.
_BINARIES = _binaries()

if _BINARIES is not None:

    def test_bench_kube_binds_every_pod_with_each_scheduler(postgres_server: str) -> None:
        """eventsched's log on PostgreSQL, its backends' CPU counted (the SQLite path is run
        by tests/cli/test_bench_kube_workload.py)."""
        binaries = _BINARIES
        env = {k: v for k, v in os.environ.items() if k != "EVENTSCHED_DATABASE_URL"}
        done = _bench("--nodes", "5", "--pods", "20", "--json", "--db", postgres_server, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads(done.stdout)
        schedulers = [run["scheduler"] for run in result["runs"]]
        expected = ["eventsched"]
        if getattr(binaries, "scheduler", None) is not None:
            expected.append("kube-scheduler")
        assert schedulers == expected
        for run in result["runs"]:
            assert run["error"] is None
            assert run["bound"] == run["pods"] == 20
            assert run["nodes"] == 5
            assert run["pods_per_second"] > 0
            assert run["from_start_seconds"] >= run["seconds"] > 0
            assert run["scheduler_cpu_seconds"] > 0
            assert run["cpu_ms_per_pod"] > 0
            # Its start, read when the first pod was seen bound, and the rest per pod after it.
            assert 0 < run["first_bind_cpu_seconds"] <= run["scheduler_cpu_seconds"]
            assert run["after_first_bind_cpu_ms_per_pod"] == pytest.approx(
                1000 * (run["scheduler_cpu_seconds"] - run["first_bind_cpu_seconds"]) / 19
            )
            assert run["apiserver_cpu_seconds"] > 0
            assert run["etcd_cpu_seconds"] >= 0
        ours = result["runs"][0]
        assert ours["database"] == "PostgreSQL"
        assert ours["events"] > 20  # every decision logged
        assert ours["postgres_cpu_seconds"] >= 0  # 0 when the server runs elsewhere
        # eventsched's CPU with its log: its process's and its PostgreSQL backends'.
        database_ms = 1000 * (ours["postgres_cpu_seconds"] or 0) / ours["bound"]
        assert ours["log_cpu_ms_per_pod"] == pytest.approx(ours["cpu_ms_per_pod"] + database_ms)
        if len(expected) == 2:
            theirs = result["runs"][1]
            assert theirs["log_cpu_ms_per_pod"] == theirs["cpu_ms_per_pod"]
            assert result["ratios"]["pods_per_second"] > 0
            assert result["ratios"]["cpu_ms_per_pod"] > 0
            assert result["ratios"]["log_cpu_ms_per_pod"] == pytest.approx(
                ours["log_cpu_ms_per_pod"] / theirs["cpu_ms_per_pod"]
            )
            assert result["ratios"]["first_bind_cpu_seconds"] == pytest.approx(
                ours["first_bind_cpu_seconds"] / theirs["first_bind_cpu_seconds"]
            )


def test_bench_kube_without_binaries_says_where_to_put_them(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "EVENTSCHED_KUBE_BIN"}
    done = _bench("--kube-bin", str(tmp_path / "missing"), env=env)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("eventsched: error: ")
    assert "EVENTSCHED_KUBE_BIN" in lines[0] and "--kube-bin" in lines[0]
    assert "etcd-server" in lines[0]


if _BINARIES is not None:

    def test_restart_benchmark_measures_the_first_bind_after_a_restart() -> None:
        """eventsched/benchmarks/kube_restart.py (the restart figures in docs/performance.md),
        small: the late pods are bound by the restarted eventsched, twice, and what each
        restart appended before that bind is counted by kind: only the late pod is observed,
        the nodes and the six pods placed before are as the log last recorded them."""
        from eventsched.benchmarks.kube_restart import measure

        result = measure(_BINARIES, "eventsched", nodes=4, pods=6, late=1, restarts=2)  # type: ignore[arg-type]
        assert result.error is None, result.error
        assert result.first_run_seconds > 0 and result.restart_to_first_bind_seconds > 0
        assert len(result.restarts) == 2 and all(t > 0 for t in result.restarts)
        assert len(result.restart_cpu_seconds) == 2
        assert all(c > 0 for c in result.restart_cpu_seconds)
        assert "node_observed" not in result.relogged
        assert result.relogged["pod_observed"] == 1  # the late one
        assert result.relogged["maintenance"] == 2  # scheduler_started, listed
        assert result.relogged["attempt_started"] == 1
        assert result.log_events is not None and result.log_events > sum(result.relogged.values())

    def test_bench_kube_restarts_times_each_schedulers_restart_from_the_command_line(
        tmp_path: Path,
    ) -> None:
        """The restart at scale (eventsched/benchmarks/kube_restart.py) from an install:
        `bench --kube --restarts K`, as a user runs it, from a directory that is no checkout."""
        env = {k: v for k, v in os.environ.items() if k != "EVENTSCHED_DATABASE_URL"}
        done = subprocess.run(
            [sys.executable, "-m", "eventsched.cli.main", "bench", "--kube", "--restarts", "2",
             "--nodes", "3", "--pods", "4", "--late", "1", "--json"],
            capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads(done.stdout)
        assert (result["nodes"], result["pods"], result["late"]) == (3, 4, 1)
        expected = ["eventsched"]
        if getattr(_BINARIES, "scheduler", None) is not None:
            expected.append("kube-scheduler")
        assert [run["scheduler"] for run in result["runs"]] == expected
        for run in result["runs"]:
            assert run["error"] is None
            assert len(run["restarts"]) == len(run["restart_cpu_seconds"]) == 2
            assert all(t > 0 for t in run["restarts"] + run["restart_cpu_seconds"])
            assert run["restart_to_first_bind_seconds"] == run["restarts"][0]
        ours = result["runs"][0]
        assert ours["relogged"]["pod_observed"] == 1  # only the late pod is observed again
        assert "node_observed" not in ours["relogged"]


def test_bench_restarts_refuses_what_it_cannot_do_in_one_line() -> None:
    for args, says in (
        (["--restarts", "2", "--rounds", "2"], "not with --rounds"),
        (["--restarts", "0"], "--restarts"),
        (["--leader-elect"], "add --kube --restarts K"),
    ):
        done = _bench(*args)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert says in lines[-1], lines
        assert "Traceback" not in done.stderr
    without_kube = subprocess.run(
        [sys.executable, "-m", "eventsched.cli.main", "bench", "--restarts", "1"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert without_kube.returncode == 2
    assert without_kube.stderr.strip() == (
        "eventsched: error: --restarts restarts a scheduler on a real control plane: add --kube"
    )


def test_the_summary_splits_each_schedulers_start_from_its_cpu_per_pod_after_it() -> None:
    results = eventsched.benchmarks.kuberesults

    def run(scheduler: str, cpu: float, first_bind_cpu: float | None) -> object:
        return results.RunResult(
            scheduler=scheduler, round=1, nodes=500, pods=3001, bound=3001, seconds=4.0,
            pods_per_second=750.0, from_start_seconds=5.0, scheduler_cpu_seconds=cpu,
            cpu_ms_per_pod=1000 * cpu / 3001, apiserver_cpu_seconds=3.0, etcd_cpu_seconds=1.0,
            first_bind_cpu_seconds=first_bind_cpu,
        )  # fmt: skip

    ours, theirs = run("eventsched", 4.0, 0.8), run("kube-scheduler", 4.3, 0.4)
    assert ours.after_first_bind_cpu_ms_per_pod == pytest.approx(3.2 / 3000 * 1000)
    assert "0.80 s to the first bind, 1.07 ms/pod after it" in ours.line()
    both = results.KubeBenchResult(500, 3001, 5000, 5000, 1, "SQLite", [ours, theirs])
    assert both.summary().endswith(
        "; CPU to the first bind 0.80 vs 0.40 s, the process's own per pod after it 1.07 vs 1.30 ms"
    )
    assert both.ratios()["first_bind_cpu_seconds"] == pytest.approx(2.0)
    # A run whose first bind was not seen (it failed first) has no split, and the summary
    # leaves it out rather than averaging what is not there.
    unseen = results.KubeBenchResult(
        500, 3001, 5000, 5000, 1, "SQLite", [ours, run("kube-scheduler", 4.3, None)]
    )
    assert "first bind" not in unseen.summary()
    assert unseen.ratios()["first_bind_cpu_seconds"] is None
