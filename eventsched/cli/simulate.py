"""`eventsched simulate`: schedule a cluster from manifests (or generated) onto the log."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

from eventsched.cli.arguments import count
from eventsched.cli.commands import summary
from eventsched.cli.database import open_store
from eventsched.cli.progress import BYTES, DEFAULT_EVERY, Progress
from eventsched.cli.versionflags import add_version_arguments, features_from_args
from eventsched.cluster import SimulatedCluster, generate_cluster, load_manifests
from eventsched.config.featuregates import admission_at
from eventsched.config.file import read_config
from eventsched.events import EventStore
from eventsched.model import NodeTable
from eventsched.model.quantity import format_bytes_of, format_cpu_of
from eventsched.plugins import full_registry
from eventsched.scheduler import Scheduler, SchedulerOptions


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "simulate",
        help=summary("simulate"),
        description="Load Node/Pod/Deployment/ReplicaSet/StatefulSet manifests (files or "
        "directories) or generate a cluster, schedule its pending pods with the default "
        "profile, and print where they went.",
    )
    p.add_argument("paths", nargs="*", help="manifest files or directories")
    p.add_argument(
        "--nodes", type=count(0), help="generate this many nodes instead of reading manifests"
    )
    p.add_argument("--pods", type=count(0), help="with --nodes: generate this many pending pods")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated cluster (default 0)")
    p.add_argument("--binder-workers", type=count(1), default=16, help="concurrent binding cycles")
    p.add_argument(
        "--config",
        metavar="FILE",
        help="KubeSchedulerConfiguration (v1) file: its profiles schedule the pods whose "
        "schedulerName they carry (default: one default profile named eventsched)",
    )
    add_version_arguments(p, "the newest supported")
    p.add_argument(
        "--progress-every",
        type=float,
        default=DEFAULT_EVERY,
        metavar="SECONDS",
        help="when stderr is not a terminal: a progress line every SECONDS while loading, "
        f"starting and scheduling take longer than a second (default {DEFAULT_EVERY:g}; "
        "0: none); on a terminal a progress bar",
    )
    p.set_defaults(func=run, usage_error=p.error)


#: A generated cluster of thousands of nodes would flood the terminal.
MAX_NODE_ROWS = 30


@dataclass(slots=True)
class Outcome:
    pending: int
    bound: int
    unschedulable: dict[str, str]
    ignored: dict[str, str]
    seconds: float
    first_events: int
    last_position: int
    repeat: int
    on_first_node: int


def run(args: argparse.Namespace) -> int:
    if args.pods is not None and args.nodes is None:
        args.usage_error("--pods goes with --nodes")
    if args.nodes is None and not args.paths:
        args.usage_error("give manifest paths, or --nodes N --pods M")
    if args.nodes is not None and args.paths:
        args.usage_error("give manifest paths or --nodes N --pods M, not both")
    if args.progress_every < 0:
        args.usage_error(f"--progress-every is 0 or more seconds, not {args.progress_every:g}")
    store = open_store(args.db)  # a database problem first, before reading anything else
    try:
        return _simulate(args, store)
    finally:
        store.close()


def _simulate(args: argparse.Namespace, store: EventStore) -> int:
    every = args.progress_every
    features = features_from_args(args)  # a wrong flag is refused before reading anything
    # The pods count as the profiles will decide (the config's features are these).
    accounting = features.accounting
    if args.nodes is not None:
        loaded = generate_cluster(args.nodes, args.pods or 0, seed=args.seed, accounting=accounting)
    else:
        where = ", ".join(args.paths)
        with Progress(f"loading manifests from {where}", measure=BYTES, every=every) as reading:
            loaded = load_manifests(
                args.paths,
                on_progress=lambda p: reading.update(p.bytes, p.total_bytes),
                accounting=accounting,
                admission=admission_at(features),
            )
        _warn_skipped(loaded.skipped, loaded.unused)
    registry = full_registry()
    config = read_config(args.config, registry, features)
    for warning in config.warnings:
        print(f"eventsched: warning: {warning}", file=sys.stderr)
    # Started pods carry status.startTime, which DefaultPreemption orders victims by.
    cluster = SimulatedCluster.from_loaded(loaded, start_pods=True)
    scheduler = Scheduler(
        store,
        cluster,
        config.profiles,
        registry,
        SchedulerOptions(
            binder_workers=args.binder_workers,
            initial_backoff=config.pod_initial_backoff_seconds,
            max_backoff=config.pod_max_backoff_seconds,
        ),
    )
    names = set(config.scheduler_names)
    ours = [p for p in loaded.pods if not p.node_name and p.scheduler_name in names]
    before = scheduler.store.last_position()
    listed = f"{len(loaded.nodes):,} nodes and {len(loaded.pods):,} pods"
    started = time.monotonic()
    with Progress(f"starting: logging the {listed} the cluster lists", every=every):
        scheduler.start()
    firsts_before = dict(scheduler.projections.first_placements)
    _print_rebuilt(scheduler, before)
    # Its own phase: a rate and estimate counted from the start of scheduling, not from
    # before the loading and the start (which read as hours left at 0%).
    with Progress("scheduling", len(ours), every=every) as deciding:

        def progress(stats: object) -> None:
            deciding.update(scheduler.stats.bound + len(scheduler.last_failure))

        scheduler.on_progress = progress
        scheduler.run(until_idle=True)
        seconds = time.monotonic() - started
        scheduler.stop()
    repeat = on_first = 0
    for pod in ours:
        placed = firsts_before.get(pod.key)
        node = scheduler.cache.node_of(pod.uid)
        if placed is not None and node is not None:
            repeat += 1
            on_first += placed.node == node
    outcome = Outcome(
        pending=len(ours),
        bound=scheduler.stats.bound,
        unschedulable={pod.key: msg for pod, msg in scheduler.last_failure.values()},
        ignored={pod.key: msg for pod, msg in scheduler.ignored.values()},
        seconds=seconds,
        first_events=before + 1,
        last_position=store.last_position(),
        repeat=repeat,
        on_first_node=on_first,
    )
    _print_summary(outcome, scheduler.cache.table, store.url)
    return 0


#: Skipped documents named one by one; the count covers the rest.
MAX_SKIPPED_SHOWN = 20


def _warn_skipped(skipped: list[str], unused: dict[str, int]) -> None:
    if unused:
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(unused.items()))
        print(
            "eventsched: note: not simulated (only nodes, pods, the workloads that make them, "
            f"namespaces and services are): {kinds}",
            file=sys.stderr,
        )
    if not skipped:
        return
    noun = "document" if len(skipped) == 1 else "documents"
    print(f"eventsched: warning: skipped {len(skipped)} {noun}:", file=sys.stderr)
    for line in skipped[:MAX_SKIPPED_SHOWN]:
        print(f"  {line}", file=sys.stderr)
    if len(skipped) > MAX_SKIPPED_SHOWN:
        print(f"  ... and {len(skipped) - MAX_SKIPPED_SHOWN} more", file=sys.stderr)


def _print_rebuilt(scheduler: Scheduler, before: int) -> None:
    if before == 0:
        return
    p = scheduler.projections
    print(
        f"state rebuilt from the log up to position {before}: "
        f"{len(p.first_placements)} first placements, "
        f"{len(p.open_reservations)} open reservations, {len(p.backoff)} pods with backoff",
        file=sys.stderr,
    )


def _print_summary(outcome: Outcome, table: NodeTable, url: str) -> None:
    rate = outcome.bound / outcome.seconds if outcome.seconds > 0 else 0.0
    print(
        f"{outcome.bound} of {outcome.pending} pending pods bound, "
        f"{len(outcome.unschedulable)} unschedulable, on {len(table)} nodes "
        f"in {outcome.seconds:.2f} s ({rate:.1f} pods/s)"
    )
    print(f"event log: {url}, positions {outcome.first_events}..{outcome.last_position}")
    if outcome.repeat:
        print(
            f"{outcome.repeat} pods were placed before (by identity); "
            f"{outcome.on_first_node} landed on their first node again"
        )
    if outcome.unschedulable:
        print("\nunschedulable:")
        for key, message in sorted(outcome.unschedulable.items()):
            print(f"  {key}: {message}")
    if outcome.ignored:
        print("\nscheduled without fields eventsched does not honour yet:")
        for key, message in sorted(outcome.ignored.items()):
            print(f"  {key}: {message}")
    print("\npods per node:")
    cpu, mem, pods = table.column("cpu"), table.column("memory"), table.column("pods")
    rows = [("NODE", "PODS", "CPU requested", "MEMORY requested")]
    for row, name in enumerate(table.names):
        req, alloc = table.requested[row], table.allocatable[row]
        rows.append(
            (
                name,
                f"{req[pods]}/{alloc[pods]}",
                format_cpu_of(int(req[cpu]), int(alloc[cpu])),
                format_bytes_of(int(req[mem]), int(alloc[mem])),
            )
        )
    body = sorted(rows[1:])
    shown = rows[:1] + body[:MAX_NODE_ROWS]
    widths = [max(len(r[i]) for r in shown) for i in range(4)]
    for r in shown:
        print("  " + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip())
    if len(body) > MAX_NODE_ROWS:
        print(
            f"  ... and {len(body) - MAX_NODE_ROWS} more nodes (query the placements view for all)"
        )
