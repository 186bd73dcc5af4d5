"""The event log opened to append and read: batches appended atomically, read back in order.

`EventStore` holds two parts over one engine: a `LogReader` (logreader.py:
events, the hash chain, snapshots read) and an `Appender` (append.py, the
scheduler's hot path). It is an `EventReader` (reader.py) too, so a writer can
hand it to whatever only reads; the read paths themselves never import this
module.

Positions are gap-free in commit order: every append takes the same
short lock (PostgreSQL: `LOCK TABLE event_batches IN EXCLUSIVE MODE`,
which readers do not wait for; SQLite: the write lock `BEGIN IMMEDIATE`
already holds) before reading the last position, and keeps it until
commit. A reader that has seen position P therefore never later finds a
new event below P, which is what lets `read` page by position.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from sqlalchemy import Connection, Engine, delete, select
from sqlalchemy.exc import SQLAlchemyError

from eventsched.events.append import Appender
from eventsched.events.chain import BatchRow, ChainPoint, ChainReport
from eventsched.events.engine import connection, display_url, translate
from eventsched.events.logreader import LogReader, open_log
from eventsched.events.partitions import DAYS_AHEAD
from eventsched.events.projections import SNAPSHOT_NAME, Projections
from eventsched.events.reader import ChosenVictim
from eventsched.events.record import EventRecord, StoredEvent
from eventsched.events.schema import snapshots


class EventStore:
    """The append-only log of every input and decision. Thread-safe; share one per process.

    Reading is its `reader`'s and appending its `appender`'s; the methods below
    pass each call on to the part that does it.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        #: The database URL with the password hidden, for messages.
        self.url = display_url(engine)
        self.reader = LogReader(engine)
        self.appender = Appender(engine)

    @classmethod
    def connect(cls, url: str, *, require_schema: bool = True) -> EventStore:
        """Open the log at `url`, failing now (not at the first append) if it is unusable.

        `require_schema` refuses a database whose schema is missing or at
        another revision, with the `eventsched db upgrade` command to run.
        """
        return open_log(url, cls, require_schema=require_schema)

    @property
    def clock(self) -> Callable[[], datetime]:
        """The wall clock `recorded_at` comes from (replaceable to test a clock stepped back)."""
        return self.appender.clock

    @clock.setter
    def clock(self, clock: Callable[[], datetime]) -> None:
        self.appender.clock = clock

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

    # -- append: the appender's ---------------------------------------------------

    def append(self, records: Sequence[EventRecord]) -> list[int]:
        """Append `records` as one batch, atomically; returns their positions."""
        return self.appender.append(records)

    def append_stored(self, records: Sequence[EventRecord]) -> list[StoredEvent]:
        """Like `append`, returning the events exactly as `read` will give them back."""
        return self.appender.append_stored(records)

    def append_locked(self, conn: Connection, records: Sequence[EventRecord]) -> list[StoredEvent]:
        """Append `records` as one batch inside the caller's transaction on `conn`."""
        return self.appender.append_locked(conn, records)

    def ensure_partitions(self, days_ahead: int = DAYS_AHEAD) -> bool:
        """Make the day partitions from today to `days_ahead` days on; True when all exist."""
        return self.appender.ensure_partitions(days_ahead)

    # -- read: the reader's (the EventReader) ----------------------------------------

    def read(
        self,
        after: int = 0,
        until: int | None = None,
        kinds: Collection[str] | None = None,
        limit: int | None = None,
    ) -> Iterator[StoredEvent]:
        """Events with `after < position <= until`, in order, fetched a page at a time."""
        return self.reader.read(after, until, kinds, limit)

    def read_pod(self, namespace: str, name: str) -> list[StoredEvent]:
        return self.reader.read_pod(namespace, name)

    def read_uid(self, uid: str) -> list[StoredEvent]:
        return self.reader.read_uid(uid)

    def read_attempt(self, attempt: str) -> list[StoredEvent]:
        return self.reader.read_attempt(attempt)

    def read_uids(self, uids: Collection[str], kinds: Collection[str]) -> list[StoredEvent]:
        return self.reader.read_uids(uids, kinds)

    def victims_not_evicted(self, uids: Collection[str]) -> list[ChosenVictim]:
        return self.reader.victims_not_evicted(uids)

    def pods_labelled(self, namespace: str, key: str, value: str) -> list[str]:
        return self.reader.pods_labelled(namespace, key, value)

    def last_position(self) -> int:
        return self.reader.last_position()

    def batch_committed(self, batch: int, batch_hash: str) -> bool:
        """Whether batch number `batch` is in the log with this hash: settles an AppendInDoubtError."""
        return self.reader.batch_committed(batch, batch_hash)

    def batches(self, numbers: Collection[int]) -> list[BatchRow]:
        return self.reader.batches(numbers)

    def batches_holding(self, positions: Collection[int]) -> list[BatchRow]:
        return self.reader.batches_holding(positions)

    def verify_chain(self) -> ChainReport:
        return self.reader.verify_chain()

    def chain_head(self) -> ChainPoint:
        return self.reader.chain_head()

    def verify_chain_since(
        self, start: ChainPoint, max_events: int | None = None
    ) -> tuple[ChainReport, ChainPoint]:
        return self.reader.verify_chain_since(start, max_events)

    def latest_snapshot(self, projection: str) -> tuple[int, dict[str, Any]] | None:
        return self.reader.latest_snapshot(projection)

    # -- snapshots ----------------------------------------------------------------

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

    def drop_snapshots_after(self, position: int) -> int:
        """Delete snapshots of positions the log does not hold (it lost its tail); how many."""
        with connection(self.engine) as conn:
            try:
                with conn.begin():
                    done = conn.execute(delete(snapshots).where(snapshots.c.position > position))
            except SQLAlchemyError as exc:
                raise translate(exc, self.url, "dropping snapshots past the log's head") from exc
        return done.rowcount


def save_snapshot(store: EventStore, projections: Projections) -> None:
    """Store the projections so the next `rebuild` folds only newer events."""
    store.write_snapshot(SNAPSHOT_NAME, projections.position, projections.to_state())
