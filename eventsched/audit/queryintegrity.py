"""Whether the rows `eventsched query` printed come from a log that verifies.

A result that names log positions (a column named `position` or
`evicted_position`: every view has one) is checked where it stands: the
batches holding those positions (integrity.py), and the contradictions among
the events of the pods its `uid`, `preemptor_uid` or `victim_uid` columns
name, at most MAX_PODS of them. A result without positions (a count, a sum) came from rows it does not
name, so the chain itself is verified: the newest NEWEST_EVENTS events of it
by default (about a second), or all of it with `--verify all` (about 40 µs an
event of 750 bytes on a 2-core machine: 40 s for a million; docs/audit.md has
the measurements). The note says how far.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from eventsched.audit.contradictions import LEDGER_KINDS, contradictions
from eventsched.audit.integrity import ChainBreak, Integrity, check_batches
from eventsched.audit.query import QueryResult
from eventsched.events.chain import ChainPoint, ChainReport
from eventsched.events.reader import EventReader

#: How `--verify` checks a result: the rows shown (and, without positions, the newest
#: part of the chain), the whole chain, or nothing.
MODES = ("shown", "all", "none")
#: Events of the newest part of the chain a result without positions verifies.
NEWEST_EVENTS = 20_000
#: Pods whose events are checked for contradictions, at most.
MAX_PODS = 1000
#: The columns that hold log positions, and pod uids (the views' names for them).
POSITION_COLUMNS = frozenset({"position", "evicted_position"})
UID_COLUMNS = frozenset({"uid", "preemptor_uid", "victim_uid"})


@dataclass(slots=True)
class ResultCheck:
    integrity: Integrity
    #: What was checked, when it is less than the result depends on ("" otherwise).
    note: str = ""


def check_result(reader: EventReader, result: QueryResult, mode: str) -> ResultCheck | None:
    """The check `mode` asks for (None for "none")."""
    if mode == "none":
        return None
    head = reader.last_position()
    positions = {p for p in _values(result, POSITION_COLUMNS, int) if 0 < p <= head}
    if mode == "all":
        check = verify_chain(reader, None)
        check.integrity.found(check_batches(reader, positions).breaks)
    elif positions:
        check = ResultCheck(check_batches(reader, positions))
    else:
        check = verify_chain(reader, NEWEST_EVENTS)
    uids = sorted(set(_values(result, UID_COLUMNS, str)))
    if uids:
        said = contradictions(reader.read_uids(uids[:MAX_PODS], LEDGER_KINDS))
        check.integrity.found(said=said)
        if len(uids) > MAX_PODS:
            check.note = _join(
                check.note, f"the events of {MAX_PODS} of the {len(uids)} pods named checked"
            )
    return check


def verify_chain(reader: EventReader, newest: int | None) -> ResultCheck:
    """The whole chain (newest None), or its newest `newest` events' batches."""
    head = reader.last_position()
    if newest is None or head <= newest:
        report = reader.verify_chain()
        return ResultCheck(_from_report(report, ChainPoint(), head, whole=True))
    rows = reader.batches_holding([head - newest + 1])
    if not rows:
        return verify_chain(reader, None)
    first = rows[0]
    start = ChainPoint(first.batch - 1, first.first_position - 1, first.prev_hash)
    report, _ = reader.verify_chain_since(start)
    note = (
        f"hash chain verified for the newest {head - start.position} events (positions "
        f"{start.position + 1}..{head}); older ones not checked: --verify all checks them"
    )
    return ResultCheck(_from_report(report, start, head, whole=False), note)


def _from_report(report: ChainReport, start: ChainPoint, head: int, *, whole: bool) -> Integrity:
    integrity = Integrity(batches=report.batches, events=report.events, newest_position=head)
    if whole and report.ok:
        integrity.verified_through = start.position + report.events
    if not report.ok:
        first = start.position + report.events + 1
        batch = report.first_broken_batch
        integrity.found([ChainBreak(first, head, report.detail, batch, "chain")])
    return integrity


def _values(result: QueryResult, names: frozenset[str], kind: type) -> Iterator[Any]:
    """The non-null values of the columns with these names, as `kind`."""
    columns = [i for i, name in enumerate(result.columns) if name.lower() in names]
    for row in result.rows:
        for i in columns:
            value = row[i]
            if value is None or value == "":
                continue
            try:
                yield kind(value)
            except (TypeError, ValueError):
                continue


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)
