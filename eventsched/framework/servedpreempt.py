"""The preempt verb eventsched serves as kube-scheduler's extender (v1.28 `ProcessPreemption`).

kube-scheduler's DefaultPreemption has found candidate nodes, each with the victims it
would evict; eventsched narrows them with its own profile. PreFilter runs once, then on
each candidate `select_victims_on_node` over kube-scheduler's victims only, with the
profile's Filter plugins (nominated pods counted) as the judge: a node stays only if the
pod passes eventsched's filters once all of them are gone, and of them only the pods it
needs gone are kept as victims (the others reprieved, PDB-violating ones first, as
upstream reprieves), with eventsched's own count of PDB violations.

A node whose victims come out empty is dropped: kube-scheduler refuses a candidate
without victims ("expected at least one victim pod on node"). Like filter and
prioritize, the answer is pure given (profile, pod, NodeTable, candidates) and recorded
(`preempt_answered`), so replay decides the call again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.preemption.candidates import candidate_status
from eventsched.framework.preemption.metavictims import NodeVictims
from eventsched.framework.preemption.victims import FitsWithout, select_victims_on_node
from eventsched.framework.runtime import Framework
from eventsched.framework.servedverbs import UNKNOWN_NODE
from eventsched.framework.status import Status
from eventsched.model import NodeTable, Pod

#: The decision a preempt call answers with.
PREEMPT_ANSWERED = "preempt_answered"


@dataclass(slots=True)
class PreemptAnswer:
    """ExtenderPreemptionResult's content: the candidates kept, in the order given, and why
    each other one was dropped (recorded, not sent: the result has no field for it)."""

    kept: list[NodeVictims] = field(default_factory=list)
    dropped: dict[str, str] = field(default_factory=dict)
    #: A scheduling error (a PreFilter plugin failed): the call is answered with it.
    error: str = ""

    def to_record(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kept": [k.to_record() for k in self.kept],
            "dropped": [{"node": n, "reason": r} for n, r in self.dropped.items()],
        }
        if self.error:
            data["error"] = self.error
        return data


def candidates_record(given: Sequence[NodeVictims]) -> dict[str, Any]:
    """kube-scheduler's candidates as `attempt_started`'s extender data keeps them."""
    return {"count": len(given), "victims": [g.to_record() for g in given]}


def candidates_from_record(record: Mapping[str, Any]) -> list[NodeVictims]:
    return [NodeVictims.from_record(v) for v in record.get("victims", ())]


def serve_preempt(
    fw: Framework, state: CycleState, pod: Pod, table: NodeTable, given: Sequence[NodeVictims]
) -> PreemptAnswer:
    """Each candidate judged with the profile's filters; the answer recorded in `state`."""
    answer = PreemptAnswer()
    pre_result, status, _ = fw.run_pre_filter(state, pod, table)
    if not status.is_success:
        if status.is_rejected:
            answer.dropped = {g.node: _reason(status) for g in given}
        else:
            answer.error = status.message
        state.record(PREEMPT_ANSWERED, answer.to_record())
        return answer
    allowed = pre_result.node_names if pre_result is not None else None
    pdbs = table.objects.disruption_budgets()
    for candidate in given:
        row = table.row_of(candidate.node)
        if row is None:
            answer.dropped[candidate.node] = UNKNOWN_NODE
            continue
        if allowed is not None and candidate.node not in allowed:
            answer.dropped[candidate.node] = "node(s) not in PreFilter's node names"
            continue
        on_node = table.pods[row]
        missing = [u for u in candidate.uids if u not in on_node]
        if missing:
            answer.dropped[candidate.node] = (
                f"victim(s) not on the node in eventsched's view: {', '.join(missing)}"
            )
            continue
        victims = [on_node[u] for u in candidate.uids]
        fits = _fits_on(fw, state, pod, table, candidate.node)
        selection = select_victims_on_node(pod, victims, pdbs, fits)
        rejected = candidate_status(candidate.node, selection)
        if rejected is not None:
            answer.dropped[candidate.node] = _reason(rejected)
            continue
        uids = tuple(v.uid for v in selection.victims)
        answer.kept.append(NodeVictims(candidate.node, uids, selection.num_pdb_violations))
    state.record(PREEMPT_ANSWERED, answer.to_record())
    return answer


def _fits_on(
    fw: Framework, state: CycleState, pod: Pod, table: NodeTable, node: str
) -> FitsWithout:
    def fits(removed: Sequence[Pod]) -> Status:
        return fw.run_filter_with_nominated_pods(state, pod, table, node, removed)

    return fits


def _reason(status: Status) -> str:
    return ", ".join(status.reasons) or status.message
