"""Judging one replayed scenario against its recorded answer, at one version.

agree: eventsched gave kube-scheduler's answer. explained: it did not, exactly as
kube-scheduler without the plugins eventsched lacks at that version does not (the recorded
ablations). disagree: any other difference; at a version with a checked-in list of known
disagreements (`known.py`), a listed scenario whose causes are the listed ones is "known".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.differential.compare import Problem, compare, expected, missing_matters
from tests.differential.eventsched_run import Outcome
from tests.differential.scenario import Answer, uses
from tests.differential.versions import Target


class ExplainedDisagreement(Exception):
    """eventsched disagrees with kube-scheduler exactly as kube-scheduler without the
    plugins eventsched lacks does."""


class KnownDisagreement(Exception):
    """A disagreement on the version's checked-in list (disagreements/v<V>.json), for the
    causes listed there."""


@dataclass
class Verdict:
    status: str  # agree, explained, disagree
    problems: list[Problem] = field(default_factory=list)
    #: What differs from kube-scheduler without the missing plugins, when the scenario's
    #: disagreement was to be explained by them and is not.
    without: list[Problem] = field(default_factory=list)

    def lines(self, target: Target) -> list[str]:
        text = [str(p) for p in self.problems]
        return text + [f"without {sorted(target.missing)}: {p}" for p in self.without]


def xfail_reason(scenario: dict[str, Any], target: Target) -> str | None:
    """Why the scenario may disagree for the plugins eventsched lacks at `target`'s
    version (None: they do not change kube-scheduler's recorded answer)."""
    missing = target.missing
    matters = missing_matters(scenario, missing, target.score_plugins, target.version)
    lacking = sorted(missing & uses(scenario, target.version))
    if matters is None:
        return f"uses {', '.join(lacking)}, missing from default_profile() (no ablation recorded)"
    if not matters:
        return None
    answer = Answer.from_json(scenario["answer"])
    scoring = sorted(
        p for p in missing if any(answer.scores.get(n, {}).get(p) for n in answer.feasible)
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


def judge(scenario: dict[str, Any], outcome: Outcome, target: Target) -> Verdict:
    """eventsched's `outcome` against the scenario's recorded answer at `target`."""
    answer = Answer.from_json(scenario["answer"])
    problems = compare(outcome, answer, target.score_plugins)
    if not problems:
        return Verdict("agree")
    if xfail_reason(scenario, target) is None:
        return Verdict("disagree", problems)
    without = expected(scenario, target.missing, target.version)
    if without is not None:
        again = compare(outcome, without, target.score_plugins)
        if again:
            return Verdict("disagree", problems, again)
    return Verdict("explained", problems)
