"""Restart time from a large log: what `Scheduler.start` spends before it talks to the cluster.

Run by `eventsched bench --restart-events N`. The log is grown to N events
(or, if the database already holds at least N, as an earlier run left it,
measured as it is)
from a real scheduling run (the template): its events are copied again and
again with fresh pod names, uids, identities and attempts, spread over
`days` days (so PostgreSQL has that many partitions), and each copy's pods
are removed during the next copy, so the live pod set stays the size of a
cluster while first placements grow with history, as they do in a
cluster with churn. Copies are made inside the database (INSERT ... SELECT),
which is why building a 10M-event log takes minutes, not hours. Their
batch hashes are copied too, so the chain of a grown log does not verify:
restart does not verify it.

Measured, as the scheduler would live through them:
- cold: the projections folded from the whole log (no snapshot), which is
  what a first start after an upgrade of the snapshot format costs;
- restart: a snapshot taken as the scheduler takes it, `tail` more events
  appended after it (default: one snapshot interval, the worst case), then
  connect + schema check + rebuild, the median of three.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection, text

from eventsched.cluster import SimulatedCluster, generate_cluster
from eventsched.config import default_profile
from eventsched.events import EventStore, rebuild_counted, save_snapshot, upgrade
from eventsched.events import partitions as day_partitions
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions


@dataclass(slots=True)
class RestartResult:
    database: str
    events: int
    days: int
    first_placements: int
    observed: int
    build_seconds: float
    cold_seconds: float
    snapshot_seconds: float
    tail_events: int
    restart_seconds: float
    restart_runs: list[float]

    def line(self) -> str:
        return (
            f"restart from a {self.events:,}-event log on {self.database} "
            f"({self.first_placements:,} first placements, {self.observed:,} observed objects, "
            f"{self.days} days): {self.restart_seconds:.2f} s with a snapshot "
            f"{self.tail_events:,} events behind (runs: "
            + ", ".join(f"{s:.2f}" for s in self.restart_runs)
            + f"); {self.cold_seconds:.1f} s folding the whole log without one; "
            f"snapshot written in {self.snapshot_seconds:.1f} s; log built in "
            f"{self.build_seconds:.0f} s"
        )

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def template(url: str, nodes: int, pods: int, days: int) -> int:
    """A real scheduling run on an empty log, recorded `days` ago; returns its last position.

    Recorded at the start of the history so that the copies, each later than
    the one before, keep time order equal to position order, as a real log's
    is (and `db prune` checks).
    """
    store = EventStore.connect(url, require_schema=False)
    upgrade(store.engine)
    began = datetime.now(UTC) - timedelta(days=days)
    started = time.monotonic()
    store.clock = lambda: began + timedelta(seconds=time.monotonic() - started)
    if store.last_position():
        store.close()
        raise SystemExit(
            f"eventsched bench --restart-events grows an empty log; {url} holds a shorter one"
        )
    cluster = generate_cluster(nodes, pods, seed=7)
    scheduler = Scheduler(
        store,
        SimulatedCluster.from_loaded(cluster),
        [default_profile()],
        in_tree_registry(),
        SchedulerOptions(snapshot_every=1 << 62),
    )
    scheduler.start()
    scheduler.run(until_idle=True)
    scheduler.stop()
    last = store.last_position()
    store.close()
    return last


def _copy_sql(dialect: str) -> str:
    """Copy k of the template: positions, batches, names, uids, attempts and identities shifted."""
    if dialect == "postgresql":
        data = (
            "CASE WHEN kind = 'bound' THEN jsonb_set(data, '{identity}', "
            "to_jsonb(namespace || '/' || name || '-' || :k)) ELSE data END"
        )
        when = "recorded_at + make_interval(secs => :shift)"
    else:
        data = (
            "CASE WHEN kind = 'bound' THEN json_set(data, '$.identity', "
            "namespace || '/' || name || '-' || :k) ELSE data END"
        )
        when = "strftime('%Y-%m-%d %H:%M:%f000', recorded_at, printf('%+.6f seconds', :shift))"
    return (
        "INSERT INTO events (position, recorded_at, scheduler, instance, attempt, kind, uid, "
        "namespace, name, node, plugin, data) "
        f"SELECT position + :offset, {when}, scheduler, instance, attempt || '-' || :k, kind, "
        "uid || '-' || :k, namespace, name || '-' || :k, node, plugin, "
        f"{data} FROM events WHERE position <= :size ORDER BY position"
    )


def _removals_sql(dialect: str) -> str:
    """Copy k-1's pods deleted during copy k: one pod_removed per bound pod, after copy k."""
    # At the copy's last moment, so time order stays position order.
    last = "(SELECT max(recorded_at) FROM events WHERE position <= :size)"
    when = (
        f"{last} + make_interval(secs => :shift)"
        if dialect == "postgresql"
        else f"strftime('%Y-%m-%d %H:%M:%f000', {last}, printf('%+.6f seconds', :shift))"
    )
    data = "'{}'::jsonb" if dialect == "postgresql" else "'{}'"
    return (
        "INSERT INTO events (position, recorded_at, scheduler, instance, attempt, kind, uid, "
        "namespace, name, node, plugin, data) "
        f"SELECT :offset + ROW_NUMBER() OVER (ORDER BY position), {when}, scheduler, instance, "
        "NULL, 'pod_removed', uid || '-' || :prev, namespace, name || '-' || :prev, node, NULL, "
        f"{data} FROM events WHERE position <= :size AND kind = 'bound'"
    )


def _batches_sql(dialect: str) -> str:
    """The template's batch rows for copy k, shifted in position and time like its events."""
    when = (
        "recorded_at + make_interval(secs => :shift)"
        if dialect == "postgresql"
        else "strftime('%Y-%m-%d %H:%M:%f000', recorded_at, printf('%+.6f seconds', :shift))"
    )
    return (
        "INSERT INTO event_batches (batch, first_position, last_position, recorded_at, "
        f"prev_hash, hash) SELECT batch + :batch_offset, first_position + :offset, "
        f"last_position + :offset, {when}, prev_hash, hash FROM event_batches "
        "WHERE batch <= :batches ORDER BY batch"
    )


def grow(
    url: str,
    size: int,
    events: int,
    days: int,
    on_progress: Callable[[int], None] | None = None,
) -> int:
    """Copy the template (positions 1..size) until the log holds `events`; returns the count."""
    store = EventStore.connect(url)
    dialect = store.engine.dialect.name
    with store.engine.connect() as conn:
        batches = int(conn.execute(text("SELECT max(batch) FROM event_batches")).scalar_one())
        bound = int(
            conn.execute(
                text("SELECT count(*) FROM events WHERE kind = 'bound' AND position <= :s"),
                {"s": size},
            ).scalar_one()
        )
        conn.commit()
    per_copy = size + bound
    copies = max(1, -(-(events - size) // per_copy))  # enough copies to reach `events`
    step = days * 86400 / (copies + 1)
    first_time = datetime.now(UTC) - timedelta(days=days)
    with store.engine.connect() as conn:
        if dialect == "postgresql":
            _make_partitions(conn, first_time, datetime.now(UTC))
        conn.commit()
    position = size
    batch = batches
    for k in range(1, copies + 1):
        with store.engine.begin() as conn:
            shift = k * step  # the template was recorded `days` ago; each copy later
            args = {"k": str(k), "offset": position, "size": size, "shift": shift}
            conn.execute(text(_copy_sql(dialect)), args)
            conn.execute(
                text(_batches_sql(dialect)),
                {"batch_offset": batch, "offset": position, "batches": batches, "shift": shift},
            )
            position += size
            batch += batches
            if k > 1:
                conn.execute(
                    text(_removals_sql(dialect)),
                    {"offset": position, "size": size, "shift": shift, "prev": str(k - 1)},
                )
                conn.execute(
                    text(
                        "INSERT INTO event_batches VALUES (:b, :first, :last, (SELECT "
                        "max(recorded_at) FROM events WHERE position BETWEEN :first AND :last), "
                        "'', '')"
                    ),
                    {"b": batch + 1, "first": position + 1, "last": position + bound},
                )
                position += bound
                batch += 1
        if on_progress is not None:
            on_progress(position)
    with store.engine.begin() as conn:
        # A log that grew over weeks has been analyzed by autovacuum; one bulk-loaded
        # in minutes has not, and the measurement should not hinge on stale statistics.
        conn.execute(text("ANALYZE events"))
    store.close()
    return position


def _make_partitions(conn: Connection, start: datetime, end: datetime) -> None:
    if not day_partitions.is_partitioned(conn):
        return
    for partition in day_partitions.days(start, end):
        day_partitions.create(conn, partition)
    conn.commit()


def _since(url: str) -> float:
    """Seconds from the template's first event to now: the tail is recorded now."""
    with EventStore.connect(url) as store:
        first = next(store.read(limit=1))
    return (datetime.now(UTC) - first.recorded_at).total_seconds()


def _existing(url: str) -> int:
    store = EventStore.connect(url, require_schema=False)
    try:
        upgrade(store.engine)
        return store.last_position()
    finally:
        store.close()


def _timed_restart(url: str) -> tuple[float, int, int]:
    t0 = time.perf_counter()
    store = EventStore.connect(url)
    projections, folded = rebuild_counted(store)
    seconds = time.perf_counter() - t0
    store.close()
    return seconds, folded, len(projections.first_placements)


def run(
    url: str,
    events: int,
    days: int = 30,
    tail: int = 20_000,
    nodes: int = 500,
    pods: int = 2000,
    on_progress: Callable[[int], None] | None = None,
) -> RestartResult:
    t0 = time.perf_counter()
    total = _existing(url)
    if total >= events:
        size = tail  # a log grown by an earlier run: measure it again as it is
    else:
        size = template(url, nodes, pods, days)
        total = grow(url, size, events, days, on_progress)
    with EventStore.connect(url) as store, store.engine.begin() as conn:
        conn.execute(text("DELETE FROM snapshots"))
    build = time.perf_counter() - t0

    t1 = time.perf_counter()
    with EventStore.connect(url) as store:
        projections, _ = rebuild_counted(store)
    cold = time.perf_counter() - t1
    t2 = time.perf_counter()
    with EventStore.connect(url) as store:
        save_snapshot(store, projections)
        dialect = store.engine.dialect.name
    snapshot = time.perf_counter() - t2

    # One snapshot interval of new events after the snapshot: copies of the template's start.
    with EventStore.connect(url) as store, store.engine.begin() as conn:
        conn.execute(
            text(_copy_sql(dialect)),
            {"k": f"tail{total}", "offset": total, "size": min(tail, size), "shift": _since(url)},
        )
    runs = [_timed_restart(url) for _ in range(3)]
    seconds = [r[0] for r in runs]
    return RestartResult(
        database=dialect,
        events=total,
        days=days,
        first_placements=runs[0][2],
        observed=len(projections.observed),
        build_seconds=build,
        cold_seconds=cold,
        snapshot_seconds=snapshot,
        tail_events=runs[0][1],
        restart_seconds=statistics.median(seconds),
        restart_runs=seconds,
    )
