"""`eventsched explain`'s lines about scheduling gates: which held the pod, since when, when
each was lifted, and what followed."""

from __future__ import annotations

from eventsched.audit.gates import (
    HELD,
    LIFTED,
    PLACED,
    QUEUED,
    REMOVED,
    UNGATED,
    Gate,
    GateHistory,
    GateStep,
)


def render_gates(history: GateHistory) -> list[str]:
    """The gates, then the timeline, one step a line."""
    names = ", ".join(g.name for g in history.gates)
    now = (
        f"; still held by {', '.join(history.holding)}"
        if history.holding
        else "; every gate lifted"
    )
    out = [f"Scheduling gates: {names}{now}"]
    by_name = {g.name: g for g in history.gates}
    out.extend(f"  {s.at} {_step(s, by_name)} (log position {s.position})" for s in history.steps)
    return out


def _step(step: GateStep, gates: dict[str, Gate]) -> str:
    if step.what == HELD:
        return "held by " + ", ".join(step.gates)
    if step.what == LIFTED:
        return "; ".join(_lifted(gates[name]) for name in step.gates)
    if step.what == UNGATED:
        return "ungated: no gate left"
    if step.what == QUEUED:
        return f"queued ({step.detail} queue)"
    if step.what == PLACED:
        return f"placed on {step.detail}"
    if step.what == REMOVED:
        return "removed from the cluster while held by " + ", ".join(step.gates)
    return step.what


def _lifted(gate: Gate) -> str:
    text = f"{gate.name} lifted"
    if gate.admission:
        text += " (admitted by Kueue)"
    if gate.held_seconds is not None:
        text += f" after {gate.held_seconds:.1f} s"
    return text
