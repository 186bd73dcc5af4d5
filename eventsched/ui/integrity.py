"""What each page says about whether the events it shows can be trusted.

A pod's pages take the check `explain` made of the pod's events (the batches
holding them, and their contradictions); a page listing events (a node's, the
search's, the overview's recent decisions) checks the batches holding its rows,
and the contradictions among the listed pods' events. Either checks batches
newest first while they fit in PAGE_EVENTS events, so that a page costs at most
about a fifth of a second more (a log's first batch can hold every object a
starting scheduler listed: 56,000 events for 25,000 pods); it says how many
it left unchecked. Every page adds what the chain check of the whole log
(chain.py) found: a break at or before the newest event it shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from eventsched.audit.contradictions import LEDGER_KINDS, contradictions
from eventsched.audit.explain import PodExplanation
from eventsched.audit.integrity import (
    ChainBreak,
    Integrity,
    check_batches,
    check_events,
    describe,
    note_whole_chain,
    scope,
)
from eventsched.events.reader import EventReader
from eventsched.ui.chain import ChainStatus
from eventsched.ui.reads import Row

#: Events of the batches a page checks, at most: 0.2 s on a 2-core machine (40 µs an
#: event, reading and hashing; 0.4 s when other work shares the cores).
PAGE_EVENTS = 5_000


@dataclass(slots=True)
class PageIntegrity:
    """The page's verdict: its sentences, and what to mark where it is shown."""

    ok: bool
    #: One sentence per finding.
    lines: list[str]
    #: What was checked, in words.
    scope: str
    #: Positions of the events to mark (in a broken batch, or contradicting).
    positions: set[int] = field(default_factory=set)
    #: Attempts whose events contradict each other.
    attempts: set[str] = field(default_factory=set)


def of_pod(explanation: PodExplanation, chain: ChainStatus) -> PageIntegrity:
    """A pod's pages: the check explain made, with the whole chain's status."""
    integrity = explanation.integrity or Integrity()
    found = _page(integrity, chain, 0, [])
    found.attempts.update(_broken_attempts(explanation, integrity))
    return found


def _broken_attempts(explanation: PodExplanation, integrity: Integrity) -> set[str]:
    """The attempts with events in a broken stretch: an attempt's events lie between its
    start and the next attempt's (a pod's attempts follow one another)."""
    attempts = explanation.attempts
    broken = set()
    for i, attempt in enumerate(attempts):
        start = attempt.started_position
        end = attempts[i + 1].started_position - 1 if i + 1 < len(attempts) else None
        for found in integrity.breaks:
            before_end = end is None or found.first_position <= end
            after_start = found.found_by == "chain" or found.last_position >= start
            if before_end and after_start:
                broken.add(attempt.attempt)
    return broken


def of_rows(
    reader: EventReader, rows: Sequence[Row], chain: ChainStatus, newest: int | None = None
) -> PageIntegrity:
    """A page listing `rows`: their batches, their pods' contradictions and the whole
    chain's status at or before `newest` (the newest row's position by default; a page
    that also counts events up to the head gives the head)."""
    positions = [r.position for r in rows]
    integrity = check_batches(reader, positions, PAGE_EVENTS)
    uids = {r.uid for r in rows if r.uid}
    if uids:
        said = contradictions(reader.read_uids(uids, LEDGER_KINDS))
        integrity.found(said=[c for c in said if c.uid in uids])
    return _page(integrity, chain, newest or 0, rows)


def of_pods(
    reader: EventReader, pods: Iterable[tuple[str, str]], chain: ChainStatus
) -> PageIntegrity:
    """A page of several pods (a gang's members): each pod's events, as a pod's page."""
    events = [e for namespace, name in pods for e in reader.read_pod(namespace, name)]
    return _page(check_events(reader, events, max_events=PAGE_EVENTS), chain, 0, [])


def of_fold(chain: ChainStatus, through: int) -> PageIntegrity:
    """A page of what the log folds to (the cluster at a position, with what changed by
    `through`): every event up to `through` counts, so only the whole chain's check can
    vouch for them."""
    found = _page(Integrity(newest_position=through), chain, through, [])
    found.scope = (
        f"the events folded, through position {through}, by the check of the whole chain "
        f"(verified through position {chain.verified_position})"
    )
    return found


def _page(
    integrity: Integrity, chain: ChainStatus, newest: int, rows: Iterable[Row]
) -> PageIntegrity:
    note_whole_chain(integrity, chain.verified_position, _chain_break(chain), newest)
    marked = integrity.flagged_positions()
    bad_uids = {c.uid for c in integrity.contradictions}
    marked.update(r.position for r in rows if r.uid in bad_uids)
    marked.update(r.position for r in rows if integrity.broken_at(r.position) is not None)
    return PageIntegrity(
        integrity.ok,
        describe(integrity),
        _scope(integrity, chain),
        marked,
        integrity.flagged_attempts(),
    )


def _chain_break(chain: ChainStatus) -> ChainBreak | None:
    if chain.state != "broken" or chain.broken_batch is None:
        return None
    detail = chain.detail.removeprefix(f"batch {chain.broken_batch}: ")
    return ChainBreak(
        chain.verified_position + 1, chain.head_position, detail, chain.broken_batch, "chain"
    )


def _scope(integrity: Integrity, chain: ChainStatus) -> str:
    if chain.state == "checking":
        return scope(integrity) + " (the check of the whole chain is under way)"
    if chain.state == "unavailable":
        return scope(integrity) + f" (the whole chain could not be checked: {chain.detail})"
    return scope(integrity)
