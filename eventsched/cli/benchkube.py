"""`eventsched bench --kube` and `bench --kube --workload NAME`: rounds of eventsched and
kube-scheduler on fresh control planes, a progress bar per run, a line per run and the
summary of both."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eventsched.cli.progress import progress_bar
from eventsched.cli.signals import sigterm_unwinds

if TYPE_CHECKING:
    from eventsched.benchmarks.kubebinaries import KubeBinaries
    from eventsched.benchmarks.kuberesults import KubeBenchResult, RunResult
    from eventsched.benchmarks.workloads import Workload

#: Called with each run's result as it ends.
OnRun = Callable[["RunResult"], None]
#: Given a run's description, returns the callback given the pods bound so far.
Progress = Callable[[str], Callable[[int], None]]


@dataclass(frozen=True, slots=True)
class KubeRuns:
    """The rounds to run: `pods` measured per run (a progress bar's total), and the runner."""

    pods: int
    run: Callable[[OnRun, Progress], KubeBenchResult]


def plain_runs(args: argparse.Namespace, binaries: KubeBinaries, url: str | None) -> KubeRuns:
    """`bench --kube`: --nodes ready nodes (default 500), --pods pending pods (default 3000)."""
    from eventsched.benchmarks import kube

    nodes = 500 if args.nodes is None else args.nodes
    pods = 3000 if args.pods is None else args.pods

    def run(on_run: OnRun, progress: Progress) -> KubeBenchResult:
        return kube.run(
            binaries, nodes, pods,
            qps=args.qps, burst=args.burst, db_url=url, rounds=args.rounds,
            timeout=args.timeout, on_run=on_run, progress=progress,
            scheduler_cpus=args.scheduler_cpus,
        )  # fmt: skip

    return KubeRuns(pods, run)


def kube_workload(name: str) -> Workload | str:
    """The workload `bench --kube --workload NAME` runs; the error line instead when it is
    unknown or cannot run on a control plane."""
    from eventsched.benchmarks import workloads

    workload = workloads.lookup(name)
    if workload is None:
        return f"unknown workload {name!r}; one of: {', '.join(workloads.names())}"
    if workload.churn is not None:
        return (
            f"--kube --workload {workload.name}: its churn op runs on a simulated cluster "
            "only (drop --kube)"
        )
    return workload


def workload_runs(
    args: argparse.Namespace, binaries: KubeBinaries, url: str | None, workload: Workload
) -> KubeRuns:
    """`bench --kube --workload NAME`: upstream's counts at --nodes nodes (500 by default:
    the `500Nodes` variant; 5000: the variant the workload's threshold is for), --pods
    measured pods if given."""
    from eventsched.benchmarks import kube_workload, workloads

    size = workloads.size(workload, 500 if args.nodes is None else args.nodes, args.pods)

    def run(on_run: OnRun, progress: Progress) -> KubeBenchResult:
        return kube_workload.run(
            binaries, workload, size,
            qps=args.qps, burst=args.burst, db_url=url, rounds=args.rounds,
            timeout=args.timeout, on_run=on_run, progress=progress,
            scheduler_cpus=args.scheduler_cpus,
        )  # fmt: skip

    return KubeRuns(size.measured_pods, run)


def report(args: argparse.Namespace, runs: KubeRuns) -> int:
    """Run them with a progress bar per run and a line per run (unless --json), then print
    the summary (or the JSON of every run); exit 1 when a run did not bind every pod."""

    def on_run(result: RunResult) -> None:
        if not args.json:
            print(result.line(), flush=True)

    bars: list[Any] = []

    def progress(description: str) -> Callable[[int], None]:
        for bar in bars:
            bar.close()
        bar = progress_bar(runs.pods, description)
        bars[:] = [bar]
        return lambda bound: bar.update(bound - bar.n)

    try:
        with sigterm_unwinds():
            result = runs.run(on_run, progress)
    finally:
        for bar in bars:
            bar.close()
    print(json.dumps(result.to_dict()) if args.json else result.summary(), file=sys.stdout)
    return 0 if result.ok else 1
