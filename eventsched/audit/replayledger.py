"""The attempts replay checked, held against what the log records after them.

Replay decides each attempt's scheduling cycle again; the binding cycle
(`reserved`, `bound`) and what the cluster showed afterwards come later in
the log and are folded, not decided. An attempt whose decision reproduces
but whose pod was then bound elsewhere (or reserved on another node, bound
twice, ...) does not reproduce what the log says happened: its later events
contradict it (contradictions.py), and replay reports it as a difference.
"""

from __future__ import annotations

from dataclasses import dataclass

from eventsched.audit.contradictions import Contradiction, LogLedger
from eventsched.audit.replayer import Mismatch
from eventsched.events.record import StoredEvent

#: What replay made of an attempt.
REPRODUCED, SKIPPED, DIFFERS = "reproduced", "skipped", "differs"


@dataclass(slots=True)
class CheckedAttempt:
    attempt: str
    position: int
    pod: str
    #: The node replay selected ("(no node)" when none).
    replayed: str
    outcome: str


@dataclass(frozen=True, slots=True)
class Contradicted:
    """A checked attempt that a later event contradicts: what it was counted as before."""

    was: str
    mismatch: Mismatch


class AttemptLedger:
    """Every checked attempt, and a LogLedger over every event folded."""

    def __init__(self) -> None:
        self._checked: dict[str, CheckedAttempt] = {}
        self._ledger = LogLedger()

    def checked(self, started: StoredEvent, replayed: str | None, outcome: str) -> None:
        attempt = started.attempt or ""
        self._checked[attempt] = CheckedAttempt(
            attempt, started.position, started.pod_key or "", replayed or "(no node)", outcome
        )

    def see(self, event: StoredEvent) -> list[Contradicted]:
        """The checked attempts (not already differing) this event contradicts."""
        found: list[Contradicted] = []
        for said in self._ledger.see(event):
            checked = self._checked.get(said.attempt)
            if checked is None or checked.outcome == DIFFERS:
                continue
            found.append(Contradicted(checked.outcome, _mismatch(checked, said)))
            checked.outcome = DIFFERS
        return found


def _mismatch(checked: CheckedAttempt, said: Contradiction) -> Mismatch:
    return Mismatch(
        attempt=checked.attempt,
        position=checked.position,
        pod=checked.pod or said.pod,
        recorded=f"{said.kind} {said.node}".strip() + f" (position {said.position})",
        replayed=checked.replayed,
        kind=said.kind,
        detail=f"the log contradicts itself: {said.detail}",
    )
