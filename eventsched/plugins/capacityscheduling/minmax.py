"""An ElasticQuota whose min is above its max, said in words: the log line, and the pod's
page (from the `minAboveMax` of the `quota` input CapacityScheduling records per attempt).

scheduler-plugins v0.28.9 neither refuses nor changes such a quota (its CRD has no rule
between min and max, and `newElasticQuotaInfo` takes both as given), so CapacityScheduling
holds the namespace to its max while its min still counts in the sum of every known
quota's min, which other namespaces borrow against; it says nothing. eventsched does the
same and says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from eventsched.model.quantity import format_bytes_of, format_cpu_of
from eventsched.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY
from eventsched.plugins.capacityscheduling.state import NAME

#: What CapacityScheduling does with such a quota, after "its min is above its max for ...".
HANDLING = (
    "CapacityScheduling uses both as given, as scheduler-plugins v0.28.9 does: the "
    "namespace's pods are held to the max, and the min still counts in the sum of mins "
    "that other namespaces borrow against"
)


def sentence(namespace: str, quota: str, above: Mapping[str, Mapping[str, Any]]) -> str:
    """`ElasticQuota team-a/quota: its min is above its max for cpu (min/max 4/2); ...`."""
    parts = ", ".join(f"{name} (min/max {_pair(name, v)})" for name, v in sorted(above.items()))
    return f"ElasticQuota {namespace}/{quota}: its min is above its max for {parts}; {HANDLING}."


def note_of(value: Any) -> str | None:
    """The sentence for a recorded `quota` input, or None when its quota's min is not
    above its max (or the input is of an older log, which did not say)."""
    if not isinstance(value, Mapping):
        return None
    above = value.get("minAboveMax")
    if not isinstance(above, Mapping) or not above:
        return None
    return sentence(str(value.get("namespace", "")), str(value.get("quota", "")), above)


def step_note(step: Mapping[str, Any]) -> str | None:
    """The sentence for an attempt's step (audit.explain's form of an event), when it is
    CapacityScheduling's `quota` input of a quota whose min is above its max."""
    if step.get("kind") != "input_recorded" or step.get("plugin") != NAME:
        return None
    return note_of(step.get("value")) if step.get("key") == "quota" else None


def notes_of(steps: Iterable[Mapping[str, Any]]) -> list[str]:
    """Each distinct sentence of an attempt's steps."""
    notes: list[str] = []
    for step in steps:
        note = step_note(step)
        if note is not None and note not in notes:
            notes.append(note)
    return notes


def _pair(name: str, amounts: Mapping[str, Any]) -> str:
    low, high = int(amounts.get("min", 0)), int(amounts.get("max", 0))
    if name == CPU:
        return format_cpu_of(low, high)
    if name in (MEMORY, EPHEMERAL_STORAGE):
        return format_bytes_of(low, high)
    return f"{low}/{high}"
