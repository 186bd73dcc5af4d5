"""observedGeneration on the conditions the scheduler writes (v1.34+):
`podutil.CalculatePodConditionObservedGeneration` and the patches that carry it
(eventsched/cluster/kube/observedgeneration.py, recorder.py, evictions.py).
tests/kube/test_versions_preemption_real.py checks both against kube-scheduler itself."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from eventsched.cluster.kube.evictions import disruption_patch
from eventsched.cluster.kube.observedgeneration import observed_generation
from eventsched.cluster.kube.recorder import unschedulable_patch
from eventsched.config.featuregates import features_for

NOW = datetime(2026, 11, 29, 10, 0, 0, tzinfo=UTC)


def cached(generation: int, *conditions: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"generation": generation}, "status": {"conditions": list(conditions)}}


@pytest.mark.parametrize(
    ("pod", "tracking", "want"),
    [
        (cached(3), True, 3),  # the gate on: the pod's generation
        (cached(3), False, 0),  # off, and no condition carries one
        (cached(3, {"type": "PodScheduled", "observedGeneration": 2}), False, 3),
        (cached(3, {"type": "Ready", "observedGeneration": 2}), False, 0),  # another type's
        (cached(3), None, 0),  # a version before v1.34: never
        (None, True, 0),  # a pod the informer has not seen
    ],
)
def test_calculate_pod_condition_observed_generation(
    pod: dict[str, Any] | None, tracking: bool | None, want: int
) -> None:
    # from pkg/api/v1/pod/util.go: CalculatePodConditionObservedGeneration (v1.34.4, v1.37.2)
    assert observed_generation(pod, "PodScheduled", tracking) == want


def test_the_gate_is_on_from_v134() -> None:
    # PodObservedGenerationTracking: alpha 1.33, beta (on) 1.34, GA (locked) 1.35.
    assert not features_for("1.28").pod_observed_generation_tracking
    assert not features_for("1.33").pod_observed_generation_tracking
    assert features_for("1.34").pod_observed_generation_tracking
    assert features_for("1.37").pod_observed_generation_tracking


def test_the_patches_carry_it_when_there_is_one() -> None:
    patch = unschedulable_patch(None, "m", None, NOW, observed_generation=2)
    assert patch is not None and patch["status"]["conditions"][0]["observedGeneration"] == 2
    patch = unschedulable_patch(None, "m", None, NOW)
    assert patch is not None and "observedGeneration" not in patch["status"]["conditions"][0]
    assert disruption_patch("s", NOW, 4)["status"]["conditions"][0]["observedGeneration"] == 4
    assert "observedGeneration" not in disruption_patch("s", NOW)["status"]["conditions"][0]


def test_an_unchanged_condition_is_not_patched_for_its_generation_alone() -> None:
    """`UpdatePodCondition` compares status, reason, message and times, not
    observedGeneration: the same failure again writes nothing."""
    current = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "m",
        "lastTransitionTime": "2026-11-29T09:00:00Z",
    }
    assert unschedulable_patch(current, "m", None, NOW, observed_generation=5) is None
