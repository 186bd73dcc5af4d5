"""The Pod fields DefaultPreemption reads (eventsched/model/pod.py): status.startTime,
spec.preemptionPolicy and the DisruptionTarget condition, read from a manifest and kept
in the `pod_observed` record only when set."""

from __future__ import annotations

import pytest

from eventsched.model import ManifestError, Pod

BASE = {"metadata": {"name": "p", "namespace": "default", "uid": "u"}}
CONTAINERS = {"containers": [{"name": "c"}]}


def manifest(spec: dict[str, object] | None = None, status: dict[str, object] | None = None) -> Pod:
    return Pod.from_manifest(
        {**BASE, "spec": {**CONTAINERS, **(spec or {})}, "status": status or {}}
    )


def test_fields_from_a_manifest_and_back_through_the_record() -> None:
    p = manifest(
        {"preemptionPolicy": "Never"},
        {
            "startTime": "2023-05-01T10:00:00Z",
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"},
            ],
        },
    )
    assert (p.start_time, p.preemption_policy, p.disruption_target) == (
        "2023-05-01T10:00:00Z",
        "Never",
        "PreemptionByScheduler",
    )
    record = p.to_record()
    assert record["startTime"] == "2023-05-01T10:00:00Z"
    assert record["preemptionPolicy"] == "Never"
    assert record["disruptionTarget"] == "PreemptionByScheduler"
    assert Pod.from_record(record) == p


def test_defaults_are_left_out_of_the_record() -> None:
    """PreemptLowerPriority (what the API server defaults) is stored as "", a False
    DisruptionTarget as no reason: a running pod's record gains only startTime."""
    p = manifest(
        {"preemptionPolicy": "PreemptLowerPriority"},
        {"conditions": [{"type": "DisruptionTarget", "status": "False", "reason": "X"}]},
    )
    assert (p.start_time, p.preemption_policy, p.disruption_target) == ("", "", "")
    record = p.to_record()
    assert not {"startTime", "preemptionPolicy", "disruptionTarget"} & set(record)
    assert Pod.from_record(record) == p


def test_an_unknown_preemption_policy_is_refused() -> None:
    with pytest.raises(ManifestError, match=r"spec\.preemptionPolicy"):
        manifest({"preemptionPolicy": "Sometimes"})
