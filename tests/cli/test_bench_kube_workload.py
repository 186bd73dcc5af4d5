"""`eventsched bench --kube --workload NAME`: scheduler_perf workloads on a real control
plane, tiny. Collected where kube-apiserver (and etcd) are found through
$EVENTSCHED_KUBE_BIN; the refusals are checked everywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import eventsched.benchmarks.kubebinaries


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "EVENTSCHED_DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "-m", "eventsched.cli.main", "bench", "--kube", "--workload", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


_BINARIES = eventsched.benchmarks.kubebinaries.kube_binaries()
#: The schedulers each round runs: kube-scheduler too where its binary is.
_SCHEDULERS = ["eventsched"] + (
    ["kube-scheduler"] if _BINARIES is not None and _BINARIES.scheduler else []
)

if _BINARIES is not None:

    def test_preemption_basic_on_a_real_api_server_binds_every_preemptor() -> None:
        """PreemptionBasic at 5 nodes: 20 init pods of priority 0 fill the nodes (placed by
        each scheduler, not measured), then 5 pods of `spec.priority: 10` (accepted: the
        API server runs without the Priority admission plugin, as scheduler_perf's) each
        preempt three and are bound; victims of grace period 0 go at once."""
        done = _bench("PreemptionBasic", "--nodes", "5", "--pods", "5", "--json")
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads(done.stdout)
        assert result["workload"] == "PreemptionBasic"
        assert (result["nodes"], result["pods"]) == (5, 5)
        assert [run["scheduler"] for run in result["runs"]] == _SCHEDULERS
        for run in result["runs"]:
            assert run["error"] is None
            assert run["bound"] == run["pods"] == 5
            assert run["peak_rss_mb"] > 0
            assert run["scheduler_cpu_seconds"] > 0
        ours = result["runs"][0]
        assert ours["database"] == "SQLite"  # a fresh file per run without --db
        assert ours["events"] > 25  # the init pods' decisions and the measured pods' logged

    def test_anti_affinity_init_pods_are_placed_before_the_measured_run(
        postgres_server: str,
    ) -> None:
        """SchedulingPodAntiAffinity at 6 nodes, 2 measured (1 init pod: upstream's ratio),
        eventsched's log on PostgreSQL (a fresh schema per run): a line per run and the
        summary, as a user reads them."""
        args = ("--nodes", "6", "--pods", "2", "--db", postgres_server, "--scheduler-cpus", "0")
        done = _bench("SchedulingPodAntiAffinity", *args)
        assert done.returncode == 0, done.stderr[-3000:]
        *runs, summary = done.stdout.strip().splitlines()
        assert len(runs) == len(_SCHEDULERS)
        assert all(" 2/2 pods bound on 6 nodes, " in line for line in runs), runs
        assert all("; peak RSS " in line for line in runs), runs
        assert " events logged on PostgreSQL" in runs[0]
        # Each scheduler ran on CPU 0 only, as the kernel said at the end of its run.
        assert all("; on CPU(s) 0 only" in line for line in runs), runs
        assert summary.startswith("summary (SchedulingPodAntiAffinity, 6 nodes x 2 pods")


def test_a_workload_the_control_plane_cannot_run_is_refused_in_one_line() -> None:
    cpus = ",".join(map(str, sorted(os.sched_getaffinity(0))))
    for args, says in (
        (
            ["SchedulingBasic", "--scheduler-cpus", "4096"],
            f"--scheduler-cpus: '4096' is not among the CPUs this machine lets us use ({cpus})",
        ),
        (["SchedulingBasic", "--scheduler-cpus", "a"], "must be CPU numbers such as 0 or 0,1"),
        (["PreemptionAsync"], "its churn op runs on a simulated cluster only (drop --kube)"),
        (["SchedulingBasics"], "unknown workload 'SchedulingBasics'; one of: SchedulingBasic"),
    ):
        done = _bench(*args, "--kube-bin", "/nonexistent")
        assert done.returncode == 2
        assert "Traceback" not in done.stderr
        assert says in done.stderr.strip().splitlines()[-1]


def test_list_names_each_workload_at_the_counts_a_kube_run_takes() -> None:
    done = _bench("list", "--kube-bin", "/nonexistent")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(
        "SchedulingBasic: 500 nodes, 500 init + 1000 measured pods (500Nodes)"
    )
    larger = _bench("list", "--nodes", "5000", "--kube-bin", "/nonexistent").stdout.splitlines()
    assert larger[0].startswith(
        "SchedulingBasic: 5000 nodes, 1000 init + 10000 measured pods (5000Nodes_10000Pods; "
        "upstream threshold 680 pods/s)"
    )
    assert [line.split(":")[0] for line in larger] == [line.split(":")[0] for line in lines]
