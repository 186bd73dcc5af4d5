"""A pod held by scheduling gates, from its successive observations: which gates held it,
since when, when each was lifted, and what followed (queued, placed).

`pod_observed` records a pod's `spec.schedulingGates` (`schedulingGates`, left out when
there are none), so each gate's life is the first observation that names it and the
first later one that does not. While any gate is set, SchedulingGates' PreEnqueue keeps
the pod out of the queue (`queued` with queue `gated`); when the last one is lifted, the
pod enters the queue (`requeued` from `gated`, since 2026-11-28), is attempted and, with
luck, bound. Kueue holds the pods of a workload it has not admitted with the gate
`kueue.x-k8s.io/admission` and lifts it on admission, so a Kueue pod reads admitted,
ungated, queued, placed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from eventsched.events.record import StoredEvent

#: The gate Kueue sets on a pod until it admits the pod's workload.
KUEUE_ADMISSION_GATE = "kueue.x-k8s.io/admission"

#: What a step of the timeline says.
HELD = "held"
LIFTED = "lifted"
UNGATED = "ungated"
QUEUED = "queued"
PLACED = "placed"
REMOVED = "removed"


@dataclass(slots=True)
class Gate:
    """One gate on one pod: when an observation first named it, and when one no longer did."""

    name: str
    held_position: int
    held_since: str
    lifted_position: int | None = None
    lifted_at: str | None = None
    #: Seconds from held_since to lifted_at; None while it holds the pod.
    held_seconds: float | None = None

    @property
    def admission(self) -> bool:
        """Kueue's admission gate: lifting it is the workload's admission."""
        return self.name == KUEUE_ADMISSION_GATE


@dataclass(slots=True)
class GateStep:
    """One step of a gated pod's way to a node, as the log recorded it."""

    #: held, lifted, ungated, queued, placed or removed.
    what: str
    position: int
    at: str
    #: held: the gates that appeared; lifted: the gates lifted.
    gates: list[str] = field(default_factory=list)
    #: queued: the queue entered; placed: the node.
    detail: str = ""

    @property
    def admission(self) -> bool:
        """Kueue admitted the pod's workload here (it lifted its admission gate)."""
        return self.what == LIFTED and KUEUE_ADMISSION_GATE in self.gates


@dataclass(slots=True)
class GateHistory:
    gates: list[Gate]
    steps: list[GateStep]
    #: The gates that still hold the pod at the end of the log.
    holding: list[str] = field(default_factory=list)


def gate_history(events: Iterable[StoredEvent]) -> GateHistory | None:
    """The gates of a pod from its events in log order; None if no gate ever held it."""
    tracker = _Tracker()
    for event in events:
        tracker.see(event)
    if not tracker.gates:
        return None
    return GateHistory(tracker.gates, tracker.steps, sorted(tracker.open))


class _Tracker:
    """Walks a pod's events, keeping the gates open and the steps so far."""

    def __init__(self) -> None:
        self.gates: list[Gate] = []
        self.steps: list[GateStep] = []
        #: gate name -> its open Gate (the pod is held by it now).
        self.open: dict[str, Gate] = {}
        self.uid: str | None = None
        #: The pod was ungated and its entry into the queue / its binding is still to come.
        self.awaiting_queue = False
        self.awaiting_node = False

    def see(self, event: StoredEvent) -> None:
        if event.kind == "pod_observed":
            self._observed(event)
        elif event.kind == "queued" and self.awaiting_queue:
            self._queued(event, str(event.data.get("queue", "")))
        elif event.kind == "requeued" and self.awaiting_queue and _from_gated(event.data):
            self._queued(event, str(event.data.get("to", "")))
        elif event.kind == "bound" and self.awaiting_node:
            self.awaiting_node = self.awaiting_queue = False
            self._step(PLACED, event, detail=event.node or "")
        elif event.kind == "pod_removed" and self.open:
            self._step(REMOVED, event, gates=sorted(self.open))
            self.open.clear()

    def _observed(self, event: StoredEvent) -> None:
        if event.uid != self.uid:  # the pod re-created under the same name: a new life
            self.uid, self.open = event.uid, {}
            self.awaiting_queue = self.awaiting_node = False
        gates = _gates(event.data)
        added = [g for g in gates if g not in self.open]
        lifted = [g for g in self.open if g not in gates]
        for name in added:
            gate = Gate(name, event.position, event.recorded_at.isoformat())
            self.gates.append(gate)
            self.open[name] = gate
        if added:
            self._step(HELD, event, gates=added)
        for name in lifted:
            _lift(self.open.pop(name), event)
        if lifted:
            self._step(LIFTED, event, gates=lifted)
            if not self.open:
                self._step(UNGATED, event)
                self.awaiting_queue = self.awaiting_node = True
        elif added:
            self.awaiting_queue = self.awaiting_node = False

    def _queued(self, event: StoredEvent, queue: str) -> None:
        if queue == "gated":
            return
        self.awaiting_queue = False
        self._step(QUEUED, event, detail=queue)

    def _step(
        self, what: str, event: StoredEvent, gates: list[str] | None = None, detail: str = ""
    ) -> None:
        self.steps.append(
            GateStep(what, event.position, event.recorded_at.isoformat(), gates or [], detail)
        )


def _lift(gate: Gate, event: StoredEvent) -> None:
    gate.lifted_position = event.position
    gate.lifted_at = event.recorded_at.isoformat()
    gate.held_seconds = (
        event.recorded_at - datetime.fromisoformat(gate.held_since)
    ).total_seconds()


def _gates(data: Mapping[str, Any]) -> list[str]:
    gates = data.get("schedulingGates")
    return [str(g) for g in gates] if isinstance(gates, list) else []


def _from_gated(data: Mapping[str, Any]) -> bool:
    return data.get("from") == "gated"
