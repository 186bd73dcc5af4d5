"""The numbers behind an attempt's reasons, from the view the attempt saw.

`attempt_numbers` takes an attempt as explain read it and the view folded to
just before the attempt (`ViewAt`), and gives, per plugin family, the figures
behind each reason: resources (the request against each closest node's room),
quotas, taints, node labels, and for a bound pod the scores of the winner and
the runner-up. Reasons of other plugins keep kube-scheduler's words only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eventsched.audit.numbers.affinity import PLUGIN as POD_AFFINITY
from eventsched.audit.numbers.affinity import affinity_pod_figures
from eventsched.audit.numbers.figure import Figure, amount
from eventsched.audit.numbers.nodematch import (
    AFFINITY,
    TAINTS,
    UNSCHEDULABLE,
    affinity_figures,
    cordon_figures,
    taint_figures,
)
from eventsched.audit.numbers.quotas import PLUGIN as QUOTA_PLUGIN
from eventsched.audit.numbers.quotas import quota_figures
from eventsched.audit.numbers.resources import PLUGIN as FIT_PLUGIN
from eventsched.audit.numbers.resources import resource_figures
from eventsched.audit.numbers.scores import score_figures
from eventsched.audit.numbers.spread import PLUGIN as SPREAD
from eventsched.audit.numbers.spread import spread_figures
from eventsched.audit.scoretable import NodeScore
from eventsched.view import ClusterView

__all__ = ["Figure", "RejectedNode", "ScoredAttempt", "amount", "attempt_numbers"]

#: Nodes shown per reason: the closest ones.
DEFAULT_LIMIT = 5


@dataclass(frozen=True, slots=True)
class RejectedNode:
    """What the numbers read of one Filter rejection."""

    node: str
    plugin: str
    reasons: Sequence[str]


@dataclass(frozen=True, slots=True)
class ScoredAttempt:
    """What the numbers read of an attempt's score table and choice."""

    plugins: Sequence[str]
    top: Sequence[NodeScore]
    selected: str | None


def attempt_numbers(
    view: ClusterView,
    pod_uid: str,
    rejected: Sequence[RejectedNode],
    inputs: Sequence[Mapping[str, Any]],
    scored: ScoredAttempt,
    limit: int = DEFAULT_LIMIT,
) -> list[Figure]:
    """The figures behind the attempt's reasons, or none when the view lacks its pod."""
    pod = view.pods.get(pod_uid)
    if pod is None:
        return []
    figures: list[Figure] = []
    by_plugin: dict[str, list[RejectedNode]] = defaultdict(list)
    for r in rejected:
        by_plugin[r.plugin].append(r)
    table = view.table
    if FIT_PLUGIN in by_plugin:
        fit = [(r.node, r.reasons) for r in by_plugin[FIT_PLUGIN]]
        figures.extend(resource_figures(pod, table, fit, limit))
    if TAINTS in by_plugin:
        figures.extend(taint_figures(pod, table, [r.node for r in by_plugin[TAINTS]], limit))
    if UNSCHEDULABLE in by_plugin:
        figures.extend(cordon_figures(pod, [r.node for r in by_plugin[UNSCHEDULABLE]], limit))
    if AFFINITY in by_plugin:
        figures.extend(affinity_figures(pod, table, [r.node for r in by_plugin[AFFINITY]], limit))
    if SPREAD in by_plugin:
        figures.extend(spread_figures(pod, table, [r.node for r in by_plugin[SPREAD]], limit))
    if POD_AFFINITY in by_plugin:
        nodes = [r.node for r in by_plugin[POD_AFFINITY]]
        figures.extend(affinity_pod_figures(pod, table, nodes, limit))
    for recorded in inputs:
        if recorded.get("plugin") == QUOTA_PLUGIN and recorded.get("key") == "quota":
            value = recorded.get("value") or {}
            figures.extend(quota_figures(value, _quota_record(view, value), pod.requests))
    figures.extend(_score_numbers(view, scored))
    return figures


def _quota_record(view: ClusterView, recorded: Mapping[str, Any]) -> Mapping[str, Any]:
    """The namespace's ElasticQuota as the view held it (its min and max)."""
    for obj in view.table.objects:
        record = obj.to_record()
        if (
            record.get("kind") == "ElasticQuota"
            and record.get("namespace") == recorded.get("namespace")
            and record.get("name") == recorded.get("quota")
        ):
            return record
    return {}


def _score_numbers(view: ClusterView, scored: ScoredAttempt) -> list[Figure]:
    if scored.selected is None or len(scored.top) < 2:
        return []
    winner = next((n for n in scored.top if n.node == scored.selected), None)
    if winner is None:
        return []
    runner_up = next((n for n in scored.top if n.node != scored.selected), None)
    return score_figures(view.table, scored.plugins, winner, runner_up)
