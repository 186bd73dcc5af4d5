"""`eventsched replay`: decide every recorded attempt again from the log alone, and verify the chain."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from eventsched.audit import ReplayReport, Selection, replay
from eventsched.audit.counterfactual import CounterfactualReport, PodOutcome, counterfactual
from eventsched.cli.commands import summary
from eventsched.cli.database import open_reader
from eventsched.cli.progress import progress_bar
from eventsched.cli.timebounds import FORMS, bound_parser
from eventsched.cli.versionflags import add_version_arguments, features_from_args
from eventsched.config.file import load_config
from eventsched.events import ChainReport, EventReader
from eventsched.events.slices import SliceOrigin, read_origin
from eventsched.framework import LEGACY_FEATURES, Features, Profile
from eventsched.plugins import full_registry


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help=summary("replay"),
        description="Rebuild, from the log alone, the scheduler's view of the cluster at each "
        "attempt and run the recorded profile's scheduling cycle again (same seed, start "
        "index and recorded plugin inputs). Reports each attempt whose node differs, with the "
        "first decision and plugin that differ, and verifies the hash chain. Exit 1 if "
        "anything does not reproduce or the chain is broken.",
    )
    p.add_argument(
        "--since",
        type=bound_parser("--since"),
        default=0,
        metavar="TIME|POSITION",
        help="check attempts started at or after TIME, or after log POSITION (an integer); "
        f"TIME is {FORMS}",
    )
    p.add_argument(
        "--until",
        type=bound_parser("--until"),
        metavar="TIME|POSITION",
        help="check attempts started at or before TIME, or up to log POSITION",
    )
    p.add_argument("--pod", metavar="NAMESPACE/NAME", help="check only this pod's attempts")
    p.add_argument("--json", action="store_true", help="a JSON report instead of text")
    p.add_argument(
        "--config",
        metavar="FILE",
        help="counterfactual: run this KubeSchedulerConfiguration over the recorded history "
        "and report what would have changed (writes nothing)",
    )
    add_version_arguments(p, "with --config, the version the log's configuration decided as")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.config:
        if args.since != 0 or args.until is not None:
            # A window would need the counterfactual fold to keep the recorded placements
            # before it and its own after it; until it does, refuse rather than ignore.
            print(
                "eventsched: error: --since/--until do not apply to replay --config: the "
                "counterfactual replay always runs the whole history",
                file=sys.stderr,
            )
            return 2
        return run_counterfactual(args)
    pod = args.pod if args.pod is None or "/" in args.pod else f"default/{args.pod}"
    selection = Selection(args.since, args.until, pod)
    reader = open_reader(args.db)
    try:
        origin = read_origin(reader)
        chain = reader.verify_chain()
        last = reader.last_position()
        with _positions(last) as advance:
            report = replay(reader, full_registry(), selection, advance)
    finally:
        reader.close()
    if args.json:
        out = {"chain": _chain(chain), "selection": selection.to_dict(), **report.to_dict()}
        if origin is not None:
            out["slice"] = origin.to_state()
        print(json.dumps(out, indent=2))
    else:
        if origin is not None:
            print("\n".join(slice_lines(origin, chain)))
        print(render(report, chain, selection))
    return 0 if report.ok and chain.ok else 1


def slice_lines(origin: SliceOrigin, chain: ChainReport) -> list[str]:
    """Where a slice came from, and how to compare its hashes with the source's."""
    held = origin.held
    anchor = held.anchor
    start = (
        f"batch {anchor.batch}'s hash {anchor.hash}" if anchor.batch else "the source's first batch"
    )
    lines = [origin.describe()]
    if chain.ok:
        lines.append(
            f"its chain runs from {start} to batch {held.last_batch}'s hash {chain.last_hash}"
        )
    batches = ", ".join(str(b) for b in (anchor.batch, held.last_batch) if b)
    lines.append(
        f"compare on the source: eventsched query --db '{origin.source}' "
        f'"SELECT batch, hash FROM event_batches WHERE batch IN ({batches})"'
    )
    return lines


@contextmanager
def _positions(last: int) -> Iterator[Callable[[int], None]]:
    """A progress bar over log positions 1..last (on a terminal only), moved by a callback."""
    with progress_bar(last, "replaying", unit="event") as bar:

        def advance(position: int) -> None:
            # update() redraws at most every 0.1 s; a refresh per event cost as much as the
            # replay itself on a terminal (0.2 ms each).
            bar.update(position - bar.n)

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


def render(report: ReplayReport, chain: ChainReport, selection: Selection | None = None) -> str:
    lines = []
    if chain.ok:
        lines.append(f"hash chain: ok ({chain.batches} batches, {chain.events} events)")
    else:
        lines.append(f"hash chain: BROKEN at batch {chain.first_broken_batch}: {chain.detail}")
    window = describe(selection) if selection is not None else ""
    if window:
        lines.append(f"checking {window}")
    lines.append(
        f"attempts: {report.attempts} checked, {report.reproduced} reproduced, "
        f"{len(report.mismatches)} differ, {len(report.skipped)} could not be replayed "
        f"(events {report.last_position - report.events + 1}..{report.last_position})"
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


def describe(selection: Selection) -> str:
    """The selection in words ('' for all attempts), so a relative --since shows the time it meant."""
    parts = []
    if isinstance(selection.since, datetime):
        parts.append(f"started at or after {_when(selection.since)}")
    elif selection.since:
        parts.append(f"after position {selection.since}")
    if isinstance(selection.until, datetime):
        parts.append(f"started at or before {_when(selection.until)}")
    elif selection.until is not None:
        parts.append(f"up to position {selection.until}")
    if selection.pod:
        parts.append(f"of pod {selection.pod}")
    return "attempts " + ", ".join(parts) if parts else ""


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def run_counterfactual(args: argparse.Namespace) -> int:
    """`--config`: the file decides as `--kubernetes-version` and `--feature-gates` say, else
    as the log's last configuration did, so that the same file changes nothing."""
    registry = full_registry()
    reader = open_reader(args.db)
    try:
        if args.kubernetes_version or args.feature_gates:
            features = features_from_args(args)
        else:
            features = recorded_features(reader)
        config = load_config(args.config, registry, features)
        with _positions(reader.last_position()) as advance:
            report = counterfactual(reader, registry, config.profiles, advance)
    finally:
        reader.close()
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
    names = Counter(p.pod for p in report.pods)
    pods = f"{len(report.pods)} pods"
    if len(names) < len(report.pods):
        pods += (
            f" ({len(names)} names: a name used again is another pod, "
            "created after the first was deleted, and is shown with its uid)"
        )
    lines = [
        f"{source} over the recorded history: {report.attempts} attempts, {pods}; "
        f"{len(moved)} would land elsewhere, {len(lost)} would become unschedulable, "
        f"{len(gained)} would become schedulable"
    ]

    def pod(p: PodOutcome) -> str:
        return f"{p.pod} (uid {p.uid})" if names[p.pod] > 1 else p.pod

    for label, chosen, change in (
        ("moved", moved, lambda p: f"{p.recorded} -> {p.counterfactual}"),
        ("unschedulable", lost, lambda p: f"was on {p.recorded}"),
        ("schedulable", gained, lambda p: f"-> {p.counterfactual}"),
    ):
        for p in chosen:
            lines.append(f"  {label:<13}  {pod(p)}: {change(p)}")
    lines.append("pods per node (recorded -> counterfactual):")
    for node, (before, after) in report.load().items():
        mark = "" if before == after else "  *"
        lines.append(f"  {node}: {before} -> {after}{mark}")
    for s in report.skipped:
        lines.append(f"  skipped attempt {s['attempt']} (position {s['position']}): {s['reason']}")
    return "\n".join(lines)


def recorded_features(reader: EventReader) -> Features:
    """The version and gates the log's last `config_loaded` profile decided as (v1.28's for
    a log without one)."""
    last = None
    for event in reader.read(kinds=["config_loaded"]):
        last = event
    if last is None or not isinstance(last.data.get("profile"), dict):
        return LEGACY_FEATURES
    return Profile.from_record(last.data["profile"]).features
