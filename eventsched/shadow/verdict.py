"""A shadow verdict: eventsched's decision for a pod, against what the shadowed scheduler did.

Pure: given eventsched's outcome (the node it picked with every feasible node's scores,
or the failure and its PostFilter's choice) and the shadowed scheduler's (the node it
placed the pod on, its FailedScheduling message, the node it nominated), the verdict
and, where they part, the cause in one sentence with the numbers:

- agree: the same node (the same message; the same nominated node);
- tie: the shadowed scheduler's node had eventsched's best total too (kube-scheduler
  picks at random among the nodes of equal best total);
- differ: the Filter plugin that rejects the shadowed scheduler's node, or the score
  plugins whose weighted scores separate the two nodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from eventsched.framework import Diagnosis, ScoreTable
from eventsched.model import NodeTable

Verdict = Literal["agree", "tie", "differ"]
VERDICTS: tuple[Verdict, ...] = ("agree", "tie", "differ")

#: What the shadowed scheduler did that a verdict compares with.
PLACED, UNSCHEDULABLE, NOMINATED = "placed", "unschedulable", "nominated"
#: Score plugins named in a cause, at most (the largest gaps).
CAUSE_PLUGINS = 3


@dataclass(slots=True)
class Ours:
    """eventsched's outcome for the pod."""

    #: The node it picks; "" when none fits.
    node: str = ""
    #: Every feasible node's scores (None when at most one node was feasible).
    scores: ScoreTable | None = None
    #: The nodes Filter rejected and why (None: the attempt erred before Filter ended).
    diagnosis: Diagnosis | None = None
    #: The FailedScheduling message it would give ("" when it picks a node).
    message: str = ""
    #: Its PostFilter's choice when no node fits: `preempted`'s data (empty: none).
    preemption: Mapping[str, Any] = field(default_factory=dict)
    #: The attempt failed with an error (a plugin's), not for want of a node.
    error: bool = False
    #: The nodes its PostFilter found as good as the one it nominates.
    tied: tuple[str, ...] = ()


@dataclass(slots=True)
class Theirs:
    """What the shadowed scheduler did."""

    scheduler: str
    observed: str  # PLACED, UNSCHEDULABLE or NOMINATED
    node: str = ""
    message: str = ""
    #: The pods it preempted for a nomination ({uid, namespace, name}).
    victims: tuple[Mapping[str, str], ...] = ()


@dataclass(slots=True)
class Judgement:
    verdict: Verdict
    #: One sentence: why they differ (empty when they agree; the tied total for a tie).
    cause: str = ""
    #: Weighted totals: eventsched's pick and the shadowed scheduler's node (None: not scored).
    our_total: int | None = None
    their_total: int | None = None
    #: A differ the shadowed scheduler's sample of the nodes explains: its node was
    #: feasible, and it scored only some of the nodes.
    sampled: bool = False


def judge(ours: Ours, theirs: Theirs, table: NodeTable, sample: int | None = None) -> Judgement:
    """The verdict. `sample`: how many nodes the shadowed scheduler scores when it scores
    fewer than all (percentageOfNodesToScore), named when that may explain a difference."""
    if theirs.observed == PLACED:
        return _placement(ours, theirs, table, sample)
    if theirs.observed == NOMINATED:
        return _nomination(ours, theirs)
    return _failure(ours, theirs)


def _placement(ours: Ours, theirs: Theirs, table: NodeTable, sample: int | None) -> Judgement:
    who, node = theirs.scheduler, theirs.node
    row = table.row_of(node)
    if row is None:
        return Judgement(
            "differ", f"{who}'s node {node} is not in eventsched's view of the cluster"
        )
    if ours.node == node:
        total = _total(ours.scores, table, node)
        return Judgement("agree", "", total, total)
    theirs_total = _total(ours.scores, table, node)
    if theirs_total is not None:
        mine = _total(ours.scores, table, ours.node)
        assert ours.scores is not None and mine is not None
        if theirs_total == mine:
            return Judgement("tie", f"{node} and {ours.node} both total {mine}", mine, mine)
        cause = (
            f"{ours.node} totals {mine} against {theirs_total} for {who}'s node {node}: "
            + _gaps(ours.scores, table, ours.node, node)
        )
        if sample is not None:
            cause += (
                f"; {who} scores only {sample} of the {len(table)} nodes "
                f"(percentageOfNodesToScore), which may have left out {ours.node}"
            )
        return Judgement("differ", cause, mine, theirs_total, sampled=sample is not None)
    rejected = _rejection(ours.diagnosis, row) if ours.diagnosis is not None else None
    if rejected is not None:
        plugin, reasons = rejected
        return Judgement("differ", f"{plugin} rejects {who}'s node {node}: {reasons}")
    if not ours.node:
        return Judgement("differ", f"eventsched finds no node: {ours.message}")
    return Judgement("differ", f"{who}'s node {node} was not evaluated by eventsched")


def _nomination(ours: Ours, theirs: Theirs) -> Judgement:
    who, node = theirs.scheduler, theirs.node
    if ours.node:
        return Judgement(
            "differ", f"{who} preempted for {node}, but eventsched finds {ours.node} fits"
        )
    chosen = str(ours.preemption.get("nominatedNodeName") or "")
    if chosen == node:
        return _same_node(ours, theirs)
    if node in ours.tied:
        return Judgement(
            "tie", f"{node} and {chosen} tie on every criterion of preemption's candidate choice"
        )
    if not chosen:
        return Judgement(
            "differ",
            f"{who} nominated {node}; eventsched's PostFilter preempts nowhere: {ours.message}",
        )
    victims = ", ".join(
        f"{v.get('namespace')}/{v.get('name')}" for v in ours.preemption.get("victims") or ()
    )
    return Judgement(
        "differ",
        f"{who} nominated {node}; eventsched's PostFilter nominates {chosen} "
        f"(victims {victims or 'none'}; chosen by {ours.preemption.get('chosenBy', '?')})",
    )


def _same_node(ours: Ours, theirs: Theirs) -> Judgement:
    """Both nominate the node: the same victims (when the watch showed them) and message."""
    mine = {_key(v) for v in ours.preemption.get("victims") or ()}
    other = {_key(v) for v in theirs.victims}
    if other and mine != other:
        return Judgement(
            "differ",
            f"both preempt on {theirs.node}, but {theirs.scheduler} evicts "
            f"{', '.join(sorted(other))} and eventsched {', '.join(sorted(mine)) or 'none'}",
        )
    return _failure(ours, theirs)


def _key(victim: Mapping[str, Any]) -> str:
    return f"{victim.get('namespace')}/{victim.get('name')}"


def _failure(ours: Ours, theirs: Theirs) -> Judgement:
    who = theirs.scheduler
    if ours.node:
        return Judgement(
            "differ",
            f"{who} found no node, but eventsched picks {ours.node}: {who} said: {theirs.message}",
        )
    if ours.message == theirs.message:
        return Judgement("agree")
    return Judgement(
        "differ",
        f"the messages differ: eventsched says {ours.message!r}, {who} said {theirs.message!r}",
    )


def _rejection(diagnosis: Diagnosis, row: int) -> tuple[str, str] | None:
    """The plugin that rejected a node that was not feasible, and its reasons; None when
    no Filter plugin and no PreFilter result did."""
    for rejection in diagnosis.rejections:
        hits = np.flatnonzero(rejection.rows == row)
        if hits.size:
            status = rejection.statuses[int(rejection.slots[int(hits[0])])]
            return rejection.plugin, "; ".join(status.reasons) or status.code.label
    if diagnosis.absent_status is not None and diagnosis.absent_count:
        status = diagnosis.absent_status
        reasons = "; ".join(status.reasons) or "left out by its PreFilter result"
        return status.plugin or "PreFilter", reasons
    return None


def _column(scores: ScoreTable, table: NodeTable, node: str) -> int | None:
    row = table.row_of(node)
    if row is None:
        return None
    hits = np.flatnonzero(scores.rows == row)
    return int(hits[0]) if hits.size else None


def _total(scores: ScoreTable | None, table: NodeTable, node: str) -> int | None:
    if scores is None:
        return None
    column = _column(scores, table, node)
    return None if column is None else int(scores.totals[column])


def _gaps(scores: ScoreTable, table: NodeTable, ours: str, theirs: str) -> str:
    """The score plugins whose weighted scores differ most between the two nodes."""
    a, b = _column(scores, table, ours), _column(scores, table, theirs)
    assert a is not None and b is not None
    parts: list[tuple[int, str]] = []
    for i, plugin in enumerate(scores.plugins):
        weight = scores.weights[i]
        mine, other = int(scores.normalized[i][a]) * weight, int(scores.normalized[i][b]) * weight
        if mine != other:
            parts.append((abs(mine - other), f"{plugin} {mine} vs {other}"))
    parts.sort(key=lambda p: -p[0])
    named = [text for _, text in parts[:CAUSE_PLUGINS]]
    if len(parts) > CAUSE_PLUGINS:
        named.append(f"{len(parts) - CAUSE_PLUGINS} more")
    return ", ".join(named) + " (weighted)"
