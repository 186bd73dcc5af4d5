"""eventsched under scheduler-plugins' chart profile against scheduler-plugins v0.28.9.

Each scenario of answers.json (recorded by `python -m tests.differential.schedplugins.record`
from cases.py with the real scheduler-plugins binary on a real API server) runs through
the real Scheduler on a SimulatedCluster with the same profile (profile.py) and is compared
as the preemption suite compares its own (preemption/compare.py): the first
FailedScheduling message character for character, nominations, victims and their Events,
final placements. No binaries are needed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from eventsched.plugins import full_registry
from tests.differential import report
from tests.differential.eventsched_run import template_database
from tests.differential.preemption.compare import compare
from tests.differential.preemption.run import run_case
from tests.differential.schedplugins.cases import ANSWERS, all_cases
from tests.differential.schedplugins.profile import chart_profile


def _recorded() -> list[dict[str, Any]]:
    if not ANSWERS.exists():
        return []
    return list(json.loads(ANSWERS.read_text())["scenarios"])


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("schedplugins")


@pytest.mark.parametrize("scenario", [pytest.param(s, id=s["id"]) for s in _recorded()])
def test_schedplugins_scenario(scenario: dict[str, Any], workdir: Path) -> None:
    sid = scenario["id"]
    if scenario.get("answer") is None:
        report.note(sid, "disagree", [f"not recorded: {scenario.get('error')}"])
        pytest.fail(f"{sid} has no recorded answer: {scenario.get('error')}")
    began = time.perf_counter()
    ours = run_case(
        scenario,
        chart_profile(scenario.get("pluginArgs")),
        template_database(workdir),
        workdir,
        full_registry(),
    )
    report.seconds(time.perf_counter() - began)
    problems = [str(p) for p in compare(scenario, ours)]
    report.note(sid, "disagree" if problems else "agree", problems)
    if problems:
        pytest.fail(
            f"{sid} ({scenario['description']}):\n  " + "\n  ".join(problems), pytrace=False
        )


def test_recorded_inputs_are_what_the_cases_make() -> None:
    """A case changed without a re-recording would compare against a stale answer."""
    recorded = [
        {k: v for k, v in s.items() if k not in ("answer", "final", "error")} for s in _recorded()
    ]
    assert recorded, "no answers.json: run python -m tests.differential.schedplugins.record"
    assert recorded == all_cases(), (
        "the schedplugins cases changed: run python -m tests.differential.schedplugins.record"
    )
