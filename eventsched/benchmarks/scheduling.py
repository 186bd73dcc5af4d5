"""Scheduling throughput of the default profile on a generated cluster, log included.

Run by `eventsched bench`. Measures the steady state: the clock starts once
the scheduler has observed the whole cluster and stops when the last pod is
bound or found unschedulable; every decision is written to the given log.

`measure_replay` then times `eventsched.audit.replay` over the log the run
wrote (reading, folding every event, deciding every attempt again), the cost
of `eventsched replay` and `explain --full` on a log of that size.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from sqlalchemy import text

from eventsched.audit import Selection, replay
from eventsched.cluster import LoadedCluster, SimulatedCluster, generate_cluster
from eventsched.config import default_profile
from eventsched.events import EventStore, upgrade
from eventsched.framework import Profile, Registry
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions


@dataclass(slots=True)
class ReplayResult:
    """Replaying the whole log of a bench run: every event folded, every attempt decided again."""

    attempts: int
    reproduced: int
    differ: int
    skipped: int
    events: int
    seconds: float
    decisions_per_second: float
    events_per_second: float

    @property
    def ok(self) -> bool:
        return self.reproduced == self.attempts

    def line(self) -> str:
        return (
            f"replay: {self.decisions_per_second:.1f} decisions/s, "
            f"{self.events_per_second:.0f} events/s folded ({self.reproduced} of "
            f"{self.attempts} attempts reproduced, {self.differ} differ, {self.skipped} "
            f"skipped; {self.events} events in {self.seconds:.2f} s)"
        )


@dataclass(slots=True)
class BenchResult:
    nodes: int
    pods: int
    database: str
    bound: int
    unschedulable: int
    startup_seconds: float
    seconds: float
    pods_per_second: float
    events: int
    events_per_second: float
    log_bytes_per_pod: float
    #: Filled by `measure_replay` when asked for (`eventsched bench --replay`).
    replay: ReplayResult | None = None

    def line(self) -> str:
        line = (
            f"{self.nodes} nodes x {self.pods} pods on {self.database}: "
            f"{self.pods_per_second:.1f} pods/s, {self.events_per_second:.0f} events/s, "
            f"{self.log_bytes_per_pod:.0f} log bytes/pod "
            f"({self.bound} bound, {self.unschedulable} unschedulable in {self.seconds:.2f} s; "
            f"start-up {self.startup_seconds:.2f} s)"
        )
        return line if self.replay is None else f"{line}\n{self.replay.line()}"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def log_size(store: EventStore) -> int:
    """Bytes the log occupies: relation sizes on PostgreSQL, file sizes on SQLite.

    On PostgreSQL `events` is partitioned by day (migration 0002) and a
    partitioned table's own size is 0, so its partitions are summed.
    """
    if store.engine.dialect.name == "postgresql":
        with store.engine.connect() as conn:
            return int(
                conn.execute(
                    text(
                        "SELECT (SELECT coalesce(sum(pg_total_relation_size(relid)), 0)"
                        " FROM pg_partition_tree('events'))"
                        " + pg_total_relation_size('event_batches')"
                    )
                ).scalar_one()
            )
    database = store.engine.url.database
    if not database:
        return 0
    # Fold the WAL into the file first, outside SQLAlchemy's transaction.
    with contextlib.closing(sqlite3.connect(database)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.stat().st_size for p in Path(database).parent.glob(Path(database).name + "*"))


@dataclass(frozen=True, slots=True)
class Variant:
    """What a benchmark other than the default profile's changes: the generated cluster,
    the profile and the plugins it may name (`eventsched bench --quotas`)."""

    transform: Callable[[LoadedCluster], LoadedCluster]
    profile: Profile
    registry: Registry


def run(
    nodes: int,
    pods: int,
    database_url: str,
    seed: int = 0,
    on_progress: Callable[[int], None] | None = None,
    variant: Variant | None = None,
) -> BenchResult:
    store = EventStore.connect(database_url, require_schema=False)
    upgrade(store.engine)
    cluster = generate_cluster(nodes, pods, seed=seed)
    profile, registry = default_profile(), in_tree_registry()
    if variant is not None:
        cluster, profile, registry = variant.transform(cluster), variant.profile, variant.registry
    sim = SimulatedCluster.from_loaded(cluster)
    scheduler = Scheduler(store, sim, [profile], registry, SchedulerOptions())
    if on_progress is not None:
        scheduler.on_progress = lambda stats: on_progress(stats.bound + stats.unschedulable)
    t0 = time.perf_counter()
    scheduler.start()
    size_before = log_size(store)
    events_before = scheduler.stats.events
    t1 = time.perf_counter()
    scheduler.run(until_idle=True)
    t2 = time.perf_counter()
    scheduler.stop()
    events = scheduler.stats.events - events_before
    size = log_size(store) - size_before
    seconds = t2 - t1
    result = BenchResult(
        nodes=nodes,
        pods=pods,
        database=store.engine.dialect.name,
        bound=scheduler.stats.bound,
        unschedulable=len(scheduler.last_failure),
        startup_seconds=t1 - t0,
        seconds=seconds,
        pods_per_second=scheduler.stats.bound / seconds if seconds else 0.0,
        events=events,
        events_per_second=events / seconds if seconds else 0.0,
        log_bytes_per_pod=size / max(pods, 1),
    )
    store.close()
    return result


def measure_replay(
    database_url: str,
    on_progress: Callable[[int, int], None] | None = None,
    registry: Registry | None = None,
) -> ReplayResult:
    """Replay the whole log at `database_url` with the in-tree plugins, timed.

    The clock covers what `eventsched replay` does apart from verifying the
    hash chain: reading the log page by page, folding every event and running
    each attempt's scheduling cycle again. `on_progress(position, last)`
    follows it.
    """
    store = EventStore.connect(database_url)
    try:
        last = store.last_position()
        progress = None if on_progress is None else (lambda position: on_progress(position, last))
        t0 = time.perf_counter()
        report = replay(store, registry or in_tree_registry(), Selection(), progress)
        seconds = time.perf_counter() - t0
    finally:
        store.close()
    return ReplayResult(
        attempts=report.attempts,
        reproduced=report.reproduced,
        differ=len(report.mismatches),
        skipped=len(report.skipped),
        events=report.events,
        seconds=seconds,
        decisions_per_second=report.attempts / seconds if seconds else 0.0,
        events_per_second=report.events / seconds if seconds else 0.0,
    )
