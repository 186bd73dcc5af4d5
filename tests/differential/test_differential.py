"""eventsched's default profile against kube-scheduler v1.28, on recorded answers.

Each recorded scenario (tests/differential/answers/*.json, recorded by
`python -m tests.differential.record`) is one test case, `family/index`, run through the
real Scheduler on a SimulatedCluster (tests/differential/eventsched_run.py) and compared
with kube-scheduler's answer (tests/differential/compare.py).

Plugins of kube-scheduler's default profile that `default_profile()` lacks at test time
are "missing". A scenario whose recorded answers show that the missing plugins change
kube-scheduler's answer (its ablations, or the missing plugins' nonzero scores) is marked
xfail(strict=True, raises=ExplainedDisagreement): it xfails only when eventsched agrees with
kube-scheduler-without-those-plugins; any other disagreement is a plain failure; agreeing
with kube-scheduler after all fails as XPASS(strict). When a plugin lands in the default
profile the mark goes away and the scenario passes or fails on its own.

No binaries are needed: only the recorded answers.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from eventsched.config import default_profile
from tests.differential import report
from tests.differential.compare import compare, expected, missing_matters
from tests.differential.eventsched_run import (
    run_scenario,
    template_database,
    without_preemption,
)
from tests.differential.scenario import (
    UPSTREAM_DEFAULT,
    Answer,
    load_family,
    recorded_families,
    uses,
)

#: The answers files were recorded with DefaultPreemption disabled ("preemption": false;
#: the preemption scenarios are preemption/'s): eventsched runs without it too.
PROFILE = without_preemption(default_profile("default-scheduler"))
PRESENT = set(PROFILE.plugin_names())
MISSING = frozenset(p for p in UPSTREAM_DEFAULT if p not in PRESENT)
SCORE_PLUGINS = frozenset(ref.name for ref in PROFILE.plugins.get("score", ()))


#: Disagreements that are known and documented, each with its reason. Strict: the day
#: one agrees, its test fails until it is taken off this list.
KNOWN: dict[str, str] = {}


class KnownDisagreement(Exception):
    """A disagreement listed in KNOWN (and in docs/status.md)."""


class ExplainedDisagreement(Exception):
    """eventsched disagrees with kube-scheduler exactly as kube-scheduler without the
    plugins eventsched lacks does."""


def _cases() -> list[Any]:
    cases = []
    for family in recorded_families():
        for scenario in load_family(family)["scenarios"]:
            marks = []
            reason = _xfail_reason(scenario)
            if scenario["id"] in KNOWN:
                marks.append(
                    pytest.mark.xfail(
                        strict=True, raises=KnownDisagreement, reason=KNOWN[scenario["id"]]
                    )
                )
            elif reason:
                marks.append(
                    pytest.mark.xfail(strict=True, raises=ExplainedDisagreement, reason=reason)
                )
            cases.append(pytest.param(scenario, id=scenario["id"], marks=marks))
    return cases


def _xfail_reason(scenario: dict[str, Any]) -> str | None:
    matters = missing_matters(scenario, MISSING, SCORE_PLUGINS)
    lacking = sorted(MISSING & uses(scenario))
    if matters is None:
        return f"uses {', '.join(lacking)}, missing from default_profile() (no ablation recorded)"
    if not matters:
        return None
    answer = Answer.from_json(scenario["answer"])
    scoring = sorted(
        p for p in MISSING if any(answer.scores.get(n, {}).get(p) for n in answer.feasible)
    )
    parts = []
    if lacking:
        parts.append(f"uses {', '.join(lacking)}")
    if scoring:
        parts.append(f"{', '.join(scoring)} scored nodes nonzero")
    return (
        "; ".join(parts) + ": missing from default_profile(), and kube-scheduler's recorded "
        "answer without them differs"
    )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("differential")


@pytest.mark.parametrize("scenario", _cases())
def test_scenario(scenario: dict[str, Any], workdir: Path) -> None:
    sid = scenario["id"]
    if scenario.get("answer") is None:
        report.note(sid, "disagree", [f"not recorded: {scenario.get('error')}"])
        pytest.fail(f"{sid} has no recorded answer: {scenario.get('error')}")
    answer = Answer.from_json(scenario["answer"])
    began = time.perf_counter()
    outcome = run_scenario(scenario, template_database(workdir), workdir, PROFILE)
    report.seconds(time.perf_counter() - began)
    problems = compare(outcome, answer, SCORE_PLUGINS)
    if not problems:
        report.note(sid, "agree", [])
        return
    text = [str(p) for p in problems]
    if sid in KNOWN:
        report.note(sid, "disagree", text)
        raise KnownDisagreement("; ".join(text))
    if _xfail_reason(scenario) is None:
        report.note(sid, "disagree", text)
        pytest.fail(f"{sid} ({scenario['description']}):\n  " + "\n  ".join(text), pytrace=False)
    without = expected(scenario, MISSING)
    if without is not None:
        again = compare(outcome, without, SCORE_PLUGINS)
        if again:
            report.note(sid, "disagree", text + [f"without {sorted(MISSING)}: {p}" for p in again])
            pytest.fail(
                f"{sid} ({scenario['description']}): disagrees with kube-scheduler\n  "
                + "\n  ".join(text)
                + "\nand with kube-scheduler without the plugins eventsched lacks:\n  "
                + "\n  ".join(str(p) for p in again),
                pytrace=False,
            )
    report.note(sid, "explained", text)
    raise ExplainedDisagreement("; ".join(text))


@pytest.mark.parametrize("family", recorded_families())
def test_recorded_without_preemption(family: str) -> None:
    """PROFILE leaves DefaultPreemption out because every answers file did."""
    assert load_family(family)["preemption"] is False


@pytest.mark.parametrize("family", recorded_families())
def test_recorded_inputs_are_what_the_generator_makes(family: str) -> None:
    """A generator change without a re-recording would compare against stale answers."""
    from tests.differential.generate import FAMILIES, generate

    assert family in FAMILIES, f"answers/{family}.json has no generator family"
    recorded = [
        {k: v for k, v in s.items() if k not in ("answer", "ablations", "error")}
        for s in load_family(family)["scenarios"]
    ]
    assert recorded == generate(family), (
        f"the {family} generator changed: run python -m tests.differential.record --family {family}"
    )
