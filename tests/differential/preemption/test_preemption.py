"""eventsched's DefaultPreemption against kube-scheduler v1.28, on recorded answers.

Each scenario of answers.json (recorded by `python -m tests.differential.preemption.record`
from the cases in cases_*.py) is one test case, run through the real Scheduler on a
SimulatedCluster (run.py) with the default profile, DefaultPreemption at postFilter
(added when the default profile lacks it), and compared with kube-scheduler's answer
(compare.py). No binaries are needed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from eventsched.config import default_profile
from eventsched.model.preemptionwrites import PREEMPTION_BY_SCHEDULER, disruption_message
from tests.differential import report
from tests.differential.eventsched_run import template_database
from tests.differential.preemption.cases import ANSWERS, all_cases
from tests.differential.preemption.compare import SCHEDULER_NAME, compare
from tests.differential.preemption.run import preemption_profile, registered, run_case

#: Disagreements that are known, each with its reason (strict xfail).
KNOWN: dict[str, str] = {}


class KnownDisagreement(Exception):
    pass


def _recorded() -> list[dict[str, Any]]:
    if not ANSWERS.exists():
        return []
    return list(json.loads(ANSWERS.read_text())["scenarios"])


def _cases() -> list[Any]:
    out = []
    for s in _recorded():
        marks = []
        if s["id"] in KNOWN:
            marks.append(
                pytest.mark.xfail(strict=True, raises=KnownDisagreement, reason=KNOWN[s["id"]])
            )
        out.append(pytest.param(s, id=s["id"], marks=marks))
    return out


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("preemption")


@pytest.mark.parametrize("scenario", _cases())
def test_preemption_scenario(scenario: dict[str, Any], workdir: Path) -> None:
    if not registered():
        pytest.skip("DefaultPreemption is not in the plugin registry yet")
    sid = scenario["id"]
    if scenario.get("answer") is None:
        report.note(sid, "disagree", [f"not recorded: {scenario.get('error')}"])
        pytest.fail(f"{sid} has no recorded answer: {scenario.get('error')}")
    profile = preemption_profile(default_profile(SCHEDULER_NAME))
    began = time.perf_counter()
    ours = run_case(scenario, profile, template_database(workdir), workdir)
    report.seconds(time.perf_counter() - began)
    problems = [str(p) for p in compare(scenario, ours)]
    if not problems:
        report.note(sid, "agree", [])
        return
    report.note(sid, "disagree", problems)
    if sid in KNOWN:
        raise KnownDisagreement("; ".join(problems))
    pytest.fail(f"{sid} ({scenario['description']}):\n  " + "\n  ".join(problems), pytrace=False)


def test_recorded_inputs_are_what_the_cases_make() -> None:
    """A case changed without a re-recording would compare against a stale answer."""
    recorded = [
        {k: v for k, v in s.items() if k not in ("answer", "final", "error")} for s in _recorded()
    ]
    assert recorded, "no answers.json: run python -m tests.differential.preemption.record"
    assert recorded == all_cases(), (
        "the preemption cases changed: run python -m tests.differential.preemption.record"
    )


def test_compare_names_each_difference() -> None:
    kube_pod = {
        "pod": "default/high",
        "message": "0/1 nodes are available: 1 Insufficient cpu.",
        "nominatedNodeName": "node-0",
        "victims": ["default/a"],
        "preemptedEvents": [
            {"pod": "default/a", "type": "Normal", "action": "Preempting", "message": "m"}
        ],
        "disruptionTargets": {"default/a": {"status": "True", "reason": "R", "message": "x"}},
    }
    ours_pod = {
        **kube_pod,
        "error": None,
        "unschedulableMessage": "other",
        "nominatedNodeName": "node-1",
        "victims": ["default/b"],
        "preemptedEvents": [],
    }
    final = {"default/high": {"exists": True, "node": "node-0", "nominatedNodeName": "node-0"}}
    recorded = {"answer": [kube_pod], "final": final}
    ours = {
        "answer": [ours_pod],
        "final": {"default/high": {**final["default/high"], "node": None}},
    }
    checks = [p.check for p in compare(recorded, ours)]
    assert checks == ["message", "nominated", "victims", "events", "strings", "final"]
    good = {
        "status": "True",
        "reason": PREEMPTION_BY_SCHEDULER,
        "message": disruption_message(SCHEDULER_NAME),
    }
    kube_ok = {**kube_pod, "disruptionTargets": {"default/a": good}}
    same = {"answer": [{**kube_ok, "error": None, "unschedulableMessage": None}], "final": final}
    assert compare({"answer": [kube_ok], "final": final}, same) == []
