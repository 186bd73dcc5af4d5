"""A pod's pages: the summary (what blocks it, or why it landed where it did), every
attempt in detail, and "why not node X?", all from `eventsched explain`'s machinery."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from eventsched.audit import (
    AttemptExplanation,
    PodExplanation,
    PodNotFound,
    explain_full,
    explain_pod,
)
from eventsched.audit.scoretable import NodeScore
from eventsched.events.reader import EventReader
from eventsched.plugins import full_registry
from eventsched.plugins.capacityscheduling.minmax import notes_of
from eventsched.ui.integrity import PAGE_EVENTS
from eventsched.ui.shadow import PLACED, PodShadow, ShadowVerdict, sentence
from eventsched.ui.web import NotFound


@dataclass(frozen=True, slots=True)
class ReasonCount:
    plugin: str
    reason: str
    nodes: int


@dataclass(frozen=True, slots=True)
class PluginGap:
    """How much one score plugin's weighted score put the winner ahead of the runner-up."""

    plugin: str
    winner: int
    runner_up: int

    @property
    def difference(self) -> int:
        return self.winner - self.runner_up


@dataclass(slots=True)
class WinnerVsRunnerUp:
    winner: NodeScore
    runner_up: NodeScore | None
    gaps: list[PluginGap] = field(default_factory=list)
    reason: str = ""
    #: Who chose the node compared with, when not the runner-up ("default-scheduler").
    against: str = ""


@dataclass(slots=True)
class PodSummary:
    explanation: PodExplanation
    #: The attempt the summary is about: the binding one, else the latest.
    attempt: AttemptExplanation | None
    status: str
    dominant: ReasonCount | None = None
    reasons: list[ReasonCount] = field(default_factory=list)
    closest: list[tuple[str, str, str]] = field(default_factory=list)
    winner: WinnerVsRunnerUp | None = None
    #: The node the pod is on: bound by eventsched, or placed by the scheduler it shadows.
    placed: str | None = None
    #: The latest shadow verdict on the pod, when `eventsched shadow` decided it.
    shadow: ShadowVerdict | None = None
    shadow_sentence: str = ""
    #: What plugins said of the attempt's inputs (an ElasticQuota's min above its max).
    notes: list[str] = field(default_factory=list)


def load(reader: EventReader, namespace: str, name: str) -> PodExplanation:
    """The pod's explanation; NotFound when the log has nothing of it."""
    try:
        return explain_pod(reader, namespace, name, max_checked_events=PAGE_EVENTS)
    except PodNotFound:
        raise NotFound(f"the event log has no event for pod {namespace}/{name}.") from None


def summarize(explanation: PodExplanation, shadow: PodShadow | None = None) -> PodSummary:
    """The summary; a pod `eventsched shadow` decided (and eventsched did not bind) is
    summed up by its latest verdict."""
    verdict = shadow.latest if shadow is not None else None
    if verdict is not None and explanation.final_node is None:
        return _shadow_summary(explanation, verdict)
    attempts = explanation.attempts
    binding = next((a for a in reversed(attempts) if a.outcome == "bound"), None)
    latest = attempts[-1] if attempts else None
    attempt = binding if explanation.final_node and binding is not None else latest
    if explanation.final_node:
        status = f"bound to {explanation.final_node}"
    elif latest is not None and latest.outcome in ("unschedulable", "error"):
        status = "pending: " + (latest.message or latest.outcome)
    elif latest is not None:
        status = latest.outcome
    else:
        status = "never attempted"
    summary = PodSummary(explanation, attempt, _removed(explanation, status))
    summary.notes = notes_of(attempt.steps) if attempt is not None else []
    summary.placed = explanation.final_node
    if verdict is not None:  # decided by the shadow, bound by eventsched later: both
        summary.shadow, summary.shadow_sentence = verdict, sentence(verdict)
    if not explanation.final_node:
        _blockers(summary)
    if binding is not None and explanation.final_node:
        summary.winner = winner_vs_runner_up(binding)
    return summary


def _shadow_summary(explanation: PodExplanation, verdict: ShadowVerdict) -> PodSummary:
    """A pod the shadowed scheduler placed (or left pending), as its verdict tells it."""
    attempt = next((a for a in explanation.attempts if a.attempt == verdict.attempt), None)
    if verdict.observed == PLACED:
        status = f"placed on {verdict.node} by {verdict.scheduler}"
    else:  # the sentence below the status gives the message
        status = f"pending ({verdict.scheduler} found no node)"
    summary = PodSummary(explanation, attempt, _removed(explanation, status))
    summary.shadow, summary.shadow_sentence = verdict, sentence(verdict)
    if verdict.observed == PLACED:
        summary.placed = verdict.node
        if attempt is not None:
            against = verdict.node if verdict.node != attempt.selected else None
            summary.winner = winner_vs_runner_up(attempt, against, verdict.scheduler)
    else:
        _blockers(summary)
    return summary


def _removed(explanation: PodExplanation, status: str) -> str:
    return status + "; removed from the cluster" if explanation.removed else status


def _blockers(summary: PodSummary) -> None:
    """What keeps a pending pod out: the latest attempt that rejected nodes, by reason."""
    filtered = next((a for a in reversed(summary.explanation.attempts) if a.rejections), None)
    if filtered is not None:
        summary.reasons = reason_histogram(filtered)
        summary.dominant = summary.reasons[0] if summary.reasons else None
        summary.closest = closest_to_fitting(filtered)


def reason_histogram(attempt: AttemptExplanation) -> list[ReasonCount]:
    """(plugin, reason) by how many nodes it rejected in `attempt`, most first."""
    counts: Counter[tuple[str, str]] = Counter()
    for r in attempt.rejections:
        for reason in r.reasons or [r.code]:
            counts[(r.plugin, reason)] += 1
    if attempt.absent:
        for reason in attempt.absent.get("reasons", []):
            counts[("PreFilter", str(reason))] += int(attempt.absent.get("count", 0))
    return [
        ReasonCount(p, r, n) for (p, r), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def closest_to_fitting(attempt: AttemptExplanation) -> list[tuple[str, str, str]]:
    """(node, plugin, reason) of nodes one resolvable reason kept out.

    Filters stop at a node's first failing plugin, as kube-scheduler's do, so
    the log holds one plugin per node: "closest" is one plugin with a single
    reason whose code is Unschedulable (resolvable), not UnschedulableAndUnresolvable.
    """
    per_node: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for r in attempt.rejections:
        for reason in r.reasons or [""]:
            per_node[r.node].append((r.plugin, r.code, reason))
    return sorted(
        (node, found[0][0], found[0][2])
        for node, found in per_node.items()
        if len(found) == 1 and found[0][1] == "Unschedulable"
    )


def winner_vs_runner_up(
    attempt: AttemptExplanation, against: str | None = None, chooser: str = ""
) -> WinnerVsRunnerUp | None:
    """The selected node against the runner-up, or against the node `against` (the one
    `chooser` chose instead) when the attempt's scores hold it."""
    if not attempt.top or attempt.selected is None:
        return None
    ranked = sorted(attempt.top, key=lambda n: -n.total)
    winner = next((n for n in ranked if n.node == attempt.selected), ranked[0])
    chosen = next((n for n in ranked if n.node == against), None) if against else None
    runner_up = chosen or next((n for n in ranked if n.node != winner.node), None)
    result = WinnerVsRunnerUp(
        winner, runner_up, reason=str((attempt.selection or {}).get("reason", ""))
    )
    if chosen is not None:
        result.against = chooser
    if runner_up is None:
        return result
    for plugin in [p["name"] for p in attempt.score_plugins]:
        a = winner.plugins.get(plugin, {}).get("weighted", 0)
        b = runner_up.plugins.get(plugin, {}).get("weighted", 0)
        result.gaps.append(PluginGap(plugin, a, b))
    result.gaps.sort(key=lambda g: (-abs(g.difference), g.plugin))
    return result


@dataclass(slots=True)
class FilterTable:
    """Nodes x the filter plugins that rejected any node in one attempt."""

    plugins: list[str]
    #: node -> plugin -> reasons, for at most MAX_FILTER_ROWS rejected nodes.
    rows: dict[str, dict[str, str]]
    #: Feasible nodes the log names (the scored top K).
    passed: list[str]
    #: Rejected nodes left out of `rows`.
    hidden: int = 0


#: Rejected nodes listed per attempt; a 5,000-node cluster would otherwise be 5,000 rows each.
MAX_FILTER_ROWS = 100


def filter_table(attempt: AttemptExplanation) -> FilterTable:
    plugins = sorted({r.plugin for r in attempt.rejections})
    rows: dict[str, dict[str, str]] = defaultdict(dict)
    for r in attempt.rejections:
        rows[r.node][r.plugin] = ", ".join(r.reasons) or r.code
    passed = sorted(n.node for n in attempt.top if n.node not in rows)
    kept = dict(sorted(rows.items())[:MAX_FILTER_ROWS])
    return FilterTable(plugins, kept, passed, len(rows) - len(kept))


@dataclass(slots=True)
class WhyNot:
    node: str
    attempt: AttemptExplanation
    verdict: str
    #: "log" (the recorded events say it) or "replay" (recomputed: outside the stored top K).
    source: str = "log"
    score: NodeScore | None = None
    winner: NodeScore | None = None


def why_not(reader: EventReader, explanation: PodExplanation, attempt_id: str, node: str) -> WhyNot:
    """Why `node` did not get the pod in one attempt (the latest when `attempt_id` is '')."""
    chosen = [a for a in explanation.attempts if not attempt_id or a.attempt == attempt_id]
    if not chosen:
        raise LookupError(
            f"pod {explanation.namespace}/{explanation.name} has no attempt {attempt_id}"
        )
    attempt = chosen[-1]
    if attempt.selected == node:
        return WhyNot(node, attempt, f"{node} was chosen in this attempt.")
    rejected = [r for r in attempt.rejections if r.node == node]
    if rejected:
        parts = [
            f"{r.plugin} ({r.code}): {', '.join(r.reasons) or 'no reason given'}" for r in rejected
        ]
        return WhyNot(node, attempt, f"{node} was filtered out by " + "; ".join(parts) + ".")
    winner = next((n for n in attempt.top if n.node == attempt.selected), None)
    scored = next((n for n in attempt.top if n.node == node), None)
    if scored is not None:
        return WhyNot(node, attempt, _behind(node, scored, winner), "log", scored, winner)
    if attempt.score_plugins and attempt.scored_nodes > len(attempt.top):
        full = PodExplanation(
            explanation.namespace, explanation.name, explanation.observed, [attempt], None
        )
        kept = len(attempt.top)
        explain_full(reader, full_registry(), full)
        scored = next((n for n in attempt.top if n.node == node), None)
        if scored is not None:
            winner = next((n for n in attempt.top if n.node == attempt.selected), winner)
            verdict = (
                f"{_behind(node, scored, winner)} The log keeps only the top {kept} nodes' "
                f"scores, so this was computed by replaying the log ({attempt.recomputed})."
            )
            return WhyNot(node, attempt, verdict, "replay", scored, winner)
    if attempt.absent and attempt.absent.get("count"):
        return WhyNot(
            node,
            attempt,
            f"{node} was not among the nodes this attempt evaluated: PreFilter left "
            f"{attempt.absent['count']} node(s) out ({', '.join(attempt.absent.get('reasons', []))}), "
            f"or the node did not exist then.",
        )
    return WhyNot(
        node,
        attempt,
        f"{node} was not evaluated in this attempt: it evaluated {attempt.evaluated} of "
        f"{attempt.num_nodes} nodes (from index {attempt.start_index}, stopping after "
        f"{attempt.num_nodes_to_find} feasible ones), or the node did not exist then.",
    )


def _behind(node: str, scored: NodeScore, winner: NodeScore | None) -> str:
    if winner is None:
        return f"{node} passed every filter and scored {scored.total}."
    gaps = sorted(
        (
            (p, winner.plugins.get(p, {}).get("weighted", 0) - s.get("weighted", 0))
            for p, s in scored.plugins.items()
        ),
        key=lambda g: -g[1],
    )
    ahead = ", ".join(f"{p} +{d}" for p, d in gaps if d > 0) or "tie-break"
    return (
        f"{node} passed every filter but scored {scored.total} against {winner.node}'s "
        f"{winner.total} (the winner was ahead on {ahead})."
    )
