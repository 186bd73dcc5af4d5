"""Appending to the event log: the `Appender` that `EventStore` (store.py) holds.

Appends are on the scheduler's hot path, so one append is one transaction
with a constant number of round trips whatever the batch size: lock,
read the head, one executemany of the events, one batch row, commit.
Everything that can fail without the database (kind, JSON, hashing input)
is done before the lock is taken, so the lock is held only for I/O.
The lock keeps positions gap-free in commit order (see store.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from eventsched.events import appendsql, partitions
from eventsched.events.canonical import dumps_normalized, normalize
from eventsched.events.chain import (
    GENESIS,
    ChainPoint,
    EventJSON,
    batch_hash,
    event_json_parts,
    iso,
)
from eventsched.events.engine import connection, display_url, translate
from eventsched.events.errors import AppendInDoubtError, EventStoreError, LogTailLostError
from eventsched.events.record import EventRecord, StoredEvent
from eventsched.events.vocabulary import check_kind

log = structlog.get_logger(__name__)


_TEXT_COLUMNS = ("scheduler", "instance", "attempt", "uid", "namespace", "name", "node", "plugin")
_NULLABLE = frozenset(_TEXT_COLUMNS) - {"scheduler", "instance"}


@dataclass(slots=True)
class _Prepared:
    """A record checked and serialized before the lock: what is left is formatting.
    Read-only, but not frozen: one is made for each event appended (see EventRecord)."""

    record: EventRecord
    data: Any
    data_json: str
    json: EventJSON


#: PostgreSQL's read_only_sql_transaction.
READ_ONLY_SQL_TRANSACTION = "25006"


class _StaleConnection(Exception):
    """The pooled connection was dead before anything was written: safe to try once more."""


def _read_only_server(exc: DBAPIError) -> bool:
    """PostgreSQL refused a write as read-only (SQLSTATE 25006): a hot standby, or a
    primary since demoted."""
    return getattr(exc.orig, "sqlstate", None) == READ_ONLY_SQL_TRANSACTION


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


class Appender:
    """Appends batches to the log on `engine` and makes the partitions they go to.

    `EventStore` holds one beside its `LogReader` (logreader.py); whoever only
    reads is given the reader and never this.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        #: The database URL with the password hidden, for messages.
        self.url = display_url(engine)
        #: The wall clock `recorded_at` comes from (replaceable to test a clock stepped back).
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)
        #: The last batch this appender committed: each append checks the log still holds
        #: it (a failover to a replica that had not received it loses the log's tail).
        self.appended: ChainPoint | None = None
        try:
            self._sql = appendsql.for_dialect(engine.dialect.name)
        except ValueError as exc:
            raise EventStoreError(str(exc)) from exc

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

    def _prepare(self, record: EventRecord) -> _Prepared:
        """Check and serialize one record; all of it happens before the append lock."""
        try:
            check_kind(record.kind)
        except ValueError as exc:
            raise EventStoreError(f"cannot append to the event log: {exc}") from exc
        if not _plain_text_columns(record):
            _check_text_columns(record)
        if type(record.data) is not dict and not isinstance(record.data, Mapping):
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
                    self._check_tail(conn, head)
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
                if _read_only_server(exc):
                    # A primary demoted under its pooled connections (a failover that
                    # kept them open): nothing was written. A new connection finds the
                    # read-write server (libpq's target_session_attrs=read-write).
                    conn.invalidate()
                    raise _StaleConnection from exc
                if exc.connection_invalidated and committing is not None:
                    raise _InDoubt(*committing) from exc
                raise translate(exc, self.url, doing) from exc
            except SQLAlchemyError as exc:
                raise translate(exc, self.url, doing) from exc
        assert committing is not None  # the block above either raised or set it
        self.appended = ChainPoint(committing[0], first + len(prepared) - 1, committing[1])
        return first, recorded_at

    def _check_tail(self, conn: Connection, head: Sequence[Any] | None) -> None:
        """LogTailLostError unless the log still holds the last batch appended here.

        The head is that batch, unless another writer appended since (`sticky
        forget`, a former leader): then one lookup finds it below the head.
        """
        mine = self.appended
        if mine is None or (head is not None and head[0] == mine.batch and head[2] == mine.hash):
            return
        if head is not None and head[0] > mine.batch:
            held = conn.exec_driver_sql(self._sql.has_batch, (mine.batch, mine.hash)).first()
            if held is not None:
                return
        now = ChainPoint(head[0], head[1], head[2]) if head is not None else ChainPoint()
        raise LogTailLostError(self.url, mine, now)

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
        sql.write_events(conn, rows)
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


_TEXT = (str, type(None))


def _plain_text_columns(record: EventRecord) -> bool:
    """The usual case, told without a loop: every text column a str, the nullable ones None."""
    return (
        type(record.scheduler) is str
        and type(record.instance) is str
        and type(record.attempt) in _TEXT
        and type(record.uid) in _TEXT
        and type(record.namespace) in _TEXT
        and type(record.name) in _TEXT
        and type(record.node) in _TEXT
        and type(record.plugin) in _TEXT
    )


def _check_text_columns(record: EventRecord) -> None:
    """EventStoreError naming the first text column that is not text (a str subclass is)."""
    for column in _TEXT_COLUMNS:
        value = getattr(record, column)
        if value is None and column in _NULLABLE:
            continue
        if not isinstance(value, str):
            raise EventStoreError(
                f"cannot append a {record.kind} event: {column} must be text, "
                f"not {type(value).__name__} ({value!r})"
            )


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
