"""`eventsched bench --kube --shadow`: the shadow beside kube-scheduler, at scale."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from eventsched.benchmarks.kubebinaries import KubeBinaries
from eventsched.cli.database import resolve_url
from eventsched.cli.progress import progress_bar
from eventsched.cli.signals import sigterm_unwinds


def run_kube_shadow(args: argparse.Namespace, binaries: KubeBinaries) -> int:
    """Each round on a fresh control plane: one line per run (JSON with --json)."""
    from eventsched.benchmarks import kube_shadow

    if binaries.scheduler is None:
        print(
            "eventsched: error: bench --kube --shadow needs kube-scheduler beside "
            "kube-apiserver (plain or .xz) in $EVENTSCHED_KUBE_BIN or --kube-bin DIR",
            file=sys.stderr,
        )
        return 2
    nodes = 500 if args.nodes is None else args.nodes
    pods = 3000 if args.pods is None else args.pods
    url = resolve_url(args.db) if args.db else None
    bars: list[Any] = []

    def progress(description: str) -> Any:
        for bar in bars:
            bar.close()
        bar = progress_bar(pods, description)
        bars[:] = [bar]
        return lambda bound: bar.update(bound - bar.n)

    ok = True
    try:
        with sigterm_unwinds():
            for result in kube_shadow.run(
                binaries, nodes, pods, qps=args.qps, burst=args.burst, db_url=url,
                rounds=args.rounds, timeout=args.timeout,
                percentage=args.percentage_of_nodes_to_score, pods_first=args.pods_first,
                progress=progress,
            ):  # fmt: skip
                for bar in bars:
                    bar.close()
                ok = ok and result.ok
                print(json.dumps(result.to_dict()) if args.json else result.line(), flush=True)
    finally:
        for bar in bars:
            bar.close()
    return 0 if ok else 1
