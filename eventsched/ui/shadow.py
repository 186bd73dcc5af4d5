"""What the pages show of `eventsched shadow` on a pod: its verdict in one sentence, and
its shadow attempts' outcomes (the overview's part is shadowoverview.py).

A verdict (the `shadow_verdict` event, events/vocabulary.py) says what the shadowed
scheduler (data.scheduler) did with the pod and whether eventsched, deciding the same
pod against the same view, agrees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine

from eventsched.audit import PodExplanation
from eventsched.ui import shadowreads
from eventsched.ui.reads import Row

PLACED, UNSCHEDULABLE, NOMINATED = "placed", "unschedulable", "nominated"


@dataclass(frozen=True, slots=True)
class ShadowVerdict:
    """One `shadow_verdict`: what the shadowed scheduler did, and eventsched's verdict."""

    position: int
    recorded_at: datetime
    namespace: str
    name: str
    attempt: str
    scheduler: str
    #: placed, unschedulable or nominated.
    observed: str
    #: agree, tie or differ.
    verdict: str
    #: The shadowed scheduler's node (placed or nominated; "" for a failure).
    node: str
    #: eventsched's node ("" when none fits).
    picked: str
    #: The shadowed scheduler's FailedScheduling message, and eventsched's.
    message: str
    our_message: str
    our_error: bool
    cause: str
    #: The weighted totals of eventsched's pick and of the shadowed scheduler's node.
    our_total: int | None
    their_total: int | None

    @classmethod
    def of(cls, row: Row) -> ShadowVerdict:
        data = row.data
        found = data.get("totals")
        totals: dict[str, Any] = found if isinstance(found, dict) else {}
        return cls(
            row.position,
            row.recorded_at,
            row.namespace,
            row.name,
            row.attempt,
            str(data.get("scheduler") or "the shadowed scheduler"),
            str(data.get("observed") or ""),
            str(data.get("verdict") or ""),
            str(data.get("node") or row.node or ""),
            str(data.get("picked") or ""),
            str(data.get("message") or ""),
            str(data.get("ourMessage") or ""),
            bool(data.get("ourError")),
            str(data.get("cause") or ""),
            _int(totals.get("ours")),
            _int(totals.get("theirs")),
        )

    @property
    def outcome(self) -> str:
        """The shadow attempt's outcome, as the attempts list names it."""
        return f"shadow: {self.verdict or 'no verdict'}"

    @property
    def agrees(self) -> bool:
        return self.verdict in ("agree", "tie")


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) else None


def sentence(v: ShadowVerdict) -> str:
    """The verdict in one sentence: what the shadowed scheduler did; what eventsched says."""
    return f"{_theirs(v)}; {_ours(v)}"


def _theirs(v: ShadowVerdict) -> str:
    if v.observed == PLACED:
        return f"{v.scheduler} placed it on {v.node}"
    if v.observed == NOMINATED:
        return f"{v.scheduler} left it pending, nominating {v.node} to preempt on: {v.message}"
    return f"{v.scheduler} left it pending: {v.message}"


def _ours(v: ShadowVerdict) -> str:
    if v.verdict == "agree":
        if v.observed == UNSCHEDULABLE:
            return "eventsched gives the same message"
        if v.observed == NOMINATED:
            return "eventsched agrees (the same node and message)"
        return "eventsched agrees"
    if v.verdict == "tie":  # a nomination's tie has no totals: its cause says why
        total = f"both total {v.our_total}" if v.our_total is not None else v.cause
        return f"eventsched ties ({total})"
    return _differs(v)


def _differs(v: ShadowVerdict) -> str:
    if v.our_error:
        return f"eventsched's attempt failed: {v.our_message}"
    if v.observed == PLACED:
        if not v.picked:
            return f"eventsched finds no node: {v.our_message}"
        return f"eventsched would pick {v.picked} because {v.cause}"
    if v.picked:  # it found no node, or preempted, where eventsched finds one fits
        return f"eventsched would place it on {v.picked}, preempting nothing"
    if v.observed == UNSCHEDULABLE:
        return f"eventsched gives a different one: {v.our_message}"
    return f"eventsched differs: {v.cause}"


# -- a pod ------------------------------------------------------------------------------


@dataclass(slots=True)
class PodShadow:
    """A pod's shadow attempts and their verdicts."""

    #: attempt id -> its verdict.
    verdicts: dict[str, ShadowVerdict] = field(default_factory=dict)
    #: attempt id -> attempt_started's data.shadow, for each shadow attempt.
    started: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def latest(self) -> ShadowVerdict | None:
        return max(self.verdicts.values(), key=lambda v: v.position, default=None)

    @classmethod
    def of(cls, rows: list[Row]) -> PodShadow:
        found = cls()
        for row in rows:
            if row.kind == "attempt_started" and isinstance(row.data.get("shadow"), dict):
                found.started[row.attempt] = dict(row.data["shadow"])
            elif row.kind == "shadow_verdict":
                found.verdicts[row.attempt] = ShadowVerdict.of(row)
        return found


def load_pod(engine: Engine, explanation: PodExplanation) -> PodShadow:
    uids = sorted({a.pod_uid for a in explanation.attempts if a.pod_uid})
    return PodShadow.of(shadowreads.pod_rows(engine, uids))


def mark_attempts(explanation: PodExplanation, shadow: PodShadow) -> None:
    """A shadow attempt has no bound or unschedulable: its outcome is its verdict
    ("shadow: agree"), its message the verdict's sentence."""
    for attempt in explanation.attempts:
        verdict = shadow.verdicts.get(attempt.attempt)
        if verdict is not None:
            attempt.outcome = verdict.outcome
            attempt.message = sentence(verdict)
        elif attempt.attempt in shadow.started and attempt.outcome == "in progress":
            attempt.outcome = "shadow: no verdict logged"
