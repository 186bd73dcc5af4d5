"""PostgreSQL's day partitions of `events`: naming, creating ahead, listing.

`events` is partitioned by day of `recorded_at` (migration 0002). Because a
batch's time never goes back along positions (the store clamps it), each
day holds one contiguous range of positions, so retention can drop whole
days and leave the log gap-free from its new start.

Partitions are made ahead of need (`DAYS_AHEAD`) outside the append path:
creating one takes a lock on `events` that waits for every open reader, and
the scheduler must never stall behind a long `eventsched query`. The
append path creates a missing day only as a last resort (clock jumped far
ahead, scheduler down for longer than `DAYS_AHEAD`).

Names and bounds must stay what migration 0002 creates (a test compares).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import Connection, text

#: Days created ahead of today.
DAYS_AHEAD = 7
#: How long making a partition may wait for readers before giving up (and trying later).
LOCK_TIMEOUT = "2s"
_NAME = re.compile(r"^events_(\d{8})$")

_PARTITIONED = text("SELECT c.relkind = 'p' FROM pg_class AS c WHERE c.oid = to_regclass('events')")
_LIST = text(
    "SELECT c.relname FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid "
    "WHERE i.inhparent = to_regclass('events')"
)


@dataclass(frozen=True, slots=True)
class Partition:
    """One day of the log: events with `start <= recorded_at < end`."""

    name: str
    day: date

    @property
    def start(self) -> datetime:
        return datetime(self.day.year, self.day.month, self.day.day, tzinfo=UTC)

    @property
    def end(self) -> datetime:
        return self.start + timedelta(days=1)


def _of_day(day: date) -> Partition:
    return Partition(f"events_{day:%Y%m%d}", day)


def partition_for(moment: datetime) -> Partition:
    return _of_day(moment.astimezone(UTC).date())


def days(start: datetime, end: datetime) -> Iterator[Partition]:
    """The partitions from the one holding `start` to the one holding `end`, inclusive."""
    day = start.astimezone(UTC).date()
    last = end.astimezone(UTC).date()
    while day <= last:
        yield _of_day(day)
        day += timedelta(days=1)


def is_partitioned(conn: Connection) -> bool:
    return bool(conn.execute(_PARTITIONED).scalar())


def create(conn: Connection, partition: Partition) -> None:
    """Create one day (no-op if it exists); the caller's transaction commits it."""
    conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
    conn.exec_driver_sql(
        f"CREATE TABLE IF NOT EXISTS {partition.name} PARTITION OF events "
        f"FOR VALUES FROM ('{partition.start.isoformat()}') TO ('{partition.end.isoformat()}')"
    )


def existing(conn: Connection) -> list[Partition]:
    """The day partitions of `events`, oldest first (other attached tables are ignored)."""
    found = []
    for (name,) in conn.execute(_LIST):
        match = _NAME.match(name)
        if match:
            found.append(_of_day(datetime.strptime(match.group(1), "%Y%m%d").date()))
    return sorted(found, key=lambda p: p.day)


def is_partition_name(name: str | None) -> bool:
    """A day partition's name (schema tools compare the parent `events`, not its days)."""
    return name is not None and _NAME.match(name) is not None


def is_missing_partition(exc: BaseException) -> bool:
    """The error PostgreSQL raises for a row no partition accepts (SQLSTATE 23514)."""
    orig = getattr(exc, "orig", exc)
    return getattr(orig, "sqlstate", None) == "23514" and "no partition" in str(orig)
