"""`eventsched replay`: decide every recorded attempt again from the log alone, and verify the chain."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from eventsched.audit import ReplayReport, Selection, replay
from eventsched.audit.replay import CounterfactualReport, counterfactual
from eventsched.cli.database import open_store
from eventsched.cli.progress import progress_bar
from eventsched.config.file import load_config
from eventsched.events import ChainReport
from eventsched.plugins import full_registry


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="re-run every recorded attempt from the log and report what does not reproduce",
        description="Rebuild, from the log alone, the scheduler's view of the cluster at each "
        "attempt and run the recorded profile's scheduling cycle again (same seed, start "
        "index and recorded plugin inputs). Reports each attempt whose node differs, with the "
        "first decision and plugin that differ, and verifies the hash chain. Exit 1 if "
        "anything does not reproduce or the chain is broken.",
    )
    p.add_argument(
        "--since",
        type=int,
        default=0,
        metavar="POSITION",
        help="check attempts after this log position",
    )
    p.add_argument(
        "--until", type=int, metavar="POSITION", help="check attempts up to this log position"
    )
    p.add_argument("--pod", metavar="NAMESPACE/NAME", help="check only this pod's attempts")
    p.add_argument("--json", action="store_true", help="a JSON report instead of text")
    p.add_argument(
        "--config",
        metavar="FILE",
        help="counterfactual: run this KubeSchedulerConfiguration over the recorded history "
        "and report what would have changed (writes nothing)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.config:
        return run_counterfactual(args)
    pod = args.pod if args.pod is None or "/" in args.pod else f"default/{args.pod}"
    store = open_store(args.db)
    try:
        chain = store.verify_chain()
        last = store.last_position()
        with _positions(last) as advance:
            report = replay(store, full_registry(), Selection(args.since, args.until, pod), advance)
    finally:
        store.close()
    if args.json:
        print(json.dumps({"chain": _chain(chain), **report.to_dict()}, indent=2))
    else:
        print(render(report, chain))
    return 0 if report.ok and chain.ok else 1


@contextmanager
def _positions(last: int) -> Iterator[Callable[[int], None]]:
    """A progress bar over log positions 1..last (on a terminal only), moved by a callback."""
    with progress_bar(last, "replaying", unit="event") as bar:

        def advance(position: int) -> None:
            bar.n = position
            bar.refresh()

        yield advance


def _chain(chain: ChainReport) -> dict[str, Any]:
    return {
        "ok": chain.ok,
        "batches": chain.batches,
        "events": chain.events,
        "firstBrokenBatch": chain.first_broken_batch,
        "detail": chain.detail,
        "lastHash": chain.last_hash,
    }


def render(report: ReplayReport, chain: ChainReport) -> str:
    lines = []
    if chain.ok:
        lines.append(f"hash chain: ok ({chain.batches} batches, {chain.events} events)")
    else:
        lines.append(f"hash chain: BROKEN at batch {chain.first_broken_batch}: {chain.detail}")
    lines.append(
        f"attempts: {report.attempts} checked, {report.reproduced} reproduced, "
        f"{len(report.mismatches)} differ, {len(report.skipped)} could not be replayed "
        f"(events 1..{report.last_position})"
    )
    for m in report.mismatches:
        where = f" at {m.kind}" + (f" ({m.plugin})" if m.plugin else "") if m.kind else ""
        lines.append(
            f"  DIFFERS {m.pod} attempt {m.attempt} (position {m.position}): recorded "
            f"{m.recorded}, replayed {m.replayed}; first difference{where}: {m.detail}"
        )
    for s in report.skipped:
        lines.append(f"  skipped attempt {s['attempt']} (position {s['position']}): {s['reason']}")
    return "\n".join(lines)


def run_counterfactual(args: argparse.Namespace) -> int:
    registry = full_registry()
    config = load_config(args.config, registry)
    store = open_store(args.db)
    try:
        with _positions(store.last_position()) as advance:
            report = counterfactual(store, registry, config.profiles, advance)
    finally:
        store.close()
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(render_counterfactual(report, args.config))
    return 0


def render_counterfactual(report: CounterfactualReport, source: str) -> str:
    moved, lost, gained = (
        report.moved(),
        report.became_unschedulable(),
        report.became_schedulable(),
    )
    lines = [
        f"{source} over the recorded history: {report.attempts} attempts, {len(report.pods)} pods; "
        f"{len(moved)} would land elsewhere, {len(lost)} would become unschedulable, "
        f"{len(gained)} would become schedulable"
    ]
    for p in moved:
        lines.append(f"  moved        {p.pod}: {p.recorded} -> {p.counterfactual}")
    for p in lost:
        lines.append(f"  unschedulable {p.pod}: was on {p.recorded}")
    for p in gained:
        lines.append(f"  schedulable  {p.pod}: -> {p.counterfactual}")
    lines.append("pods per node (recorded -> counterfactual):")
    for node, (before, after) in report.load().items():
        mark = "" if before == after else "  *"
        lines.append(f"  {node}: {before} -> {after}{mark}")
    for s in report.skipped:
        lines.append(f"  skipped attempt {s['attempt']} (position {s['position']}): {s['reason']}")
    return "\n".join(lines)
