"""`podutil.CalculatePodConditionObservedGeneration` (pkg/api/v1/pod/util.go, v1.34+).

A condition kube-scheduler writes (PodScheduled on a failed attempt, DisruptionTarget on
a victim) carries `observedGeneration`: the pod's metadata.generation when the gate
PodObservedGenerationTracking is on (beta, on, in v1.34; GA in v1.35), else the
generation only when the pod's condition of that type already carries one, else none
(0, left out of the patch). v1.28 has neither the field nor the gate; eventsched writes
it from v1.34 (the versions whose source it was read in).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def observed_generation(
    pod: Mapping[str, Any] | None, condition_type: str, tracking: bool | None
) -> int:
    """The observedGeneration of the `condition_type` condition written to `pod` (the pod as
    the informer last saw it, API JSON); 0 when there is to be none. `tracking`: the gate,
    or None for a version whose scheduler writes no observedGeneration (before v1.34)."""
    if pod is None or tracking is None:
        return 0
    generation = int((pod.get("metadata") or {}).get("generation") or 0)
    if tracking:
        return generation
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == condition_type and condition.get("observedGeneration"):
            return generation
    return 0
