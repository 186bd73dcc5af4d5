"""Exporting a slice of the log (slices.py): which batches, and the SQLite file that holds them.

A slice holds whole batches, because a batch's hash covers all of its
events: a batch with one event left out could not be verified. And it holds
every batch between its first and its last, because each batch's
`prev_hash` pins the one before it, and because replay needs every change
the cluster went through in between (a pod slice's pod was decided on the
view its neighbours' events made).

Choosing the batches (`batches_recorded`, `batches_of_pod`) reads the source;
writing the file (`SliceFile`, `copy_slice`) streams its batches and events a
page at a time into a new SQLite log migrated to the schema's head, beside
the base (folded by the caller: audit.retention.fold_until) and the origin.
The file is written under a temporary name beside the destination and
renamed into place once complete, so no half-written slice is ever left
where one was asked for.
"""

from __future__ import annotations

import os
import socket
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Connection, Engine, Select, func, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from eventsched import __version__
from eventsched.events.appendsql import SQLITE, SQLITE_INSERT_EVENTS
from eventsched.events.canonical import canonical_json
from eventsched.events.chain import BatchRow, ChainReport, verify
from eventsched.events.engine import connection, create_engine, display_url, translate
from eventsched.events.logreader import PAGE_SIZE, LogReader
from eventsched.events.migrate import upgrade
from eventsched.events.record import StoredEvent
from eventsched.events.retention import BASE_NAME, LogBase
from eventsched.events.schema import event_batches, events, pod_uids, snapshots
from eventsched.events.slices import SLICE_NAME, SliceOrigin, SliceRange

Row = TypeVar("Row")

__all__ = [
    "Copied",
    "SliceFile",
    "Span",
    "batches_of_pod",
    "batches_recorded",
    "copy_slice",
    "recorded_span",
]


@dataclass(frozen=True, slots=True)
class Span:
    """When a log's batches were recorded: its first and its last."""

    first: datetime
    last: datetime


_B = event_batches.c


def batches_recorded(
    reader: LogReader, since: datetime | None, until: datetime | None
) -> SliceRange | None:
    """The batches recorded at or after `since` and at or before `until` (either open);
    None when there is none. A batch's time never goes back along batch numbers, so they
    are one run of batches."""
    conditions: list[ColumnElement[bool]] = []
    if since is not None:
        conditions.append(_B.recorded_at >= since)
    if until is not None:
        conditions.append(_B.recorded_at <= until)
    stmt = select(func.min(_B.batch), func.max(_B.batch)).where(*conditions)
    with _reading(reader, "choosing the batches to export") as conn:
        first, last = conn.execute(stmt).one()
        return None if first is None else _range(conn, int(first), int(last))


def batches_of_pod(reader: LogReader, namespace: str, name: str) -> SliceRange | None:
    """The batches from the first to the last that hold an event of the pod(s) named
    namespace/name (across re-creations); None when the log has no event of it."""
    positions = select(func.min(events.c.position), func.max(events.c.position)).where(
        events.c.uid.in_(pod_uids(namespace, name))
    )
    with _reading(reader, f"finding pod {namespace}/{name}") as conn:
        low, high = conn.execute(positions).one()
        if low is None:
            return None
        first = conn.execute(_batch_holding(int(low))).scalar_one()
        last = conn.execute(_batch_holding(int(high))).scalar_one()
        return _range(conn, int(first), int(last))


def recorded_span(reader: LogReader) -> Span | None:
    """When the log's first and last batches were recorded; None for an empty log."""
    stmt = select(_B.recorded_at).order_by(_B.batch).limit(1)
    newest = select(_B.recorded_at).order_by(_B.batch.desc()).limit(1)
    with _reading(reader, "reading the log's time span") as conn:
        first = conn.execute(stmt).scalar()
        last = conn.execute(newest).scalar()
    return None if first is None or last is None else Span(first, last)


def _batch_holding(position: int) -> Select[Any]:
    return select(_B.batch).where(_B.last_position >= position).order_by(_B.batch).limit(1)


def _range(conn: Connection, first: int, last: int) -> SliceRange:
    rows = {
        int(row[0]): row
        for row in conn.execute(
            select(_B.batch, _B.first_position, _B.last_position, _B.prev_hash, _B.hash).where(
                _B.batch.in_([first, last])
            )
        )
    }
    start, end = rows[first], rows[last]
    return SliceRange(first, last, int(start[1]), int(end[2]), str(start[3]), str(end[4]))


@contextmanager
def _reading(reader: LogReader, doing: str) -> Iterator[Connection]:
    """A read-only connection to the source, its errors translated as the reader's are."""
    try:
        with connection(reader.engine, read_only=True) as conn:
            yield conn
    except SQLAlchemyError as exc:
        raise translate(exc, reader.url, doing) from exc


class SliceFile:
    """The SQLite file a slice is written to: a temporary file beside `out`, made at once
    (so an unwritable place is known before any work), renamed to `out` by `finish`, removed
    by `discard` (or on leaving its `with` block with an error)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.partial = out.parent / f".{out.name}.{os.getpid()}.partial"
        self.partial.open("x").close()  # as any new file: the umask's mode
        self.url = f"sqlite:///{self.partial}"
        self._engine: Engine | None = None

    def engine(self) -> Engine:
        """The slice's engine, its schema migrated to the head on first use."""
        if self._engine is None:
            self._engine = create_engine(self.url)
            upgrade(self._engine)
        return self._engine

    def finish(self, *, replace: bool) -> None:
        """Make the file self-contained (no write-ahead log beside it) and move it to `out`."""
        self._close()
        with sqlite3.connect(self.partial) as conn:
            conn.execute("PRAGMA journal_mode = DELETE")
        conn.close()
        if not replace and self.out.exists():
            raise FileExistsError(17, "File exists", str(self.out))
        os.replace(self.partial, self.out)

    def discard(self) -> None:
        self._close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self.partial}{suffix}").unlink(missing_ok=True)

    def _close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def __enter__(self) -> SliceFile:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None:
            self.discard()


def source_url(reader: LogReader) -> str:
    """The source as the origin names it: password hidden, an SQLite path made absolute."""
    url = make_url(reader.engine.url)
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        url = url.set(database=str(Path(str(url.database)).resolve()))
    return display_url(url)


@dataclass(frozen=True, slots=True)
class Copied:
    """A slice written: its origin, and its hash chain as verified while it was copied."""

    origin: SliceOrigin
    chain: ChainReport


def copy_slice(
    reader: LogReader,
    target: SliceFile,
    chosen: SliceRange,
    base: Mapping[str, Any],
    selection: str,
    progress: Callable[[int], None] | None = None,
    page_size: int = PAGE_SIZE,
) -> Copied:
    """Write `chosen`'s batches and events of the log `reader` reads into `target`, with
    `base` (the state folded up to just before the first batch) as its base and the
    origin, in one transaction.

    Every hash is computed again as the events pass (chain.verify). A source whose chain
    is broken there is copied all the same, as it is: the report says where.
    """
    anchor = chosen.anchor
    stored_base = {
        **base,
        "anchor": {"batch": anchor.batch, "position": anchor.position, "hash": anchor.hash},
    }
    origin = SliceOrigin(
        source=source_url(reader),
        host=socket.gethostname(),
        selection=selection,
        exported_at=datetime.now(UTC).isoformat(),
        held=chosen,
        base_digest=LogBase(anchor.batch, anchor.position, anchor.hash, stored_base).digest,
        source_head=reader.chain_head(),
        version=__version__,
    )
    engine = target.engine()
    try:
        with connection(engine) as conn, conn.begin():
            batches = _written_batches(conn, _batch_rows(reader, chosen, page_size), page_size)
            copied = reader.read(after=anchor.position, until=chosen.last_position)
            events_ = _written_events(conn, copied, page_size, progress)
            chain = verify(batches, events_, (anchor.batch, anchor.position, anchor.hash))
            # verify stops at a broken batch; the rest is copied all the same.
            for _ in batches:
                pass
            for _ in events_:
                pass
            now = datetime.now(UTC)
            conn.execute(
                snapshots.insert(),
                [
                    {
                        "projection": BASE_NAME,
                        "position": anchor.position,
                        "state": stored_base,
                        "created_at": now,
                    },
                    {
                        "projection": SLICE_NAME,
                        "position": chosen.last_position,
                        "state": origin.to_state(),
                        "created_at": now,
                    },
                ],
            )
    except SQLAlchemyError as exc:
        raise translate(exc, display_url(engine), "writing the slice") from exc
    return Copied(origin, chain)


def _written_batches(
    conn: Connection, rows: Iterable[tuple[Any, ...]], page_size: int
) -> Iterator[BatchRow]:
    """The batch rows, each page written to the slice before its batches are handed on."""
    for page in _pages(rows, page_size):
        conn.exec_driver_sql(SQLITE.insert_batch, page)
        for batch, first, last, _, prev_hash, hash_ in page:
            yield BatchRow(int(batch), int(first), int(last), str(prev_hash), str(hash_))


def _written_events(
    conn: Connection,
    copied: Iterable[StoredEvent],
    page_size: int,
    progress: Callable[[int], None] | None,
) -> Iterator[StoredEvent]:
    """The events, each page written to the slice before its events are handed on."""
    for page in _pages(copied, page_size):
        conn.exec_driver_sql(SQLITE_INSERT_EVENTS, [_event_row(e) for e in page])
        if progress is not None:
            progress(page[-1].position)
        yield from page


def _batch_rows(reader: LogReader, chosen: SliceRange, page_size: int) -> Iterator[tuple[Any, ...]]:
    """The source's batch rows first..last, as the slice stores them, a page per query."""
    columns = (
        _B.batch,
        _B.first_position,
        _B.last_position,
        _B.recorded_at,
        _B.prev_hash,
        _B.hash,
    )
    cursor = chosen.first_batch - 1
    while cursor < chosen.last_batch:
        stmt = (
            select(*columns)
            .where(_B.batch > cursor, _B.batch <= chosen.last_batch)
            .order_by(_B.batch)
            .limit(page_size)
        )
        with _reading(reader, "reading the batches to export") as conn:
            rows = conn.execute(stmt).all()
        if not rows:
            return
        for batch, first, last, recorded_at, prev_hash, hash_ in rows:
            yield (batch, first, last, SQLITE.timestamp(recorded_at), prev_hash, hash_)
        cursor = int(rows[-1][0])


def _event_row(event: StoredEvent) -> tuple[Any, ...]:
    """An event as the append path writes it on SQLite (appendsql.SQLITE_INSERT_EVENTS):
    `data` as the canonical JSON text the hash covers."""
    return (
        event.position,
        SQLITE.timestamp(event.recorded_at),
        event.scheduler,
        event.instance,
        event.attempt,
        event.kind,
        event.uid,
        event.namespace,
        event.name,
        event.node,
        event.plugin,
        canonical_json(event.data),
    )


def _pages(items: Iterable[Row], size: int) -> Iterator[list[Row]]:
    page: list[Row] = []
    for item in items:
        page.append(item)
        if len(page) == size:
            yield page
            page = []
    if page:
        yield page
