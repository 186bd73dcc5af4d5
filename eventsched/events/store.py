"""The event log: append batches atomically, read them back in order.

Appends are on the scheduler's hot path, so one append is one transaction
with a constant number of round trips whatever the batch size: lock,
read the head, one executemany of the events, one batch row, commit.
Everything that can fail without the database (kind, JSON, hashing input)
is done before the lock is taken, so the lock is held only for I/O.

Positions are gap-free in commit order: every append takes the same
short lock (PostgreSQL: `LOCK TABLE event_batches IN EXCLUSIVE MODE`,
which readers do not wait for; SQLite: the write lock `BEGIN IMMEDIATE`
already holds) before reading the last position, and keeps it until
commit. A reader that has seen position P therefore never later finds a
new event below P, which is what lets `read` page by position.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any

import structlog
from sqlalchemy import ColumnElement, Connection, Engine, delete, func, select, text
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from eventsched.events import appendsql, partitions, retention
from eventsched.events.canonical import dumps_normalized, normalize
from eventsched.events.chain import (
    GENESIS,
    BatchRow,
    ChainReport,
    EventJSON,
    batch_hash,
    event_json_parts,
    iso,
    verify,
)
from eventsched.events.engine import connection, create_engine, display_url, translate
from eventsched.events.errors import AppendInDoubtError, EventStoreError
from eventsched.events.migrate import check_schema
from eventsched.events.record import EventRecord, StoredEvent
from eventsched.events.schema import EVENT_COLUMNS, event_batches, events, snapshots
from eventsched.events.vocabulary import check_kind

log = structlog.get_logger(__name__)

#: Rows fetched per query when streaming: bounded memory for any log size.
PAGE_SIZE = 5000
#: Positions one filtered read covers at most (see `read`).
WINDOW = 50_000

_VERIFY_HEAD = text(
    "SELECT (SELECT max(batch) FROM event_batches), (SELECT max(position) FROM events)"
)


_TEXT_COLUMNS = ("scheduler", "instance", "attempt", "uid", "namespace", "name", "node", "plugin")
_NULLABLE = frozenset(_TEXT_COLUMNS) - {"scheduler", "instance"}


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A record checked and serialized before the lock: what is left is formatting."""

    record: EventRecord
    data: Any
    data_json: str
    json: EventJSON


class _StaleConnection(Exception):
    """The pooled connection was dead before anything was written: safe to try once more."""


class _NoPartition(Exception):
    """PostgreSQL had no day partition for the batch's time: nothing was written."""

    def __init__(self, recorded_at: datetime) -> None:
        super().__init__(recorded_at)
        self.recorded_at = recorded_at


class _InDoubt(Exception):
    """The connection was lost during COMMIT; carries what settles whether it committed."""

    def __init__(self, batch: int, batch_hash: str, first: int, recorded_at: datetime) -> None:
        super().__init__(batch, batch_hash)
        self.batch = batch
        self.batch_hash = batch_hash
        self.first = first
        self.recorded_at = recorded_at


class EventStore:
    """The append-only log of every input and decision. Thread-safe; share one per process."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        #: The database URL with the password hidden, for messages.
        self.url = display_url(engine)
        #: The wall clock `recorded_at` comes from (replaceable to test a clock stepped back).
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)
        try:
            self._sql = appendsql.for_dialect(engine.dialect.name)
        except ValueError as exc:
            raise EventStoreError(str(exc)) from exc

    @classmethod
    def connect(cls, url: str, *, require_schema: bool = True) -> EventStore:
        """Open the log at `url`, failing now (not at the first append) if it is unusable.

        `require_schema` refuses a database whose schema is missing or at
        another revision, with the `eventsched db upgrade` command to run.
        """
        engine = create_engine(url)
        try:
            store = cls(engine)
            if require_schema:
                check_schema(engine)
            else:
                with connection(engine, read_only=True):
                    pass
        except BaseException:
            engine.dispose()
            raise
        log.info("event log opened", url=store.url, dialect=engine.dialect.name)
        return store

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> EventStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EventStore({self.url!r})"

    # -- append -----------------------------------------------------------------

    def append(self, records: Sequence[EventRecord]) -> list[int]:
        """Append `records` as one batch, atomically; returns their positions.

        Either every record is durable when this returns, or it raises
        EventStoreError and none is. The one case it cannot tell is the
        connection dying during COMMIT itself: it then raises
        AppendInDoubtError, and `batch_committed` tells once the database
        answers again.
        """
        if not records:
            return []
        prepared = [self._prepare(r) for r in records]
        try:
            first, _ = self._append_prepared(prepared)
        except _InDoubt as doubt:
            raise self._in_doubt(doubt, prepared) from doubt.__cause__
        return list(range(first, first + len(records)))

    def append_stored(self, records: Sequence[EventRecord]) -> list[StoredEvent]:
        """Like `append`, returning the events exactly as `read` will give them back.

        The scheduler folds these into its projections without reading
        them again (`backoff` needs `recorded_at`).
        """
        if not records:
            return []
        prepared = [self._prepare(r) for r in records]
        try:
            first, recorded_at = self._append_prepared(prepared)
        except _InDoubt as doubt:
            raise self._in_doubt(doubt, prepared) from doubt.__cause__
        return _stored(prepared, first, recorded_at)

    def _in_doubt(self, doubt: _InDoubt, prepared: list[_Prepared]) -> AppendInDoubtError:
        cause = doubt.__cause__ or doubt
        reason = str(getattr(cause, "orig", None) or cause).strip().splitlines()[0]
        log.warning(
            "the connection to the event log was lost during COMMIT; the batch may be in the log",
            batch=doubt.batch,
            events=len(prepared),
            url=self.url,
        )
        error = AppendInDoubtError(
            self.url, f"connection lost during COMMIT: {reason}", doubt.batch, doubt.batch_hash
        )
        error.stored = _stored(prepared, doubt.first, doubt.recorded_at)
        return error

    def batch_committed(self, batch: int, batch_hash: str) -> bool:
        """Whether batch number `batch` is in the log with this hash: settles an AppendInDoubtError.

        The hash covers every event with its position and timestamp, so no
        other writer's batch can match it.
        """
        t = event_batches.c
        stmt = select(t.batch).where(t.batch == batch, t.hash == batch_hash)
        return bool(self._fetch(stmt, "checking whether an append was committed"))

    def _prepare(self, record: EventRecord) -> _Prepared:
        """Check and serialize one record; all of it happens before the append lock."""
        try:
            check_kind(record.kind)
        except ValueError as exc:
            raise EventStoreError(f"cannot append to the event log: {exc}") from exc
        for column in _TEXT_COLUMNS:
            value = getattr(record, column)
            if type(value) is str or (value is None and column in _NULLABLE):
                continue
            if not isinstance(value, str):
                raise EventStoreError(
                    f"cannot append a {record.kind} event: {column} must be text, "
                    f"not {type(value).__name__} ({value!r})"
                )
        if not isinstance(record.data, Mapping):
            raise EventStoreError(
                f"cannot append a {record.kind} event: data must be a JSON object, "
                f"not {type(record.data).__name__}"
            )
        if record.data_json is not None:
            return self._prepared(record, record.data, record.data_json)
        try:
            data = normalize(record.data)
            data_json = dumps_normalized(data)
        except (TypeError, ValueError) as exc:
            raise EventStoreError(
                f"cannot append a {record.kind} event: its data is not JSON: {exc}"
            ) from exc
        return self._prepared(record, data, data_json)

    @staticmethod
    def _prepared(record: EventRecord, data: Any, data_json: str) -> _Prepared:
        parts = event_json_parts(
            kind=record.kind,
            scheduler=record.scheduler,
            instance=record.instance,
            attempt=record.attempt,
            uid=record.uid,
            namespace=record.namespace,
            name=record.name,
            node=record.node,
            plugin=record.plugin,
            data_json=data_json,
        )
        return _Prepared(record, data, data_json, parts)

    def _append_prepared(self, prepared: list[_Prepared]) -> tuple[int, datetime]:
        try:
            return self._write(prepared)
        except _NoPartition as missing:
            # Partitions are made ahead (`ensure_partitions`); this is the last resort.
            self._create_partition(partitions.partition_for(missing.recorded_at))
            return self._write(prepared)
        except _StaleConnection:
            # The pool handed out a connection the server had closed (restart,
            # failover); the pool is now invalidated and nothing was written.
            log.warning("event log connection was stale; retrying the append once", url=self.url)
            try:
                return self._write(prepared)
            except _StaleConnection as exc:
                raise translate(
                    exc.__cause__ or exc, self.url, "appending to the event log"
                ) from exc

    def _write(self, prepared: list[_Prepared]) -> tuple[int, datetime]:
        doing = f"appending {len(prepared)} events"
        sql = self._sql
        with connection(self.engine) as conn:
            alive = False
            committing: tuple[int, str, int, datetime] | None = None
            try:
                with conn.begin():  # SQLite: BEGIN IMMEDIATE, the write lock
                    if sql.lock is not None:
                        conn.exec_driver_sql(sql.lock)
                    head = conn.exec_driver_sql(sql.head).first()
                    alive = True
                    first, recorded_at, last_batch, prev_hash = self._next(head)
                    hashed = self._insert(conn, prepared, first, recorded_at, last_batch, prev_hash)
                    # Leaving the block commits; a connection lost from here on may have
                    # committed (the server got COMMIT, its answer was lost) or not.
                    committing = (last_batch + 1, hashed, first, recorded_at)
            except DBAPIError as exc:
                if partitions.is_missing_partition(exc):
                    raise _NoPartition(recorded_at) from exc
                if exc.connection_invalidated and not alive:
                    raise _StaleConnection from exc
                if exc.connection_invalidated and committing is not None:
                    raise _InDoubt(*committing) from exc
                raise translate(exc, self.url, doing) from exc
            except SQLAlchemyError as exc:
                raise translate(exc, self.url, doing) from exc
        return first, recorded_at

    def _insert(
        self,
        conn: Connection,
        prepared: list[_Prepared],
        first: int,
        recorded_at: datetime,
        last_batch: int,
        prev_hash: str,
    ) -> str:
        """Insert the events and their batch row after the head; returns the batch's hash."""
        sql = self._sql
        rows, jsons = _rows(prepared, first, recorded_at, sql.timestamp)
        conn.exec_driver_sql(sql.insert_events, rows)
        hashed = batch_hash(prev_hash, jsons)
        conn.exec_driver_sql(
            sql.insert_batch,
            (
                last_batch + 1,
                first,
                first + len(rows) - 1,
                sql.timestamp(recorded_at),
                prev_hash,
                hashed,
            ),
        )
        return hashed

    def append_locked(self, conn: Connection, records: Sequence[EventRecord]) -> list[StoredEvent]:
        """Append `records` as one batch inside the caller's transaction on `conn`.

        For maintenance that must be recorded atomically with what it does
        (`db prune`): takes the append lock, so other appends wait until the
        caller commits or rolls back.
        """
        prepared = [self._prepare(r) for r in records]
        if self._sql.lock is not None:
            conn.exec_driver_sql(self._sql.lock)
        first, recorded_at, last_batch, prev_hash = self._next(
            conn.exec_driver_sql(self._sql.head).first()
        )
        self._insert(conn, prepared, first, recorded_at, last_batch, prev_hash)
        return _stored(prepared, first, recorded_at)

    def _next(self, head: Sequence[Any] | None) -> tuple[int, datetime, int, str]:
        """(first position, time, last batch, prev hash) of the batch that follows `head`.

        The time never goes back along positions: a clock stepped back (NTP,
        another writer's skewed clock) records the head's time instead. Time
        order is then position order, which is what lets retention drop the
        log's oldest time partitions without leaving a gap in positions.
        """
        now = self.clock()
        if head is None:
            return 1, now, 0, GENESIS
        last_batch, last_position, prev_hash, head_time = head
        return (
            last_position + 1,
            max(now, self._sql.read_timestamp(head_time)),
            last_batch,
            prev_hash,
        )

    # -- partitions (PostgreSQL) ----------------------------------------------------

    def ensure_partitions(self, days_ahead: int = partitions.DAYS_AHEAD) -> bool:
        """Make the day partitions from today to `days_ahead` days on; True when all exist.

        Called at start and with every snapshot, so appends find their day
        made. Making one waits at most `partitions.LOCK_TIMEOUT` for readers;
        on a timeout it is left for the next call (and logged), never raised.
        """
        if self.engine.dialect.name != "postgresql":
            return True
        now = self.clock()
        try:
            with connection(self.engine) as conn:
                with conn.begin():
                    if not partitions.is_partitioned(conn):
                        return True
                    have = {p.name for p in partitions.existing(conn)}
                wanted = partitions.days(now, now + timedelta(days=days_ahead))
                for partition in wanted:
                    if partition.name not in have:
                        with conn.begin():
                            partitions.create(conn, partition)
                        log.info("event log partition created", partition=partition.name)
        except SQLAlchemyError as exc:
            log.warning(
                "could not create the event log's next partitions; will try again",
                error=str(getattr(exc, "orig", exc)).strip(),
            )
            return False
        return True

    def _create_partition(self, partition: partitions.Partition) -> None:
        try:
            with connection(self.engine) as conn, conn.begin():
                partitions.create(conn, partition)
        except SQLAlchemyError as exc:
            raise translate(exc, self.url, f"creating partition {partition.name}") from exc
        log.warning("event log partition created on demand", partition=partition.name)

    # -- read -------------------------------------------------------------------

    def read(
        self,
        after: int = 0,
        until: int | None = None,
        kinds: Collection[str] | None = None,
        limit: int | None = None,
    ) -> Iterator[StoredEvent]:
        """Events with `after < position <= until`, in order, fetched a page at a time.

        Each page is its own short read, so an abandoned iterator holds no
        connection and a long read never blocks writers.
        """
        conditions: list[ColumnElement[bool]] = []
        if until is not None:
            conditions.append(events.c.position <= until)
        if kinds is not None:
            wanted = sorted(set(kinds))
            for kind in wanted:
                try:
                    check_kind(kind)
                except ValueError as exc:
                    raise EventStoreError(str(exc)) from exc
            conditions.append(events.c.kind.in_(wanted))
            # Filtered reads go window by window: a planner with stale statistics
            # (a bulk load autovacuum has not analyzed yet) may sort every matching row
            # of the whole log to find one page; within a window it sorts at most that.
            end = self.last_position() if until is None else until
            return self._pages(after, conditions, limit, end)
        return self._pages(after, conditions, limit)

    def _pages(
        self,
        after: int,
        conditions: list[ColumnElement[bool]],
        limit: int | None,
        end: int | None = None,
    ) -> Iterator[StoredEvent]:
        """Pages of at most PAGE_SIZE; with `end`, each query also spans at most WINDOW positions."""
        remaining = limit
        cursor = after
        base = select(*EVENT_COLUMNS).where(*conditions).order_by(events.c.position)
        while (remaining is None or remaining > 0) and (end is None or cursor < end):
            page = PAGE_SIZE if remaining is None else min(PAGE_SIZE, remaining)
            stmt = base.where(events.c.position > cursor)
            high = None if end is None else min(cursor + WINDOW, end)
            if high is not None:
                stmt = stmt.where(events.c.position <= high)
            batch = [_to_event(row) for row in self._fetch(stmt.limit(page), "reading")]
            yield from batch
            if len(batch) == page:
                cursor = batch[-1].position
            elif high is None:
                return
            else:
                cursor = high
            if remaining is not None:
                remaining -= len(batch)

    def read_pod(self, namespace: str, name: str) -> list[StoredEvent]:
        """Every event of the pod(s) named namespace/name, across re-creations (uids)."""
        where = (events.c.namespace == namespace) & (events.c.name == name)
        return self._select_events(where, f"reading pod {namespace}/{name}")

    def read_uid(self, uid: str) -> list[StoredEvent]:
        return self._select_events(events.c.uid == uid, f"reading pod uid {uid}")

    def read_attempt(self, attempt: str) -> list[StoredEvent]:
        return self._select_events(events.c.attempt == attempt, f"reading attempt {attempt}")

    def last_position(self) -> int:
        """The position of the newest event; 0 for an empty log."""
        rows = self._fetch(select(func.coalesce(func.max(events.c.position), 0)), "reading")
        return int(rows[0][0])

    def _select_events(self, where: ColumnElement[bool], doing: str) -> list[StoredEvent]:
        stmt = select(*EVENT_COLUMNS).where(where).order_by(events.c.position)
        return [_to_event(row) for row in self._fetch(stmt, doing)]

    def _fetch(self, stmt: Any, doing: str) -> list[Sequence[Any]]:
        """Run a read; a read is safe to repeat, so a stale pooled connection is retried once."""
        for retry in (False, True):
            with connection(self.engine, read_only=True) as conn:
                try:
                    return list(conn.execute(stmt).all())
                except DBAPIError as exc:
                    if exc.connection_invalidated and not retry:
                        log.warning(
                            "event log connection was stale; retrying the read", url=self.url
                        )
                        continue
                    raise translate(exc, self.url, doing) from exc
                except SQLAlchemyError as exc:
                    raise translate(exc, self.url, doing) from exc
        raise AssertionError("unreachable: the second try returns or raises")

    # -- the hash chain ---------------------------------------------------------

    def verify_chain(self) -> ChainReport:
        """Recompute every batch hash from the stored events.

        Bounds are read once at the start in one statement, so batches
        appended while verifying are neither half-seen nor reported as
        broken.
        """
        head = self._fetch(_VERIFY_HEAD, "verifying the hash chain")[0]
        last_batch, last_position = int(head[0] or 0), int(head[1] or 0)
        base = retention.read_base(self)
        start = (base.batch, base.position, base.hash) if base else (0, 0, GENESIS)
        report = verify(
            self._batches(start[0], last_batch),
            self.read(after=start[1], until=last_position),
            start,
        )
        if base is not None and report.ok:
            problem = retention.base_problem(self, base)
            if problem is not None:
                report = ChainReport(
                    False, report.batches, base.batch + 1, problem, report.last_hash, report.events
                )
        if report.ok:
            log.info("hash chain verified", batches=report.batches, events=report.events)
        else:
            log.warning(
                "hash chain broken",
                first_broken_batch=report.first_broken_batch,
                detail=report.detail,
            )
        return report

    def _batches(self, after: int, last_batch: int) -> Iterator[BatchRow]:
        cursor = after
        t = event_batches.c
        base = select(t.batch, t.first_position, t.last_position, t.prev_hash, t.hash).order_by(
            t.batch
        )
        while cursor < last_batch:
            stmt = base.where(t.batch > cursor, t.batch <= last_batch).limit(PAGE_SIZE)
            rows = self._fetch(stmt, "verifying the hash chain")
            for row in rows:
                yield BatchRow(int(row[0]), int(row[1]), int(row[2]), row[3], row[4])
            if len(rows) < PAGE_SIZE:
                return
            cursor = int(rows[-1][0])

    # -- snapshots --------------------------------------------------------------

    def write_snapshot(
        self, projection: str, position: int, state: Mapping[str, Any], keep: int = 3
    ) -> None:
        """Store a projection's state as of `position`, keeping only the newest `keep`.

        Snapshots are a cache, not history: they are not chained and may be
        deleted at any time, and rebuilding without them gives the same state.
        """
        t = snapshots.c
        newest = (
            select(t.id)
            .where(t.projection == projection)
            .order_by(t.position.desc(), t.id.desc())
            .limit(keep)
        )
        with connection(self.engine) as conn:
            try:
                with conn.begin():
                    conn.execute(
                        snapshots.insert(),
                        {
                            "projection": projection,
                            "position": position,
                            "state": dict(state),
                            "created_at": datetime.now(UTC),
                        },
                    )
                    conn.execute(
                        delete(snapshots).where(t.projection == projection, t.id.not_in(newest))
                    )
            except SQLAlchemyError as exc:
                raise translate(exc, self.url, "writing a snapshot") from exc

    def latest_snapshot(self, projection: str) -> tuple[int, dict[str, Any]] | None:
        """The newest snapshot of `projection` (position, state), if any."""
        t = snapshots.c
        stmt = (
            select(t.position, t.state)
            .where(t.projection == projection)
            .order_by(t.position.desc(), t.id.desc())
            .limit(1)
        )
        rows = self._fetch(stmt, "reading a snapshot")
        if not rows:
            return None
        return int(rows[0][0]), dict(rows[0][1])


def _stored(prepared: list[_Prepared], first: int, recorded_at: datetime) -> list[StoredEvent]:
    """The events of one batch exactly as `read` will give them back."""
    return [
        StoredEvent(
            position=first + i,
            recorded_at=recorded_at,
            kind=p.record.kind,
            scheduler=p.record.scheduler,
            instance=p.record.instance,
            attempt=p.record.attempt,
            uid=p.record.uid,
            namespace=p.record.namespace,
            name=p.record.name,
            node=p.record.node,
            plugin=p.record.plugin,
            data=p.data,
            data_json=p.data_json,
        )
        for i, p in enumerate(prepared)
    ]


def _rows(
    prepared: list[_Prepared],
    first: int,
    recorded_at: datetime,
    timestamp: Callable[[datetime], Any],
) -> tuple[list[tuple[Any, ...]], list[str]]:
    """Insert parameters (in appendsql's column order) and the hash input of each event."""
    stamp = timestamp(recorded_at)
    when = iso(recorded_at)
    rows: list[tuple[Any, ...]] = []
    jsons: list[str] = []
    for position, p in enumerate(prepared, start=first):
        r = p.record
        rows.append(
            (
                position,
                stamp,
                r.scheduler,
                r.instance,
                r.attempt,
                r.kind,
                r.uid,
                r.namespace,
                r.name,
                r.node,
                r.plugin,
                p.data_json,
            )
        )
        jsons.append(p.json.render(position, when))
    return rows, jsons


def _to_event(row: Sequence[Any]) -> StoredEvent:
    (
        position,
        recorded_at,
        kind,
        scheduler,
        instance,
        attempt,
        uid,
        namespace,
        name,
        node,
        plugin,
        data,
    ) = row
    return StoredEvent(
        position=int(position),
        recorded_at=recorded_at,
        kind=kind,
        scheduler=scheduler,
        instance=instance,
        attempt=attempt,
        uid=uid,
        namespace=namespace,
        name=name,
        node=node,
        plugin=plugin,
        data=data if data is not None else {},
    )
