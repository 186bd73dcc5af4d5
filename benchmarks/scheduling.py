"""Scheduling throughput of the default profile on a generated cluster, log included.

Run by `eventsched bench`. Measures the steady state: the clock starts once
the scheduler has observed the whole cluster and stops when the last pod is
bound or found unschedulable; every decision is written to the given log.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from sqlalchemy import text

from eventsched.cluster import SimulatedCluster, generate_cluster
from eventsched.config import default_profile
from eventsched.events import EventStore, upgrade
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions


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

    def line(self) -> str:
        return (
            f"{self.nodes} nodes x {self.pods} pods on {self.database}: "
            f"{self.pods_per_second:.1f} pods/s, {self.events_per_second:.0f} events/s, "
            f"{self.log_bytes_per_pod:.0f} log bytes/pod "
            f"({self.bound} bound, {self.unschedulable} unschedulable in {self.seconds:.2f} s; "
            f"start-up {self.startup_seconds:.2f} s)"
        )

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def log_size(store: EventStore) -> int:
    """Bytes the log occupies: relation sizes on PostgreSQL, file sizes on SQLite."""
    if store.engine.dialect.name == "postgresql":
        with store.engine.connect() as conn:
            return int(
                conn.execute(
                    text(
                        "SELECT pg_total_relation_size('events') + pg_total_relation_size('event_batches')"
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


def run(
    nodes: int,
    pods: int,
    database_url: str,
    seed: int = 0,
    on_progress: Callable[[int], None] | None = None,
) -> BenchResult:
    store = EventStore.connect(database_url, require_schema=False)
    upgrade(store.engine)
    cluster = generate_cluster(nodes, pods, seed=seed)
    sim = SimulatedCluster(cluster.nodes, cluster.pods)
    scheduler = Scheduler(store, sim, [default_profile()], in_tree_registry(), SchedulerOptions())
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
