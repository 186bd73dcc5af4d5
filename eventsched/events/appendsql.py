"""The statements of the append path, per database, sent as driver SQL.

An append is on the scheduler's hot path and its cost is paid while the
append lock is held, so its statements skip SQLAlchemy's compilation and
type processing (`exec_driver_sql`): `data` goes in as the canonical JSON
text already computed for the hash (sent as JSONB on PostgreSQL, stored
as is on SQLite) instead of being serialized a second time. On PostgreSQL
the events go in as one binary COPY (copyrows.py), on SQLite as an
`executemany` of INSERTs. Everything else in the store uses SQLAlchemy Core;
SQLAlchemy still wraps errors and manages the pooled connection here.

Columns and storage formats must stay exactly what `schema.py` reads back
(a round-trip test checks it on both databases).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection

_EVENT_COLUMNS = (
    "position, recorded_at, scheduler, instance, attempt, kind, uid, namespace, name, node, "
    "plugin, data"
)
_BATCH_COLUMNS = "batch, first_position, last_position, recorded_at, prev_hash, hash"

#: The last batch is the head of the log: its last position, the hash to chain to, and its
#: time (a new batch is never recorded earlier, so time order is position order).
#: (An event inserted behind the store's back would collide on the primary key, loudly.)
_HEAD = (
    "SELECT batch, last_position, hash, recorded_at FROM event_batches ORDER BY batch DESC LIMIT 1"
)


def _sqlite_timestamp(value: datetime) -> str:
    """SQLAlchemy's SQLite DATETIME storage format, in UTC (what UTCDateTime reads)."""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def _same(value: datetime) -> datetime:
    return value


def _sqlite_read_timestamp(value: str | datetime) -> datetime:
    """What SQLite gives back for a timestamp `_sqlite_timestamp` wrote: naive UTC text."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.fromisoformat(value).replace(tzinfo=UTC)


Rows = Sequence[tuple[Any, ...]]

_COPY_EVENTS = f"COPY events ({_EVENT_COLUMNS}) FROM STDIN (FORMAT BINARY)"


def _copy_events(conn: Connection, rows: Rows) -> None:
    """PostgreSQL: one binary COPY of the batch's events (copyrows.py; psycopg is imported
    only where the log is on PostgreSQL)."""
    from eventsched.events.copyrows import copy_rows

    copy_rows(conn, _COPY_EVENTS, rows)


def _insert_sqlite_events(conn: Connection, rows: Rows) -> None:
    conn.exec_driver_sql(SQLITE_INSERT_EVENTS, list(rows))


SQLITE_INSERT_EVENTS = (
    f"INSERT INTO events ({_EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


@dataclass(frozen=True, slots=True)
class AppendSQL:
    #: Taken first in every append transaction; None where BEGIN already took it.
    lock: str | None
    head: str
    #: Writes a batch's event rows (`_EVENT_COLUMNS`' order) on the append's connection.
    write_events: Callable[[Connection, Rows], None]
    insert_batch: str
    #: Finds batch (number, hash): whether the log still holds a batch appended before.
    has_batch: str
    timestamp: Callable[[datetime], Any]
    #: The head's `recorded_at` as the driver returns it, to an aware UTC datetime.
    read_timestamp: Callable[[Any], datetime]


POSTGRESQL = AppendSQL(
    # EXCLUSIVE conflicts with itself and with writes, not with plain reads.
    lock="LOCK TABLE event_batches IN EXCLUSIVE MODE",
    head=_HEAD,
    write_events=_copy_events,
    insert_batch=f"INSERT INTO event_batches ({_BATCH_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s)",
    has_batch="SELECT 1 FROM event_batches WHERE batch = %s AND hash = %s",
    timestamp=_same,
    read_timestamp=_same,
)

SQLITE = AppendSQL(
    lock=None,  # BEGIN IMMEDIATE (engine.py) holds the database's write lock
    head=_HEAD,
    write_events=_insert_sqlite_events,
    insert_batch=f"INSERT INTO event_batches ({_BATCH_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
    has_batch="SELECT 1 FROM event_batches WHERE batch = ? AND hash = ?",
    timestamp=_sqlite_timestamp,
    read_timestamp=_sqlite_read_timestamp,
)


def for_dialect(name: str) -> AppendSQL:
    if name == "postgresql":
        return POSTGRESQL
    if name == "sqlite":
        return SQLITE
    raise ValueError(
        f"the event log supports PostgreSQL and SQLite, not {name}; use a postgresql+psycopg:// "
        "or sqlite:/// URL"
    )
