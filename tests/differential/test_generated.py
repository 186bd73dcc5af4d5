"""The breadth suite: every recorded generated scenario (answers/generated/chunk-*.jsonl,
recorded by `python -m tests.differential.record_generated`) through eventsched, compared
with kube-scheduler v1.28's answer (generated_replay.py). This module replays chunk files
0 to 2; test_generated_b.py, test_generated_c.py and test_generated_preemption.py the rest,
so that `--dist loadfile` spreads them over pytest-xdist's workers.
"""

from __future__ import annotations

from collections import Counter

from tests.differential.generated import WEIGHTS, digest, generate_one
from tests.differential.generated_preemption import PREEMPTION_START
from tests.differential.generated_replay import PROFILES, profile_name, slice_test

test_generated_slice = slice_test(range(0, 3))


def test_the_generator_is_seeded_and_reaches_every_profile_and_family() -> None:
    """The same scenarios on every run (the recordings hold only digests), and the first
    chunk alone already sends pods to every profile and draws every family."""
    first = [generate_one(i) for i in range(500)]
    assert [digest(s) for s in first[:50]] == [digest(generate_one(i)) for i in range(50)]
    profiles = {profile_name(s) for s in first}
    assert profiles == set(PROFILES)
    families = {s["description"].split(":")[0] for s in first}
    assert families == set(WEIGHTS)


def test_the_preemption_scenarios_reach_every_feature() -> None:
    """gen/4000 on are preemption scenarios; their first hundred already have gated pods
    (ungated or not), Never preemptors, both kinds of budget, disrupted pods and empty
    selectors, and are the same on every run."""
    drawn = [generate_one(i) for i in range(PREEMPTION_START, PREEMPTION_START + 100)]
    assert [digest(s) for s in drawn[:20]] == [
        digest(generate_one(PREEMPTION_START + i)) for i in range(20)
    ]
    assert profile_name(generate_one(PREEMPTION_START - 1)) != "preemption"
    seen: Counter[str] = Counter()
    for s in drawn:
        assert profile_name(s) == "preemption"
        pending = s["pending"]
        gated = {p["metadata"]["name"] for p in pending if p["spec"].get("schedulingGates")}
        seen["gated"] += len(gated)
        seen["ungated"] += len(s.get("ungate") or [])
        seen["left gated"] += len(gated - set(s.get("ungate") or []))
        seen["never"] += sum(p["spec"].get("preemptionPolicy") == "Never" for p in pending)
        for budget in (o for o in s["objects"] if o["kind"] == "PodDisruptionBudget"):
            seen[next(iter(sorted(budget["spec"])))] += 1
            seen["disrupted"] += bool(budget["status"].get("disruptedPods"))
            seen["empty selector"] += budget["spec"].get("selector") == {}
    features = ("gated", "ungated", "left gated", "never", "minAvailable", "maxUnavailable")
    assert all(seen[f] for f in (*features, "disrupted", "empty selector")), seen
