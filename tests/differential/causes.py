"""Why eventsched disagrees with a newer kube-scheduler on a scenario: the upstream changes
(v1.28 -> v1.34 / v1.37, /work/notes/v137-diff.md) a disagreement is explained by, by label.

`classify` looks at what differs, not at eventsched's code: a FailedScheduling message is
rewritten from what eventsched said towards what kube-scheduler said, one upstream message
change at a time (each rewrite that applies is a cause); a score is attributed to its
plugin and, where the recorded answer shows which, to the upstream change; a node
eventsched rejects that kube-scheduler found feasible is attributed to eventsched's
rejecting plugin. What no rule explains gets a label naming what differs, so that a new
kind of disagreement shows up as a new label.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from tests.differential.eventsched_run import Outcome
from tests.differential.scenario import IN_TREE_LIMITS, Answer
from tests.differential.verdict import Verdict

#: label -> the upstream change it stands for.
CAUSES: dict[str, str] = {
    "taint message": "TaintToleration's Filter says `node(s) had untolerated taint(s)` "
    "without the taint since v1.34 (v1.28: `node(s) had untolerated taint {key: value}`): "
    "tainttoleration/taint_toleration.go",
    "DynamicResources PostFilter message": "v1.34's DynamicResources (GA, in the default "
    "profile) runs at PostFilter and says `no new claims to deallocate` for a pod without "
    "claims; FitError.Error appends PostFilter's message without a final '.'",
    "PreFilter message without histogram": "FitError.Error leaves the node histogram out "
    "when a PreFilter plugin rejected the pod (v1.34+), and PreFilter statuses are the "
    "absent nodes' status",
    "PreFilterResult absent nodes": "nodes left out by a PreFilterResult (NodeAffinity's "
    "metadata.name terms, NodeName) count as `node(s) didn't satisfy plugin(s) [...]` in "
    "the histogram (v1.34+; v1.28 left them out)",
    "PreFilterResult names an absent node": "a PreFilterResult naming a node not in the "
    "snapshot (NodeAffinity's matchFields on metadata.name) is ignored since v1.34 (v1.28: "
    "`nodeinfo not found for node name`, an error): schedule_one.go findNodesThatFitPod",
    "DynamicResources PostFilter after a PreFilter rejection": "a PreFilter rejecting the "
    "pod as UnschedulableAndUnresolvable before DynamicResources' PreFilter ran leaves "
    "DynamicResources.PostFilter without its state: PostFilter's error `not found` ends "
    "the message (v1.34+, dynamicresources.go PostFilter)",
    "ReadWriteOncePod message": "VolumeRestrictions says `node(s) unavailable due to "
    "PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another "
    "pod` at v1.34 and v1.37 (ErrReasonReadWriteOncePodConflict; v1.28: `node has pod "
    "using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode`)",
    "NodeAffinity score skipped": "NodeAffinity's PreScore returns Skip for a pod without "
    "preferred terms (v1.34+): it logs no score (v1.28: 0 for every node)",
    "BalancedAllocation skips best-effort pods": "NodeResourcesBalancedAllocation's "
    "PreScore returns Skip for a pod requesting no cpu nor memory (since v1.32): no score "
    "(v1.28 scored the node's balance)",
    "BalancedAllocation v1.37 formula": "NodeResourcesBalancedAllocation scores the balance "
    "the pod brings: 50 + (50 + balance with the pod - balance without it) / 2, the node's "
    "requests not non-zero ones (v1.37 only; v1.34 keeps v1.28's formula)",
    "ImageLocality": "ImageLocality counts init containers' images, and as many images as "
    "init containers + containers for its thresholds (v1.34), image volumes too (v1.37)",
    "VolumeBinding scoring": "StorageCapacityScoring (beta, on at v1.37): VolumeBinding "
    "scores nodes by free capacity with the default shape (v1.28: no scoring)",
    "in-tree volume limits gone": "EBSLimits, GCEPDLimits and AzureDiskLimits are removed by "
    "v1.34: an in-line in-tree volume counts only through NodeVolumeLimits' CSI translation, "
    "against CSINode limits",
}

#: Where a score problem names a plugin and no finer rule applies.
_SCORE_LABEL = "{plugin} score"
_FIT = "0/{n} nodes are available: "


def classify(
    scenario: dict[str, Any], outcome: Outcome, verdict: Verdict, version: str
) -> tuple[str, ...]:
    """The causes of a disagreement, sorted (the same ones on every run)."""
    answer = Answer.from_json(scenario["answer"])
    found: set[str] = set()
    if outcome.error:
        found.add("eventsched error")
    elif answer.node is None and outcome.node is None:
        found |= message_causes(answer.message or "", outcome.message or "")
    elif answer.node is None or outcome.node is None:
        found |= _outcome_causes(answer, outcome)
    else:
        found |= _placement_causes(answer, outcome, version)
    return tuple(sorted(found or {"unclassified"}))


# -- messages -----------------------------------------------------------------------------


def message_causes(theirs: str, ours: str) -> set[str]:
    """The rewrites that bring eventsched's FailedScheduling message to kube-scheduler's,
    and a label for what they leave different."""
    if ours.startswith(_ABSENT_NODE):
        return {"PreFilterResult names an absent node"}
    found: set[str] = set()
    current = ours
    for label, rewrite in _REWRITES:
        if current == theirs:
            break
        changed = rewrite(current, theirs)
        if changed != current:
            found.add(label)
            current = changed
    if current != theirs:
        found.add(_residue(theirs, current))
    return found


def _histogram(message: str) -> tuple[str, Counter[str], str] | None:
    """(prefix, reason counts, the rest after the histogram) of `0/N nodes are available:
    <count reason, ...>.<rest>`; None when the message has no histogram."""
    # The histogram ends at the first '.' that ends the message or precedes a space (a
    # reason may hold a '.': `Insufficient example.com/gpu`).
    match = re.match(r"(0/\d+ nodes are available: )(\d+ .+?)\.(?=$| )(.*)$", message)
    if match is None:
        return None
    counts: Counter[str] = Counter()
    for item in re.split(r", (?=\d+ )", match.group(2)):
        count, _, reason = item.partition(" ")
        counts[reason] += int(count)
    return match.group(1), counts, match.group(3)


def _format(prefix: str, counts: Counter[str], rest: str) -> str:
    items = sorted(f"{n} {reason}" for reason, n in counts.items())
    return prefix + ", ".join(items) + "." + rest


def _taints(message: str, theirs: str) -> str:
    parsed = _histogram(message)
    if parsed is None or "untolerated taint {" not in message:
        return message
    prefix, counts, rest = parsed
    merged: Counter[str] = Counter()
    for reason, n in counts.items():
        key = (
            "node(s) had untolerated taint(s)"
            if reason.startswith("node(s) had untolerated taint {")
            else reason
        )
        merged[key] += n
    return _format(prefix, merged, rest)


def _tail(tail: str) -> Callable[[str, str], str]:
    """A PostFilter message kube-scheduler appends (without a final '.')."""

    def rewrite(message: str, theirs: str) -> str:
        if theirs.endswith(tail) and not message.endswith(tail):
            return message + tail
        return message

    return rewrite


def _reason(old: str, new: str) -> Callable[[str, str], str]:
    """A Filter reason upstream reworded."""

    def rewrite(message: str, theirs: str) -> str:
        parsed = _histogram(message)
        if parsed is None or old not in parsed[1]:
            return message
        prefix, counts, rest = parsed
        counts[new] += counts.pop(old)
        return _format(prefix, counts, rest)

    return rewrite


def _absent_nodes(message: str, theirs: str) -> str:
    """kube-scheduler's `node(s) didn't satisfy plugin(s) [...]` counts for the nodes a
    PreFilterResult left out, which v1.28 did not count."""
    mine, upstream = _histogram(message), _histogram(theirs)
    if mine is None or upstream is None:
        return message
    prefix, counts, rest = mine
    added = {r: n for r, n in upstream[1].items() if r.startswith(_UNSATISFIED) and r not in counts}
    if not added:
        return message
    counts.update(added)
    return _format(prefix, counts, rest)


_ABSENT_NODE = "nodeinfo not found for node name"
_UNSATISFIED = "node(s) didn't satisfy plugin"
_RWOP_V128 = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)
_RWOP = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)
_REWRITES: tuple[tuple[str, Callable[[str, str], str]], ...] = (
    ("taint message", _taints),
    ("ReadWriteOncePod message", _reason(_RWOP_V128, _RWOP)),
    ("PreFilterResult absent nodes", _absent_nodes),
    ("DynamicResources PostFilter message", _tail(" no new claims to deallocate")),
    ("DynamicResources PostFilter after a PreFilter rejection", _tail(" not found")),
)


def _residue(theirs: str, ours: str) -> str:
    """A label for what still differs between two messages: the histogram reasons only one
    side has (counts left out), else the messages' shapes."""
    a, b = _histogram(theirs), _histogram(ours)
    if a is None or b is None:
        return f"message: kube-scheduler {_shape(theirs)!r}, eventsched {_shape(ours)!r}"
    only_theirs = sorted(set(a[1]) - set(b[1]))
    only_ours = sorted(set(b[1]) - set(a[1]))
    if only_theirs or only_ours:
        return f"message reasons: kube-scheduler {only_theirs}, eventsched {only_ours}"
    if a[1] != b[1]:
        differ = sorted(r for r in a[1] if a[1][r] != b[1][r])
        return f"message counts differ: {differ}"
    return f"message tail: kube-scheduler {a[2]!r}, eventsched {b[2]!r}"


def _shape(message: str) -> str:
    return re.sub(r"\d+", "N", message)


# -- outcomes and placements ----------------------------------------------------------------


def _outcome_causes(answer: Answer, outcome: Outcome) -> set[str]:
    if answer.node is None:
        parsed = _histogram(answer.message or "")
        reasons = sorted(parsed[1]) if parsed else [_shape(answer.message or "")]
        return {f"kube-scheduler rejects every node ({'; '.join(reasons)}), eventsched places"}
    if (outcome.message or "").startswith(_ABSENT_NODE):
        return {"PreFilterResult names an absent node"}
    return _rejected_feasible(answer, outcome) or {
        f"eventsched rejects every node: {_shape(outcome.message or '')}"
    }


def _rejected_feasible(answer: Answer, outcome: Outcome) -> set[str]:
    """eventsched's rejecting plugin (and reasons) for each node kube-scheduler found
    feasible."""
    found = set()
    for node in answer.feasible:
        if node in outcome.rejections:
            plugin, reasons = outcome.rejections[node]
            if plugin in IN_TREE_LIMITS:
                found.add("in-tree volume limits gone")
            else:
                shown = "; ".join(_shape(r) for r in reasons)
                found.add(f"eventsched's {plugin} rejects: {shown}")
    return found


def _placement_causes(answer: Answer, outcome: Outcome, version: str) -> set[str]:
    if sorted(answer.feasible) != sorted(outcome.feasible):
        found = _rejected_feasible(answer, outcome)
        extra = sorted(set(outcome.feasible) - set(answer.feasible))
        if extra:
            found.add("kube-scheduler rejects nodes eventsched finds feasible")
        return found
    found = set()
    plugins = {p for ps in [*answer.scores.values(), *outcome.scores.values()] for p in ps}
    for plugin in sorted(plugins):
        theirs = {n: answer.scores.get(n, {}).get(plugin) for n in answer.feasible}
        ours = {n: outcome.scores.get(n, {}).get(plugin) for n in answer.feasible}
        if {n: v or 0 for n, v in theirs.items()} == {n: v or 0 for n, v in ours.items()}:
            continue
        found.add(_score_cause(plugin, theirs, version))
    if not found and answer.total != outcome.total:
        found.add("total differs with every compared score equal")
    if not found and answer.unique and answer.node != outcome.node:
        found.add("node pick")
    return found


def _score_cause(plugin: str, theirs: dict[str, int | None], version: str) -> str:
    logged = any(v is not None for v in theirs.values())
    if plugin == "NodeResourcesBalancedAllocation" and not logged:
        return "BalancedAllocation skips best-effort pods"
    if plugin == "NodeResourcesBalancedAllocation" and _minor(version) >= 37:
        return "BalancedAllocation v1.37 formula"
    if plugin == "NodeAffinity" and not logged:
        return "NodeAffinity score skipped"
    if plugin == "ImageLocality":
        return "ImageLocality"
    if plugin == "VolumeBinding":
        return "VolumeBinding scoring"
    return _SCORE_LABEL.format(plugin=plugin)


def _minor(version: str) -> int:
    return int(version.split(".")[1])
