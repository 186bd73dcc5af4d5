"""The extenders in preemption: kube-scheduler v1.28's `Evaluator.callExtenders`.

After the dry run has found candidates, each extender that has a `preemptVerb` and is
interested in the pod is called in the configuration's order with the candidates so far;
what it answers replaces them for the next one. Its answer names victims by UID: a node
not in the view, or a UID that is not a pod on that node, fails the call (upstream's
`convertToVictims`, with its wording). A failed call, or a kept node without victims,
fails the preemption with an Error unless the extender is ignorable (then the call, or
that node, is skipped). When no candidate is left the choice finds none ("no candidate
node for preemption").

kube-scheduler rebuilds the candidates from a Go map, so their order (the last tie-break
of `SelectCandidate`) is random there; here it is the order of the extender's answer, which
the log keeps. Each call's answer is recorded as the filter and prioritize answers are
(client.py), so replay narrows the same way without calling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.extenders.client import ExtenderError, HTTPExtender
from eventsched.framework.handle import Handle
from eventsched.framework.preemption.candidates import Candidate
from eventsched.framework.preemption.evaluator import Narrowed
from eventsched.framework.preemption.metavictims import NodeVictims
from eventsched.framework.status import Status
from eventsched.model import NodeTable, Pod

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class ExtenderNarrowing:
    """`callExtenders` for one preemption: the extenders and what they are called with."""

    extenders: Sequence[HTTPExtender]
    state: CycleState
    handle: Handle
    pod: Pod
    table: NodeTable

    def __call__(self, candidates: Sequence[Candidate]) -> Narrowed:
        out = Narrowed(tuple(candidates))
        for extender in self.extenders:
            if not extender.supports_preemption or not extender.is_interested(self.pod):
                continue
            try:
                answer = extender.process_preemption(
                    self.state, self.handle, self.pod, out.candidates
                )
                kept = self._convert(extender, answer)
            except ExtenderError as exc:
                out.calls.append({"extender": extender.name, "error": str(exc)})
                if extender.config.ignorable:
                    log.info(
                        "skipped extender as it returned error and has ignorable flag set",
                        extender=extender.name,
                        error=str(exc),
                        pod=self.pod.key,
                    )
                    continue
                return Narrowed((), Status.as_error(str(exc)), out.calls)
            empty = [c.node for c in kept if not c.victims]
            if empty and not extender.config.ignorable:
                error = f'expected at least one victim pod on node "{empty[0]}"'
                out.calls.append({"extender": extender.name, "error": error})
                return Narrowed((), Status.as_error(error), out.calls)
            out.candidates = tuple(c for c in kept if c.victims)
            out.calls.append(_call_record(extender, out.candidates, empty))
            if not out.candidates:
                break
        return out

    def _convert(self, extender: HTTPExtender, kept: Sequence[NodeVictims]) -> list[Candidate]:
        """`convertToVictims`: each UID as the pod on that node in the view."""
        out = []
        for node in kept:
            row = self.table.row_of(node.node)
            if row is None:
                raise ExtenderError(f'nodeinfo not found for node name "{node.node}"')
            on_node = self.table.pods[row]
            victims = []
            for uid in node.uids:
                pod = on_node.get(uid)
                if pod is None:
                    raise ExtenderError(
                        f"extender: {extender.name} claims to preempt pod (UID: &{{{uid}}}) on "
                        f"node: {node.node}, but the pod is not found on that node"
                    )
                victims.append(pod)
            out.append(Candidate(node.node, tuple(victims), node.pdb_violations))
        return out


def extender_narrowing(
    extenders: Sequence[HTTPExtender], state: CycleState, handle: Handle, pod: Pod, table: NodeTable
) -> ExtenderNarrowing | None:
    """The narrowing step, or None when no extender has a preempt verb (nothing to call:
    the candidates stay as the dry run found them)."""
    if not any(e.supports_preemption for e in extenders):
        return None
    return ExtenderNarrowing(extenders, state, handle, pod, table)


def _call_record(
    extender: HTTPExtender, kept: Sequence[Candidate], ignored: Sequence[str]
) -> dict[str, Any]:
    record: dict[str, Any] = {"extender": extender.name, "kept": [c.node for c in kept]}
    if ignored:
        record["ignored"] = list(ignored)
        for node in ignored:
            log.info(
                "ignored node for which the extender didn't report victims",
                node=node,
                extender=extender.name,
            )
    return record
