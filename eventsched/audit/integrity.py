"""Whether what a reader shows can be trusted: the hash chain where it shows events, and
whether the events of the pods it shows contradict each other.

Three checks, each as cheap as what is shown:

- the batches that hold the events shown (`check_batches`): each one's hash
  recomputed from its stored events and its prev_hash, and its links to the
  batches beside it (its prev_hash against the previous batch's hash, its
  hash against the next one's prev_hash). An event edited, removed or
  inserted behind the append-only triggers breaks one of these, so a reader
  finds it in O(batches shown), however long the log. What this cannot see:
  an edit in a batch not shown (an observation a decision read), which only
  the whole chain (`eventsched replay`, the web page's chain check) finds,
  and the newest batch rewritten with its hash (only a copy of the head hash
  kept elsewhere finds that);
- the whole chain's status where a long-running process has it
  (`note_whole_chain`): a break at or before the newest event shown;
- the contradictions among the shown pods' own events (contradictions.py).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from eventsched.audit.contradictions import Contradiction, contradictions
from eventsched.events.chain import BatchRow, verify
from eventsched.events.reader import EventReader
from eventsched.events.record import StoredEvent


@dataclass(frozen=True, slots=True)
class ChainBreak:
    """Where the hash chain does not verify: a batch, or positions no batch holds."""

    first_position: int
    last_position: int
    detail: str
    #: The batch (None: events in no batch, written around the append).
    batch: int | None = None
    #: "shown": found in a batch holding events shown; "chain": the whole chain's check
    #: broke there, at or before the events shown.
    found_by: str = "shown"


@dataclass(slots=True)
class Integrity:
    """What the checks of the events a reader shows found."""

    #: Batches checked and the events they hold; batches left unchecked (over the
    #: budget) and theirs.
    batches: int = 0
    events: int = 0
    unchecked: int = 0
    unchecked_events: int = 0
    breaks: list[ChainBreak] = field(default_factory=list)
    contradictions: list[Contradiction] = field(default_factory=list)
    #: How far the whole chain is known to verify from the log's base (None: not
    #: checked here; only the batches shown are).
    verified_through: int | None = None
    #: The newest position the check was given (what "at or before" is measured against).
    newest_position: int = 0
    #: No break and no contradiction (kept a field, so --json has it).
    ok: bool = True

    def found(self, breaks: Iterable[ChainBreak] = (), said: Iterable[Contradiction] = ()) -> None:
        """Add findings (each once)."""
        self.breaks.extend(b for b in breaks if b not in self.breaks)
        self.breaks.sort(key=lambda b: b.first_position)
        self.contradictions.extend(c for c in said if c not in self.contradictions)
        self.ok = not self.breaks and not self.contradictions

    def flagged_positions(self) -> set[int]:
        """The positions of the contradicting events and of those they contradict (a
        position in a broken batch is `broken_at`'s)."""
        marked = {c.position for c in self.contradictions}
        marked.update(c.earlier_position for c in self.contradictions)
        return marked

    def broken_at(self, position: int) -> ChainBreak | None:
        """The break that makes `position` untrustworthy: its batch, or a break of the
        whole chain at or before it."""
        for found in self.breaks:
            inside = found.first_position <= position <= found.last_position
            after = found.found_by == "chain" and position >= found.first_position
            if inside or after:
                return found
        return None

    def flagged_attempts(self) -> set[str]:
        return {c.attempt for c in self.contradictions if c.attempt}


def check_batches(
    reader: EventReader, positions: Collection[int], max_events: int | None = None
) -> Integrity:
    """Recompute the batches holding `positions` and check their links, newest first,
    while they fit in `max_events` events (None: all of them); a batch that does not
    fit is counted as unchecked."""
    wanted = sorted(set(positions))
    result = Integrity(newest_position=wanted[-1] if wanted else 0)
    if not wanted:
        return result
    rows = reader.batches_holding(wanted)
    broken = _outside(wanted, rows)
    numbers = {row.batch for row in rows}
    around = reader.batches({n + d for n in numbers for d in (-1, 1)} - numbers)
    by_number = {row.batch: row for row in [*rows, *around]}
    for row in reversed(rows):
        size = row.last_position - row.first_position + 1
        if max_events is not None and result.events + size > max_events:
            result.unchecked += 1
            result.unchecked_events += size
            continue
        problem = _batch_problem(reader, row, by_number)
        if problem:
            broken.append(ChainBreak(row.first_position, row.last_position, problem, row.batch))
        result.batches += 1
        result.events += size
    result.found(broken)
    return result


def _batch_problem(reader: EventReader, row: BatchRow, by_number: dict[int, BatchRow]) -> str:
    """What does not verify about one batch ('' when it does)."""
    stored = reader.read(after=row.first_position - 1, until=row.last_position)
    report = verify([row], stored, (row.batch - 1, row.first_position - 1, row.prev_hash))
    if not report.ok:
        return report.detail
    before = by_number.get(row.batch - 1)
    after = by_number.get(row.batch + 1)
    if before is not None and before.hash != row.prev_hash:
        return (
            f"batch {row.batch}'s prev_hash does not match batch {before.batch}'s hash: "
            "one of the two was rewritten"
        )
    if after is not None and after.prev_hash != row.hash:
        return (
            f"batch {after.batch}'s prev_hash does not match batch {row.batch}'s hash: "
            f"batch {row.batch} was rewritten, its hash with it"
        )
    return ""


def _outside(wanted: list[int], rows: list[BatchRow]) -> list[ChainBreak]:
    """The positions no batch holds, one break per run of them."""
    breaks: list[ChainBreak] = []
    held = iter(rows)
    row = next(held, None)
    for position in wanted:
        while row is not None and row.last_position < position:
            row = next(held, None)
        if row is not None and row.first_position <= position:
            continue
        if breaks and breaks[-1].last_position == position - 1:
            last = breaks.pop()
            breaks.append(ChainBreak(last.first_position, position, last.detail))
            continue
        breaks.append(
            ChainBreak(
                position,
                position,
                "written around the store's append, or its batch was deleted",
            )
        )
    return breaks


def check_events(
    reader: EventReader,
    events: Iterable[StoredEvent],
    also: Collection[int] = (),
    max_events: int | None = None,
) -> Integrity:
    """The batches holding `events` (and the positions `also`), and the contradictions
    among the events (of one pod or several, in log order)."""
    shown = sorted(events, key=lambda e: e.position)
    result = check_batches(reader, {e.position for e in shown} | set(also), max_events)
    result.found(said=contradictions(shown))
    return result


def note_whole_chain(
    integrity: Integrity, verified_through: int, broken: ChainBreak | None, newest: int = 0
) -> None:
    """Add what a check of the whole chain found: verified from the base through
    `verified_through`, and `broken` (found_by "chain"), which counts when it is at or
    before the newest event shown (`newest`, else the newest the check was given)."""
    integrity.verified_through = verified_through
    newest = max(newest, integrity.newest_position)
    if broken is None or broken.first_position > newest:
        return
    if not any(b.batch == broken.batch for b in integrity.breaks):  # said already, closer
        integrity.found([broken])


def describe(integrity: Integrity) -> list[str]:
    """One sentence per finding, for a terminal or a page."""
    lines = [_break_sentence(b) for b in integrity.breaks]
    lines.extend(
        f"{c.pod or c.uid}: its events contradict each other: {c.detail}"
        for c in integrity.contradictions
    )
    return lines


def _break_sentence(found: ChainBreak) -> str:
    where = (
        f"positions {found.first_position}..{found.last_position}"
        if found.last_position > found.first_position
        else f"position {found.first_position}"
    )
    if found.batch is None:
        return f"hash chain broken: no batch holds {where} ({found.detail})"
    if found.found_by == "chain":
        return (
            f"hash chain broken at batch {found.batch} (from position {found.first_position}), "
            f"at or before what is shown: {found.detail}"
        )
    return f"hash chain broken at batch {found.batch} ({where}), which holds events shown: {found.detail}"


def scope(integrity: Integrity) -> str:
    """What was checked, in words."""
    checked = f"{integrity.batches} batch(es) holding the events shown ({integrity.events} events)"
    if integrity.unchecked:
        checked += (
            f"; {integrity.unchecked} more ({integrity.unchecked_events} events) not checked "
            "here, over this page's budget (`eventsched explain` checks them all)"
        )
    if integrity.verified_through is not None:
        checked += f"; the whole chain verified through position {integrity.verified_through}"
    return checked
