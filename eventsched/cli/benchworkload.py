"""`eventsched bench --workload NAME` on a simulated cluster (`--workload list` names them);
with --kube, cli/benchkube.py runs them on a real control plane."""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
from collections.abc import Sequence
from typing import TYPE_CHECKING

from eventsched.cli.bench import refuse, replay_log
from eventsched.cli.database import resolve_url
from eventsched.cli.progress import progress_bar

if TYPE_CHECKING:
    from eventsched.benchmarks.workloads import Size, Workload


def run_workload(args: argparse.Namespace) -> int:
    from eventsched.benchmarks import workload_bench, workloads

    if args.workload == "list":
        # With --kube the sizes are those a run would take: 500 nodes unless --nodes says.
        nodes = 500 if args.kube and args.nodes is None else args.nodes
        print(_workload_list(workloads.WORKLOADS, nodes, args.pods, args.json))
        return 0
    workload = workloads.lookup(args.workload)
    if workload is None:
        return refuse(f"unknown workload {args.workload!r}; one of: {', '.join(workloads.names())}")
    if args.restart_events:
        return refuse("--workload and --restart-events are separate benchmarks: give one of them")
    measured = workloads.size(workload, args.nodes, args.pods).measured_pods
    with tempfile.TemporaryDirectory(prefix="eventsched-bench-") as tmp:
        url = resolve_url(args.db) if args.db else f"sqlite:///{tmp}/bench.db"
        with progress_bar(measured, workload.name) as bar:
            result = workload_bench.run(
                workload.name,
                url,
                nodes=args.nodes,
                pods=args.pods,
                on_progress=lambda done: bar.update(done - bar.n),  # redraws every 0.1 s at most
            )
        if args.replay:
            result.replay = replay_log(url)
    print(json.dumps(result.to_dict()) if args.json else result.line())
    return 0 if result.replay is None or result.replay.ok else 1


def _workload_list(
    workloads: Sequence[Workload], nodes: int | None, pods: int | None, as_json: bool
) -> str:
    """Each workload at the counts `--nodes` and `--pods` give it (upstream's when None)."""
    from eventsched.benchmarks.workloads import size

    sized = [(w, size(w, nodes, pods)) for w in workloads]
    if as_json:
        return json.dumps(
            [dataclasses.asdict(w) | {"size": dataclasses.asdict(s)} for w, s in sized]
        )

    def threshold(w: Workload) -> str:
        return (
            "no upstream threshold"
            if w.threshold is None
            else f"upstream threshold {w.threshold:g} pods/s"
        )

    def variant(w: Workload, s: Size) -> str:
        if s == w.small:
            return "500Nodes"
        if (s.nodes, s.init_pods, s.measured_pods) == (w.nodes, w.init_pods, w.measured_pods):
            return f"{w.variant}; {threshold(w)}"
        return f"{w.variant} scaled"

    return "\n".join(
        f"{w.name}: {s.nodes} nodes, {s.init_pods * len(w.init_ops)} init + {s.measured_pods} "
        f"measured pods ({variant(w, s)}){_churn(w)}: {w.feature}"
        for w, s in sized
    )


def _churn(w: Workload) -> str:
    """`, churn: <template> every <interval> ms` for a workload with a churn op."""
    if w.churn is None:
        return ""
    return (
        f", churn: {', '.join(w.churn.templates)} every {w.churn.interval_ms} ms ({w.churn.mode})"
    )
