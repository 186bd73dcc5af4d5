"""The hash chain's batch rows, read by number and by the positions they hold.

`LogReader` (logreader.py) answers `EventReader.batches` and `batches_holding` with
these, through its own `fetch` (a read that retries a stale connection once).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Sequence
from typing import Any

from sqlalchemy import select

from eventsched.events.chain import BatchRow
from eventsched.events.schema import event_batches

#: A read: a statement and what it is doing (for the error), its rows.
Fetch = Callable[[Any, str], list[Sequence[Any]]]

#: Values one `IN (...)` list carries at most (SQLite allows 32,766 bound parameters).
IN_CHUNK = 1000

BATCH_ROWS = select(
    event_batches.c.batch,
    event_batches.c.first_position,
    event_batches.c.last_position,
    event_batches.c.prev_hash,
    event_batches.c.hash,
)


def batch_row(row: Sequence[Any]) -> BatchRow:
    return BatchRow(int(row[0]), int(row[1]), int(row[2]), str(row[3]), str(row[4]))


def batches(fetch: Fetch, numbers: Collection[int]) -> list[BatchRow]:
    """The stored batches with these numbers, in order (a number not stored has none)."""
    wanted = sorted(set(numbers))
    found: list[BatchRow] = []
    for start in range(0, len(wanted), IN_CHUNK):
        stmt = BATCH_ROWS.where(event_batches.c.batch.in_(wanted[start : start + IN_CHUNK]))
        found.extend(batch_row(r) for r in fetch(stmt, "reading the hash chain"))
    return sorted(found, key=lambda b: b.batch)


def batches_holding(fetch: Fetch, positions: Collection[int]) -> list[BatchRow]:
    """The batches that hold these positions, in order; a position no batch holds (an
    event written around the append) has none. One probe of the index on
    last_position (migration 0011) per batch found."""
    wanted = sorted(set(positions))
    found: list[BatchRow] = []
    i = 0
    while i < len(wanted):
        stmt = (
            BATCH_ROWS.where(event_batches.c.last_position >= wanted[i])
            .order_by(event_batches.c.last_position)
            .limit(1)
        )
        rows = fetch(stmt, "reading the hash chain")
        if not rows:
            break
        row = batch_row(rows[0])
        inside = bisect_left(wanted, row.first_position, i)
        after = bisect_right(wanted, row.last_position, inside)
        if after > inside:
            found.append(row)
        i = after
    return found
