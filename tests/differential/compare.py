"""Comparing eventsched's outcome with kube-scheduler's answer, and what a scheduler lacking
some plugins should answer.

The checks, in this order (later ones only when the earlier agree):
- kube-scheduler found no node: eventsched finds none, with the identical message;
- kube-scheduler placed the pod: eventsched places it, on the same node when one node held
  the top score; the feasible sets are equal;
- with two feasible nodes or more: each of eventsched's score plugins gives each node the
  weighted score kube-scheduler logged (a plugin skipped counts 0, as kube-scheduler v1.28
  logs 0 for NodeAffinity without preferences), and the totals are equal.

`expected` is kube-scheduler's answer for a profile without the plugins eventsched lacks:
the recorded ablation for the filtering plugins among them the scenario uses, minus every
lacking plugin's scores. A disagreement with kube-scheduler that is an agreement with that
is explained by the lacking plugins; any other is eventsched's.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from tests.differential.eventsched_run import Outcome
from tests.differential.scenario import LEGACY_VERSION, Answer, ablation_key, is_unique, uses


@dataclass(frozen=True)
class Problem:
    check: str  # outcome, message, node, feasible, score, total, error
    detail: str

    def __str__(self) -> str:
        return f"{self.check}: {self.detail}"


def compare(outcome: Outcome, answer: Answer, plugins: Collection[str]) -> list[Problem]:
    """What differs; `plugins` are the score plugins of eventsched's profile."""
    if outcome.error:
        return [Problem("error", outcome.error)]
    if answer.node is None:
        if outcome.node is not None:
            return [
                Problem(
                    "outcome",
                    f"kube-scheduler: {answer.message!r}; eventsched placed it on {outcome.node}",
                )
            ]
        problems = []
        if outcome.message != answer.message:
            problems.append(
                Problem(
                    "message",
                    f"kube-scheduler {answer.message!r} != eventsched {outcome.message!r}",
                )
            )
        if outcome.condition != outcome.message:
            problems.append(
                Problem("message", f"eventsched's condition {outcome.condition!r} != its Event")
            )
        return problems
    if outcome.node is None:
        return [
            Problem(
                "outcome",
                f"kube-scheduler placed it on {answer.node}; eventsched: {outcome.message!r}",
            )
        ]
    problems = []
    if answer.unique and outcome.node != answer.node:
        problems.append(
            Problem(
                "node",
                f"kube-scheduler {answer.node} (unique top score), eventsched {outcome.node}",
            )
        )
    if sorted(outcome.feasible) != sorted(answer.feasible):
        problems.append(
            Problem(
                "feasible",
                f"kube-scheduler {sorted(answer.feasible)} != eventsched {sorted(outcome.feasible)}",
            )
        )
        return problems
    if len(answer.feasible) < 2:
        return problems
    for plugin in sorted(plugins):
        theirs = {n: answer.scores.get(n, {}).get(plugin, 0) for n in answer.feasible}
        ours = {n: outcome.scores.get(n, {}).get(plugin, 0) for n in answer.feasible}
        if theirs != ours:
            problems.append(Problem("score", f"{plugin}: kube-scheduler {_diff(theirs, ours)}"))
    if outcome.total != answer.total:
        problems.append(Problem("total", f"kube-scheduler {_diff(answer.total, outcome.total)}"))
    return problems


def _diff(theirs: Mapping[str, int], ours: Mapping[str, int]) -> str:
    nodes = sorted(set(theirs) | set(ours))
    cells = [f"{n} {theirs.get(n)}/{ours.get(n)}" for n in nodes if theirs.get(n) != ours.get(n)]
    return "vs eventsched (kube/eventsched): " + ", ".join(cells)


def expected(
    scenario: Mapping[str, Any], missing: Collection[str], version: str = LEGACY_VERSION
) -> Answer | None:
    """kube-scheduler `version`'s answer without the `missing` plugins; None when that
    needs an ablation that was not recorded."""
    ablated = set(missing) & uses(scenario, version)
    if ablated:
        raw = (scenario.get("ablations") or {}).get(ablation_key(ablated))
        if raw is None:
            return None
        base = Answer.from_json(raw)
    else:
        base = Answer.from_json(scenario["answer"])
    scores = {n: {p: v for p, v in ps.items() if p not in missing} for n, ps in base.scores.items()}
    total = {n: sum(ps.values()) for n, ps in scores.items()}
    if base.node is None or not total:
        return Answer(**{**base.__dict__, "scores": scores, "total": total})
    unique = is_unique(total, base.feasible)
    node = max(total, key=lambda n: total[n]) if unique else base.node
    return Answer(
        node=node,
        message=base.message,
        feasible=base.feasible,
        scores=scores,
        total=total,
        unique=unique,
        condition=base.condition,
        attempts=base.attempts,
    )


def as_outcome(answer: Answer) -> Outcome:
    return Outcome(
        node=answer.node,
        message=answer.message,
        condition=answer.message,
        feasible=list(answer.feasible),
        scores=answer.scores,
        total=answer.total,
    )


def missing_matters(
    scenario: Mapping[str, Any],
    missing: Collection[str],
    plugins: Collection[str],
    version: str = LEGACY_VERSION,
) -> bool | None:
    """Whether lacking `missing` changes the answer (by the recording); None when unknown."""
    answer = scenario.get("answer")
    if answer is None:
        return False
    without = expected(scenario, missing, version)
    if without is None:
        return None
    return bool(compare(as_outcome(without), Answer.from_json(answer), plugins))
