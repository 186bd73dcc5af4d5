"""Reading the event log back: events in order, by pod and attempt, the hash chain, snapshots.

`LogReader` implements `EventReader` (reader.py) over an engine. It is the
log opened only to read (explain, replay, the web page), and the reading
part of `EventStore` (store.py), which holds one beside its `Appender`.

Positions are gap-free in commit order (store.py says how appends keep
them so): a reader that has seen position P never later finds a new event
below P, which is what lets `read` page by position.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlalchemy as sa
import structlog
from sqlalchemy import ColumnElement, Engine, func, select, text
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from eventsched.events import batchreads, retention, slices
from eventsched.events.chain import GENESIS, BatchRow, ChainPoint, ChainReport, verify
from eventsched.events.engine import connection, create_engine, display_url, translate
from eventsched.events.errors import EventStoreError
from eventsched.events.migrate import check_schema
from eventsched.events.reader import ChosenVictim
from eventsched.events.record import StoredEvent
from eventsched.events.schema import (
    EVENT_COLUMNS,
    attempt_events,
    event_batches,
    events,
    kind_in,
    pod_uids,
    snapshots,
)
from eventsched.events.vocabulary import check_kind

log = structlog.get_logger(__name__)

#: Rows fetched per query when streaming: bounded memory for any log size.
PAGE_SIZE = 5000
#: Positions one filtered read covers at most (see `read`).
WINDOW = 50_000

_CHAIN_HEAD = text(
    "SELECT batch, last_position, hash FROM event_batches ORDER BY batch DESC LIMIT 1"
)
_BATCHES_WITHIN = text(
    "SELECT max(batch), max(last_position) FROM event_batches "
    "WHERE batch > :after AND last_position <= :until"
)
_NEXT_BATCH = text(
    "SELECT batch, last_position FROM event_batches WHERE batch > :after ORDER BY batch LIMIT 1"
)
_VERIFY_HEAD = text(
    "SELECT (SELECT max(batch) FROM event_batches), (SELECT max(position) FROM events)"
)
#: Decisions that chose one of the uids as a victim with no `evicted` logged for it
#: (the view `preemption_victims`, migration 0005).
_NOT_EVICTED = text(
    "SELECT attempt, victim_uid FROM preemption_victims "
    "WHERE evicted_position IS NULL AND victim_uid IN :uids ORDER BY position"
).bindparams(sa.bindparam("uids", expanding=True))


Opened = TypeVar("Opened")


@dataclass(frozen=True, slots=True)
class _Problem:
    """The batch a verified chain is reported broken at, and why."""

    batch: int
    detail: str


def open_log(url: str, build: Callable[[Engine], Opened], *, require_schema: bool = True) -> Opened:
    """`build` over an engine for the log at `url`, failing now (not at the first read or
    append) if the log is unusable; the engine is disposed of if anything fails.

    `require_schema` refuses a database whose schema is missing or at another
    revision, with the `eventsched db upgrade` command to run.
    """
    engine = create_engine(url)
    try:
        opened = build(engine)
        if require_schema:
            check_schema(engine)
        else:
            with connection(engine, read_only=True):
                pass
    except BaseException:
        engine.dispose()
        raise
    log.info("event log opened", url=display_url(engine), dialect=engine.dialect.name)
    return opened


class LogReader:
    """The log read through `engine`: an `EventReader`. Thread-safe; share one per process."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        #: The database URL with the password hidden, for messages.
        self.url = display_url(engine)

    @classmethod
    def connect(cls, url: str) -> LogReader:
        """Open the log at `url` to read it, refusing a schema that is not at the head."""
        return open_log(url, cls)

    def close(self) -> None:
        self.engine.dispose()

    # -- events -----------------------------------------------------------------

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
            conditions.append(kind_in(wanted))
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
        where = events.c.uid.in_(pod_uids(namespace, name))
        return self._select_events(where, f"reading pod {namespace}/{name}")

    def read_uid(self, uid: str) -> list[StoredEvent]:
        return self._select_events(events.c.uid == uid, f"reading pod uid {uid}")

    def read_attempt(self, attempt: str) -> list[StoredEvent]:
        stmt = attempt_events(attempt)
        stmt = stmt.order_by(stmt.selected_columns.position)
        return [_to_event(row) for row in self._fetch(stmt, f"reading attempt {attempt}")]

    def read_uids(self, uids: Collection[str], kinds: Collection[str]) -> list[StoredEvent]:
        """The events of these kinds of the pods with these uids, in order (by the uid index)."""
        wanted, chosen = sorted(set(uids)), frozenset(kinds)
        found: list[StoredEvent] = []
        for start in range(0, len(wanted), batchreads.IN_CHUNK):
            # The kinds are chosen here, not in SQL: given both, SQLite (which indexes
            # every row's kind) walks the kinds' index through the whole log (0.2 s for
            # 100 pods of a 225,000-event log, against 3 ms by their uids).
            where = events.c.uid.in_(wanted[start : start + batchreads.IN_CHUNK])
            found.extend(
                e for e in self._select_events(where, "reading pods' events") if e.kind in chosen
            )
        return sorted(found, key=lambda e: e.position)

    def victims_not_evicted(self, uids: Collection[str]) -> list[ChosenVictim]:
        """The decisions that chose one of `uids` as a victim and logged no eviction of it,
        in log order."""
        rows = self._fetch(_NOT_EVICTED.bindparams(uids=sorted(uids)), "reading victims")
        return [ChosenVictim(str(attempt), str(uid)) for attempt, uid in rows]

    def pods_labelled(self, namespace: str, key: str, value: str) -> list[str]:
        """The names of the pods of `namespace` ever observed with the label key=value, in
        the order first observed; found through the index on (namespace, name)."""
        label = events.c.data[("labels", key)].as_string()
        first = func.min(events.c.position).label("first")
        stmt = (
            select(events.c.name, first)
            .where(kind_in(["pod_observed"]), events.c.namespace == namespace, label == value)
            .group_by(events.c.name)
            .order_by(first)
        )
        rows = self._fetch(stmt, f"reading the pods labelled {key}={value} in {namespace}")
        return [str(name) for name, _ in rows]

    def last_position(self) -> int:
        """The position of the newest event; 0 for an empty log."""
        rows = self._fetch(select(func.coalesce(func.max(events.c.position), 0)), "reading")
        return int(rows[0][0])

    def batch_committed(self, batch: int, batch_hash: str) -> bool:
        """Whether batch number `batch` is in the log with this hash: settles an AppendInDoubtError.

        The hash covers every event with its position and timestamp, so no
        other writer's batch can match it.
        """
        t = event_batches.c
        stmt = select(t.batch).where(t.batch == batch, t.hash == batch_hash)
        return bool(self._fetch(stmt, "checking whether an append was committed"))

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
        problem = self._start_problem(base, report) if report.ok else None
        if problem is not None:
            report = ChainReport(
                False,
                report.batches,
                problem.batch,
                problem.detail,
                report.last_hash,
                report.events,
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

    def batches(self, numbers: Collection[int]) -> list[BatchRow]:
        """The stored batches with these numbers, in order (a number not stored has none)."""
        return batchreads.batches(self._fetch, numbers)

    def batches_holding(self, positions: Collection[int]) -> list[BatchRow]:
        """The batches that hold these positions, in order (batchreads.py)."""
        return batchreads.batches_holding(self._fetch, positions)

    def _start_problem(
        self, base: retention.LogBase | None, report: ChainReport
    ) -> _Problem | None:
        """Why what the verified chain starts from cannot be trusted, or None: a pruned log's
        base must match its chained prune; a slice's base and ends, its origin (slices.py)."""
        origin = slices.read_origin(self)
        if origin is not None:
            detail = slices.slice_problem(origin, base, report)
            return None if detail is None else _Problem(origin.held.first_batch, detail)
        if base is not None:
            detail = retention.base_problem(self, base)
            return None if detail is None else _Problem(base.batch + 1, detail)
        return None

    def chain_head(self) -> ChainPoint:
        """The last batch appended, as a point to verify from (ChainPoint() when none)."""
        rows = self._fetch(_CHAIN_HEAD, "reading the hash chain's head")
        if not rows:
            return ChainPoint()
        batch, position, hash_ = rows[0]
        return ChainPoint(int(batch), int(position), str(hash_))

    def verify_chain_since(
        self, start: ChainPoint, max_events: int | None = None
    ) -> tuple[ChainReport, ChainPoint]:
        """Verify the batches appended after `start`, which is trusted (a point an earlier
        verification reached, or the head when a watcher began); returns the report and
        the point reached (`start` again when the chain is broken). `max_events` bounds the
        work: whole batches up to that many events past `start` (at least one batch)."""
        last_batch, last_position = self._verify_bound(start, max_events)
        report = verify(
            self._batches(start.batch, last_batch),
            self.read(after=start.position, until=last_position),
            (start.batch, start.position, start.hash),
        )
        if not report.ok:
            return report, start
        return report, ChainPoint(
            start.batch + report.batches, start.position + report.events, report.last_hash
        )

    def _verify_bound(self, start: ChainPoint, max_events: int | None) -> tuple[int, int]:
        """(last batch, last position) a verification from `start` goes to."""
        if max_events is not None:
            within = _BATCHES_WITHIN.bindparams(
                after=start.batch, until=start.position + max_events
            )
            rows = self._fetch(within, "verifying the hash chain")
            if rows and rows[0][0] is not None:
                return int(rows[0][0]), int(rows[0][1])
            rows = self._fetch(
                _NEXT_BATCH.bindparams(after=start.batch), "verifying the hash chain"
            )
            if rows:
                return int(rows[0][0]), int(rows[0][1])
        head = self._fetch(_VERIFY_HEAD, "verifying the hash chain")[0]
        return int(head[0] or 0), int(head[1] or 0)

    def _batches(self, after: int, last_batch: int) -> Iterator[BatchRow]:
        cursor = after
        t = event_batches.c
        base = batchreads.BATCH_ROWS.order_by(t.batch)
        while cursor < last_batch:
            stmt = base.where(t.batch > cursor, t.batch <= last_batch).limit(PAGE_SIZE)
            rows = self._fetch(stmt, "verifying the hash chain")
            for row in rows:
                yield batchreads.batch_row(row)
            if len(rows) < PAGE_SIZE:
                return
            cursor = int(rows[-1][0])

    # -- snapshots --------------------------------------------------------------

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
