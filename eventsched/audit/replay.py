"""Replay: rebuild the scheduler's view at every attempt from the log alone, and decide again.

The one rule makes this exact: everything a decision depended on is in the
log before the decision (nodes and pods as observed, reservations, the
profile, the seed, the start index, the values plugins read outside). So
folding the events in order through the same `ClusterView.apply` the scheduler uses and
running the recorded profile's scheduling cycle at each `attempt_started`
must give the recorded `selected` node (or the recorded failure). Any
attempt that does not is reported with the first decision that differs.

Only the scheduling cycle is re-run (PreFilter to selection); binding cycles
are folded from their recorded outcomes, since they depend on the API's
answers, which the log holds as `bound` / `bind_failed`.

This module chooses the attempts and reports; folding and deciding again is
the `Replayer`'s (replayer.py), which counterfactual replay
(counterfactual.py) shares.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from eventsched.audit.base import from_base
from eventsched.audit.replayer import Mismatch, Replayer, walk
from eventsched.audit.replayledger import DIFFERS, REPRODUCED, SKIPPED, AttemptLedger
from eventsched.events.reader import EventReader
from eventsched.events.record import StoredEvent
from eventsched.framework import Registry


@dataclass(slots=True)
class ReplayReport:
    attempts: int = 0
    reproduced: int = 0
    skipped: list[dict[str, Any]] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    events: int = 0
    last_position: int = 0

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def to_dict(self) -> dict[str, Any]:
        return {
            "attempts": self.attempts,
            "reproduced": self.reproduced,
            "mismatches": [vars_of(m) for m in self.mismatches],
            "skipped": self.skipped,
            "events": self.events,
            "lastPosition": self.last_position,
        }


def vars_of(obj: Any) -> dict[str, Any]:
    return {name: getattr(obj, name) for name in obj.__slots__}


#: A bound of a Selection: a log position, or an aware time.
Bound = int | datetime


@dataclass(slots=True)
class Selection:
    """Which attempts to check; every event is still folded, so the view is complete.

    A position bound keeps attempts whose `attempt_started` is after `since` /
    at or before `until`; a time bound (aware datetime) keeps attempts whose
    `attempt_started` was recorded at or after `since` / at or before `until`.
    Attempts are chosen by their first event because that is where the view
    they were decided on is fixed; only the checking is narrowed, never the fold.
    """

    since: Bound = 0
    until: Bound | None = None
    pod: str | None = None

    def __post_init__(self) -> None:
        for name in ("since", "until"):
            bound = getattr(self, name)
            if isinstance(bound, datetime) and bound.tzinfo is None:
                # The log keeps aware UTC times; a naive one cannot be compared with them.
                raise ValueError(f"Selection.{name}: naive datetime {bound!r}, give a timezone")

    def wants(self, started: StoredEvent) -> bool:
        """Whether the attempt that `started` (its `attempt_started` event) is to be checked."""
        if isinstance(self.since, datetime):
            if started.recorded_at < self.since:
                return False
        elif started.position <= self.since:
            return False
        if isinstance(self.until, datetime):
            if started.recorded_at > self.until:
                return False
        elif self.until is not None and started.position > self.until:
            return False
        return self.pod is None or started.pod_key == self.pod

    def to_dict(self) -> dict[str, Any]:
        """The bounds as JSON: positions as numbers, times as ISO 8601 in UTC."""
        return {"since": _bound_json(self.since), "until": _bound_json(self.until), "pod": self.pod}


def _bound_json(bound: Bound | None) -> int | str | None:
    return bound.astimezone(UTC).isoformat() if isinstance(bound, datetime) else bound


def replay(
    reader: EventReader,
    registry: Registry,
    selection: Selection | None = None,
    progress: Callable[[int], None] | None = None,
) -> ReplayReport:
    """Replay the whole log (folding every event), checking the attempts `selection` wants."""
    selection = selection or Selection()
    replayer = Replayer(registry, *from_base(reader))
    report = ReplayReport()
    checked = AttemptLedger()

    def seen(position: int) -> None:
        report.last_position = position
        if progress is not None:
            progress(position)

    def fold(event: StoredEvent) -> None:
        replayer.fold(event)
        for found in checked.see(event):
            _contradicted(report, found.was, found.mismatch)

    for events in walk(reader.read(), fold, seen):
        first = events[0]
        if not selection.wants(first):
            continue
        report.attempts += 1
        mismatch, skipped = replayer.replay_attempt(events)
        if skipped:
            report.skipped.append(skipped_attempt(first, skipped))
        elif mismatch is None:
            report.reproduced += 1
        else:
            report.mismatches.append(mismatch)
        outcome = SKIPPED if skipped else REPRODUCED if mismatch is None else DIFFERS
        node = next((d.node for d in replayer.last_decisions if d.kind == "selected"), None)
        checked.checked(first, node, outcome)
    report.events = replayer.folded
    report.mismatches.sort(key=lambda m: m.position)
    return report


def _contradicted(report: ReplayReport, was: str, mismatch: Mismatch) -> None:
    """A checked attempt the log's later events contradict: a difference, whatever it was
    counted as (reproduced, or skipped)."""
    if was == REPRODUCED:
        report.reproduced -= 1
    elif was == SKIPPED:
        report.skipped = [s for s in report.skipped if s["attempt"] != mismatch.attempt]
    report.mismatches.append(mismatch)


def skipped_attempt(started: StoredEvent, reason: str) -> dict[str, Any]:
    return {"attempt": started.attempt, "position": started.position, "reason": reason}


@dataclass(slots=True)
class FullScores:
    """Every node's per-plugin scores for one attempt, recomputed by replay."""

    attempt: str
    scored: Mapping[str, Any] | None
    reproduced: bool
    note: str = ""


def full_scores(
    reader: EventReader, registry: Registry, attempts: set[str]
) -> dict[str, FullScores]:
    """Replay the log up to each of `attempts` and keep all nodes' scores (the log keeps the top K)."""
    replayer = Replayer(registry, *from_base(reader))
    replayer.full_scores = True
    found: dict[str, FullScores] = {}
    for events in walk(reader.read(), replayer.fold):
        attempt = events[0].attempt or ""
        if attempt not in attempts:
            continue
        mismatch, skipped = replayer.replay_attempt(events)
        scored = next((d.data for d in replayer.last_decisions if d.kind == "scored"), None)
        found[attempt] = FullScores(attempt, scored, mismatch is None and not skipped, skipped)
        if len(found) == len(attempts):
            break
    return found
