"""eventsched's default profile against kube-scheduler, per Kubernetes version, on recorded
answers.

Each recorded scenario is one test case per version it was recorded with: v1.28's
(answers/*.json) as `family/index`, a newer version's (answers/v<V>/*.json) as
`v<V>/family/index`. Recorded by `python -m tests.differential.record
[--kubernetes-version V]`. Each runs through the real Scheduler on a SimulatedCluster
(eventsched_run.py) with `default_profile()` deciding as that version
(`features_for(V)`), and is compared with that version's answer (compare.py).

Plugins of the version's kube-scheduler default profile that eventsched's lacks are
"missing". A scenario whose recorded answers show that the missing plugins change
kube-scheduler's answer (its ablations, or the missing plugins' nonzero scores) is marked
xfail(strict=True, raises=ExplainedDisagreement): it xfails only when eventsched agrees with
kube-scheduler-without-those-plugins; any other disagreement is a plain failure; agreeing
with kube-scheduler after all fails as XPASS(strict).

A scenario on the version's checked-in list of known disagreements
(disagreements/v<V>.json, written by `python -m tests.differential.known --version V`)
is marked xfail(strict=True, raises=KnownDisagreement): it xfails only while it disagrees
for exactly the listed causes; agreeing (XPASS) or disagreeing for other causes fails, so
the list is rewritten as eventsched learns the version.

No binaries are needed: only the recorded answers.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.differential import report
from tests.differential.causes import classify
from tests.differential.eventsched_run import run_scenario, template_database
from tests.differential.generated_versions import lines
from tests.differential.knownlist import command, known
from tests.differential.scenario import load_family, recorded_families
from tests.differential.verdict import (
    ExplainedDisagreement,
    KnownDisagreement,
    judge,
    xfail_reason,
)
from tests.differential.versions import Target, target, versions


def _cases() -> list[Any]:
    cases = []
    for version in versions():
        t = target(version)
        listed = known(version)
        for family in recorded_families(t.answers):
            for scenario in load_family(family, t.answers)["scenarios"]:
                cases.append(
                    pytest.param(
                        version,
                        scenario,
                        id=t.case_id(scenario["id"]),
                        marks=_marks(t, scenario, listed.get(scenario["id"])),
                    )
                )
    return cases


def _marks(t: Target, scenario: dict[str, Any], listed: tuple[str, ...] | None) -> list[Any]:
    raises: list[type[Exception]] = []
    reasons = []
    explained = _explainable(scenario, t)
    if explained:
        raises.append(ExplainedDisagreement)
        reasons.append(explained)
    if listed is not None:
        raises.append(KnownDisagreement)
        reasons.append(
            f"known at v{t.version}: {', '.join(listed)} (agreeing or other causes fail: "
            f"{command(t.version)})"
        )
    if not raises:
        return []
    return [pytest.mark.xfail(strict=True, raises=tuple(raises), reason="; ".join(reasons))]


def _explainable(scenario: dict[str, Any], t: Target) -> str | None:
    if scenario.get("answer") is None:
        return None
    return xfail_reason(scenario, t)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("differential")


@pytest.mark.parametrize(("version", "scenario"), _cases())
def test_scenario(version: str, scenario: dict[str, Any], workdir: Path) -> None:
    t = target(version)
    sid = scenario["id"]
    case = t.case_id(sid)
    if scenario.get("answer") is None:
        report.note(case, "disagree", [f"not recorded: {scenario.get('error')}"])
        pytest.fail(f"{case} has no recorded answer: {scenario.get('error')}")
    began = time.perf_counter()
    outcome = run_scenario(scenario, template_database(workdir), workdir, t.profile)
    report.seconds(time.perf_counter() - began)
    verdict = judge(scenario, outcome, t)
    text = verdict.lines(t)
    if verdict.status == "agree":
        report.note(case, "agree", [])
        return
    if verdict.status == "explained":
        report.note(case, "explained", text)
        raise ExplainedDisagreement("; ".join(text))
    listed = known(version).get(sid)
    if listed is not None:
        causes = classify(scenario, outcome, verdict, version)
        if causes == listed:
            report.note(case, "known", text, causes)
            raise KnownDisagreement(f"{', '.join(causes)}: " + "; ".join(text))
        report.note(case, "disagree", text)
        pytest.fail(
            f"{case} ({scenario['description']}) is listed as disagreeing for "
            f"{', '.join(listed)}, and disagrees for {', '.join(causes)}:\n  "
            + "\n  ".join(text)
            + f"\n(rewrite the list: {command(version)})",
            pytrace=False,
        )
    report.note(case, "disagree", text)
    pytest.fail(f"{case} ({scenario['description']}):\n  " + "\n  ".join(text), pytrace=False)


def _families() -> list[Any]:
    return [
        pytest.param(version, family, id=target(version).case_id(family))
        for version in versions()
        for family in recorded_families(target(version).answers)
    ]


@pytest.mark.parametrize(("version", "family"), _families())
def test_recorded_without_preemption(version: str, family: str) -> None:
    """The profile leaves DefaultPreemption out because every answers file did."""
    assert load_family(family, target(version).answers)["preemption"] is False


@pytest.mark.parametrize(("version", "family"), _families())
def test_recorded_with_the_version(version: str, family: str) -> None:
    """Each version's answers come from that version's kube-scheduler."""
    document = load_family(family, target(version).answers)
    assert document.get("kubernetesVersion", "1.28") == version
    assert document["kubeScheduler"].startswith(f"Kubernetes v{version}.")


@pytest.mark.parametrize(("version", "family"), _families())
def test_recorded_inputs_are_what_the_generator_makes(version: str, family: str) -> None:
    """A generator change without a re-recording would compare against stale answers."""
    from tests.differential.generate import FAMILIES, generate

    assert family in FAMILIES, f"{family}.json has no generator family"
    recorded = [
        {k: v for k, v in s.items() if k not in ("answer", "ablations", "error")}
        for s in load_family(family, target(version).answers)["scenarios"]
    ]
    option = "" if version == "1.28" else f"--kubernetes-version {version} "
    assert recorded == generate(family), (
        f"the {family} generator changed: run python -m tests.differential.record "
        f"{option}--family {family}"
    )


@pytest.mark.parametrize("version", [v for v in versions() if known(v)])
def test_known_disagreements_are_recorded_scenarios(version: str) -> None:
    """Every scenario the version's list names is one of its recorded scenarios (of the
    families, or generated: generated_versions.py)."""
    recorded = {
        s["id"]
        for family in recorded_families(target(version).answers)
        for s in load_family(family, target(version).answers)["scenarios"]
    }
    recorded |= {line["id"] for line in lines(version)}
    assert set(known(version)) <= recorded, f"stale entries: {command(version)}"
