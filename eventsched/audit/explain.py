"""Why a pod landed where it did (or nowhere), from the log alone.

No live scheduler or cluster is consulted: everything shown is what the
events of that pod's attempts recorded, so the answer is the same tomorrow
as today, and the same on any machine holding the log.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from eventsched.audit.explainpreemption import (
    PreemptedBy,
    Preemption,
    complete_preempted_by,
    complete_preemption,
    not_evicted,
    preempted_by_of,
    preemption_of,
)
from eventsched.audit.explainshadow import ShadowVerdict, shadow_verdict_of
from eventsched.audit.gang import Gang, gang_of_pod
from eventsched.audit.gates import GateHistory, gate_history
from eventsched.audit.integrity import Integrity, check_events
from eventsched.audit.numbers import Figure
from eventsched.audit.queuestanding import QueueStanding
from eventsched.audit.replay import full_scores
from eventsched.audit.scoretable import NodeScore
from eventsched.events.reader import EventReader
from eventsched.events.record import StoredEvent
from eventsched.framework import Registry, score_cells


@dataclass(slots=True)
class Rejected:
    node: str
    plugin: str
    code: str
    reasons: list[str]
    #: The status's detail (`Status.detail`), e.g. which NUMA zones fit.
    detail: list[str] = field(default_factory=list)


@dataclass(slots=True)
class AttemptExplanation:
    attempt: str
    pod_uid: str
    profile: str
    started_at: str
    started_position: int
    config_digest: str = ""
    attempts: int = 0
    num_nodes: int = 0
    evaluated: int = 0
    feasible: int = 0
    num_nodes_to_find: int = 0
    start_index: int = 0
    #: The attempt's seed (`attempt_started`), which broke any tie at selection.
    seed: int | None = None
    prefilter: dict[str, Any] | None = None
    rejections: list[Rejected] = field(default_factory=list)
    absent: dict[str, Any] | None = None
    #: The pod's nominated node, tried before the others ({node, passed, status?}).
    nominated_node: dict[str, Any] | None = None
    score_plugins: list[dict[str, Any]] = field(default_factory=list)
    #: Score plugins whose PreScore returned Skip in this attempt.
    score_skipped: list[str] = field(default_factory=list)
    scored_nodes: int = 0
    top: list[NodeScore] = field(default_factory=list)
    selected: str | None = None
    selection: dict[str, Any] | None = None
    #: DefaultPreemption's decision in this attempt (a `preempted` event).
    preemption: Preemption | None = None
    #: What: in progress, bound, unschedulable, error, bind failed, or shadow verdict (an
    #: attempt of `eventsched shadow`, which binds nothing: `shadow` has the verdict).
    outcome: str = "in progress"
    #: Set when the score table holds every node, recomputed by replay (explain --full).
    recomputed: str = ""
    message: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list)
    #: Set for a call kube-scheduler made to `eventsched extender`: its verb, the
    #: protocol's form and the candidates' count (attempt_started's `extender`).
    extender: dict[str, Any] | None = None
    #: Set for an attempt of `eventsched shadow`: what the shadowed scheduler did with
    #: the pod and eventsched's verdict on it (the attempt's `shadow_verdict`).
    shadow: ShadowVerdict | None = None
    #: The numbers behind the reasons, from the view the attempt saw (explain_numbers).
    numbers: list[Figure] = field(default_factory=list)


@dataclass(slots=True)
class PodExplanation:
    namespace: str
    name: str
    observed: int
    attempts: list[AttemptExplanation]
    final_node: str | None
    #: What plugins recorded about the pod outside any attempt (e.g. ImportanceSort's
    #: malformed annotation, found when the pod was queued).
    notes: list[dict[str, Any]] = field(default_factory=list)
    #: Each time the pod was evicted as a victim of another pod's preemption.
    preempted_by: list[PreemptedBy] = field(default_factory=list)
    #: The node the cluster last showed the pod on (a pod another scheduler, or one
    #: before eventsched, placed has no `bound` here but is observed there).
    observed_node: str | None = None
    #: Whether the pod's last event is its removal from the cluster.
    removed: bool = False
    #: Where the pod stands in the queue at the log's head, when it is in one.
    queue: QueueStanding | None = None
    #: Why the numbers and the queue are missing (the log could not be folded), if so.
    numbers_unavailable: str = ""
    #: The scheduling gates that held the pod, and what followed (None: never gated).
    gates: GateHistory | None = None
    #: The gang (Coscheduling pod group) the pod belongs to, its members' states.
    gang: Gang | None = None
    #: The hash chain where these events are, and their contradictions (integrity.py);
    #: None when not checked.
    integrity: Integrity | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class PodNotFound(LookupError):
    pass


def explain_pod(
    reader: EventReader,
    namespace: str,
    name: str,
    until: int | None = None,
    *,
    max_checked_events: int | None = None,
) -> PodExplanation:
    """The pod's explanation from its events (those at or before `until`, when given),
    and the check of what they show (integrity.py: the batches holding its events,
    newest first while they fit in `max_checked_events`)."""
    events = [e for e in reader.read_pod(namespace, name) if until is None or e.position <= until]
    if not events:
        when = "" if until is None else f" at or before position {until}"
        raise PodNotFound(
            f"the event log has no event for pod {namespace}/{name}{when}; "
            "check the name (NAMESPACE/NAME)" + (" and --db" if until is None else " and --at")
        )
    explanation = explain_events(namespace, name, events)
    explanation.gates = gate_history(events)
    explanation.gang = gang_of_pod(reader, events)
    uids = {e.position: e.uid for e in events if e.kind == "evicted"}
    for victim in explanation.preempted_by:
        complete_preempted_by(reader, victim, uids.get(victim.position))
    pending = not_evicted(reader, {e.uid for e in events if e.uid})
    explanation.preempted_by = sorted(explanation.preempted_by + pending, key=lambda v: v.position)
    for attempt in explanation.attempts:
        if attempt.preemption is not None:
            complete_preemption(attempt.preemption, reader.read_attempt(attempt.attempt), events)
    explanation.integrity = check_events(
        reader, events, [v.position for v in pending], max_checked_events
    )
    return explanation


def explain_events(namespace: str, name: str, events: Iterable[StoredEvent]) -> PodExplanation:
    by_attempt: dict[str, list[StoredEvent]] = defaultdict(list)
    observed = 0
    final_node: str | None = None
    order: list[str] = []
    notes: list[dict[str, Any]] = []
    preempted_by: list[PreemptedBy] = []
    observed_node: str | None = None
    removed = False
    for event in events:
        if event.kind in ("pod_observed", "pod_removed"):
            removed = event.kind == "pod_removed"
            observed_node = event.node or observed_node
        if event.kind == "pod_observed":
            observed += 1
        if event.kind == "evicted":
            # A victim's eviction, under the preemptor's attempt: not one of this pod's.
            preempted_by.append(preempted_by_of(event))
            continue
        if event.kind == "bound":
            final_node = event.node
        if event.attempt is None:
            if event.plugin:
                notes.append(
                    {
                        "kind": event.kind,
                        "plugin": event.plugin,
                        "position": event.position,
                        "recordedAt": event.recorded_at.isoformat(),
                        **dict(event.data),
                    }
                )
            continue
        if event.attempt not in by_attempt:
            order.append(event.attempt)
        by_attempt[event.attempt].append(event)
    attempts = [_explain_attempt(by_attempt[a]) for a in order]
    return PodExplanation(
        namespace,
        name,
        observed,
        [a for a in attempts if a is not None],
        final_node,
        notes,
        preempted_by,
        observed_node,
        removed,
    )


def _explain_attempt(events: list[StoredEvent]) -> AttemptExplanation | None:
    first = events[0]
    result = AttemptExplanation(
        attempt=first.attempt or "",
        pod_uid=first.uid or "",
        profile=first.scheduler,
        started_at=first.recorded_at.isoformat(),
        started_position=first.position,
    )
    for event in events:
        _HANDLERS.get(event.kind, _step)(result, event)
    return result


def _started(result: AttemptExplanation, event: StoredEvent) -> None:
    data = event.data
    result.config_digest = data.get("configDigest", "")
    result.attempts = int(data.get("attempts", 0))
    result.num_nodes = int(data.get("nodes", 0))
    seed = data.get("seed")
    result.seed = int(seed) if isinstance(seed, int) else None
    extender = data.get("extender")
    if isinstance(extender, Mapping):
        result.extender = {
            k: extender[k] for k in ("verb", "form", "count", "node") if k in extender
        }


def _prefiltered(result: AttemptExplanation, event: StoredEvent) -> None:
    result.prefilter = dict(event.data)


def _filtered(result: AttemptExplanation, event: StoredEvent) -> None:
    data = event.data
    result.num_nodes = int(data.get("numAllNodes", result.num_nodes))
    result.evaluated = int(data.get("evaluated", 0))
    result.feasible = int(data.get("feasible", 0))
    result.num_nodes_to_find = int(data.get("numNodesToFind", 0))
    result.start_index = int(data.get("startIndex", 0))
    result.rejections = [
        Rejected(node, r["plugin"], r["code"], list(r["reasons"]), list(r.get("detail", ())))
        for r in data.get("rejections", [])
        for node in r["nodes"]
    ]
    result.absent = data.get("absent")
    result.nominated_node = data.get("nominatedNode")


def _scored(result: AttemptExplanation, event: StoredEvent) -> None:
    apply_scored(result, event.data)


def apply_scored(result: AttemptExplanation, data: Mapping[str, Any]) -> None:
    """Fill the score table from a `scored` record (recorded, or recomputed by replay)."""
    result.score_skipped = list(data.get("skipped", []))
    result.scored_nodes = int(data.get("nodes", 0))
    result.score_plugins = [
        {"name": p["name"], "weight": p.get("weight", 1)} for p in data.get("plugins", [])
    ]
    tops = {t["node"]: NodeScore(t["node"], int(t["total"])) for t in data.get("top", [])}
    for (plugin, name), cell in score_cells(data).items():
        node = tops.get(name)
        if node is not None:
            node.plugins[plugin] = {
                "raw": cell.raw,
                "normalized": cell.normalized,
                "weighted": cell.weighted,
            }
    result.top = list(tops.values())


def _selected(result: AttemptExplanation, event: StoredEvent) -> None:
    result.selected = event.node
    result.selection = dict(event.data)
    # Logs since 2026-11-25 leave out what follows from the rest: the seed is the
    # attempt's, the reason follows from the score and the tie count.
    result.selection.setdefault("seed", result.seed)
    result.selection.setdefault("reason", selection_reason(event.data))
    if "ties" not in result.selection:
        # Written once, in `scored`: the tied nodes lead its top list.
        ties = int(result.selection.get("tieCount", 0) or 0)
        result.selection["ties"] = [n.node for n in result.top[:ties]]


def _preempted(result: AttemptExplanation, event: StoredEvent) -> None:
    result.preemption = preemption_of(event)
    # Where the decision falls among the attempt's steps (after PostFilter).
    result.steps.append({"kind": "preempted", "node": event.node})


def _bound(result: AttemptExplanation, event: StoredEvent) -> None:
    result.outcome = "bound"
    result.steps.append({"kind": "bound", "node": event.node, **dict(event.data)})


def _unschedulable(result: AttemptExplanation, event: StoredEvent) -> None:
    data = event.data
    result.outcome = "error" if data.get("code") == "Error" else "unschedulable"
    result.message = str(data.get("message", ""))
    result.steps.append({"kind": "unschedulable", **dict(data)})


def _bind_failed(result: AttemptExplanation, event: StoredEvent) -> None:
    result.outcome = "bind failed"
    result.message = str(event.data.get("reason", ""))
    result.steps.append({"kind": "bind_failed", "node": event.node, **dict(event.data)})


def _shadow_verdict(result: AttemptExplanation, event: StoredEvent) -> None:
    result.outcome = "shadow verdict"
    result.shadow = shadow_verdict_of(event)
    result.message = result.shadow.our_message


def _step(result: AttemptExplanation, event: StoredEvent) -> None:
    step: dict[str, Any] = {"kind": event.kind}
    if event.node:
        step["node"] = event.node
    if event.plugin:
        step["plugin"] = event.plugin
    step.update(event.data)
    result.steps.append(step)


_HANDLERS = {
    "attempt_started": _started,
    "prefiltered": _prefiltered,
    "filtered": _filtered,
    "scored": _scored,
    "preempted": _preempted,
    "selected": _selected,
    "bound": _bound,
    "unschedulable": _unschedulable,
    "bind_failed": _bind_failed,
    "shadow_verdict": _shadow_verdict,
}


def explain_full(reader: EventReader, registry: Registry, explanation: PodExplanation) -> None:
    """Every node's scores for each scored attempt, by replay (the log keeps only the top K)."""
    wanted = {a.attempt for a in explanation.attempts if a.score_plugins}
    if not wanted:
        return
    found = full_scores(reader, registry, wanted)
    for attempt in explanation.attempts:
        result = found.get(attempt.attempt)
        if result is None or result.scored is None:
            continue
        kept = len(attempt.top)
        apply_scored(attempt, result.scored)
        attempt.recomputed = (
            f"all {len(attempt.top)} nodes recomputed by replay (the log keeps the top {kept})"
            if result.reproduced
            else f"recomputed by replay, but the replayed attempt did not reproduce the "
            f"recorded decision{': ' + result.note if result.note else ''}; "
            f"run `eventsched replay --pod {explanation.namespace}/{explanation.name}`"
        )


def selection_reason(data: Mapping[str, Any]) -> str:
    """Why `selected` chose its node: as recorded by older logs, else from its score and ties."""
    if "reason" in data:
        return str(data["reason"])
    if data.get("score") is None:
        return "only one feasible node"
    ties = int(data.get("tieCount", 1) or 1)
    if ties == 1:
        return "highest score"
    if data.get("tieBreak") == "heap":
        return f"tie between {ties} nodes broken by kube-scheduler's heap order"
    return f"tie between {ties} nodes broken by seed"
