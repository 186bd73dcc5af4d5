"""The breadth suite's preemption scenarios, chunk files 8 and 9 (gen/4000 on;
generated_replay.py says how they are replayed)."""

from __future__ import annotations

from tests.differential.generated_replay import slice_test
from tests.differential.preemption.compare import GATED_MESSAGE, GATED_REASON, compare

test_generated_slice = slice_test(range(8, 10))


def test_compare_reads_gated_and_ungated_answers() -> None:
    held = {"plugin": "SchedulingGates", "reason": GATED_REASON, "message": GATED_MESSAGE}
    kube_gated = {"pod": "default/g", "gated": held, "attempted": False, "nominatedNodeName": None}
    ours_gated = {**kube_gated, "gated": True, "error": None}
    kube_ungated = {
        "pod": "default/g",
        "message": None,
        "nominatedNodeName": None,
        "victims": [],
        "preemptedEvents": [],
        "disruptionTargets": {},
        "node": "node-0",
        "ungated": True,
    }
    ours_ungated = {**kube_ungated, "error": None, "unschedulableMessage": None}
    final = {"default/g": {"exists": True, "node": "node-0", "nominatedNodeName": None}}
    recorded = {"answer": [kube_gated, kube_ungated], "final": final}
    assert compare(recorded, {"answer": [ours_gated, ours_ungated], "final": final}) == []
    wrong = [
        {**ours_gated, "gated": False, "attempted": True},
        {**ours_ungated, "ungated": None},
    ]
    checks = [p.check for p in compare(recorded, {"answer": wrong, "final": final})]
    assert checks == ["gated", "attempted", "ungated"]
    odd = {**kube_gated, "gated": {**held, "message": "other"}}
    checks = [
        p.check
        for p in compare({"answer": [odd], "final": {}}, {"answer": [ours_gated], "final": {}})
    ]
    assert checks == ["strings"]
