"""The preempt verb's body and answer (k8s.io/kube-scheduler extender/v1, as kube-scheduler
v1.28's `HTTPExtender.ProcessPreemption` sends and reads them).

The arguments carry the pod and kube-scheduler's candidates in one of two maps, the
other sent as null: `NodeNameToMetaVictims` (victims by UID) when the extender is
`nodeCacheCapable`, else `NodeNameToVictims` (victims as whole v1.Pod objects). The
answer (`ExtenderPreemptionResult`) is always `NodeNameToMetaVictims`: the candidates the
extender keeps, each with its victims by UID and its count of PDB violations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eventsched.framework.extenders.objects import pod_object
from eventsched.framework.preemption.candidates import Candidate
from eventsched.framework.preemption.metavictims import NodeVictims
from eventsched.model import Pod


class PreemptAnswerError(ValueError):
    """The extender's answer is not an ExtenderPreemptionResult."""


def preemption_args(
    pod: Pod, candidates: Sequence[Candidate], node_cache_capable: bool
) -> dict[str, Any]:
    """`ExtenderPreemptionArgs` for the candidates, in the form the extender asked for."""
    if node_cache_capable:
        meta = {
            c.node: {
                "Pods": [{"UID": v.uid} for v in c.victims],
                "NumPDBViolations": c.num_pdb_violations,
            }
            for c in candidates
        }
        return {"Pod": pod_object(pod), "NodeNameToVictims": None, "NodeNameToMetaVictims": meta}
    whole = {
        c.node: {
            "Pods": [pod_object(v) for v in c.victims],
            "NumPDBViolations": c.num_pdb_violations,
        }
        for c in candidates
    }
    return {"Pod": pod_object(pod), "NodeNameToVictims": whole, "NodeNameToMetaVictims": None}


def preemption_result(extender: str, answer: Any) -> list[NodeVictims]:
    """The candidates an `ExtenderPreemptionResult` keeps, in its order.

    A node mapped to null keeps no victims (kube-scheduler then refuses the candidate:
    "expected at least one victim pod on node"). Raises PreemptAnswerError, naming the
    field, for anything that is not the protocol's shape.
    """
    where = f"extender {extender!r} answered preempt with"
    if not isinstance(answer, dict):
        raise PreemptAnswerError(f"{where} no ExtenderPreemptionResult object")
    kept = answer.get("NodeNameToMetaVictims")
    if kept is None:
        return []
    if not isinstance(kept, dict):
        raise PreemptAnswerError(f"{where} NodeNameToMetaVictims that is not a map")
    return [_node_victims(where, str(node), victims) for node, victims in kept.items()]


def _node_victims(where: str, node: str, victims: Any) -> NodeVictims:
    if victims is None:
        return NodeVictims(node, (), 0)
    field = f"NodeNameToMetaVictims[{node}]"
    pods = victims.get("Pods") if isinstance(victims, dict) else None
    if pods is not None and not isinstance(pods, list):
        raise PreemptAnswerError(f"{where} {field}.Pods that is not a list")
    uids = []
    for i, pod in enumerate(pods or ()):
        uid = pod.get("UID") if isinstance(pod, dict) else None
        if not isinstance(uid, str):
            raise PreemptAnswerError(f"{where} {field}.Pods[{i}] without a UID string")
        uids.append(uid)
    count = victims.get("NumPDBViolations") or 0
    if not isinstance(count, int):
        raise PreemptAnswerError(f"{where} {field}.NumPDBViolations that is not an integer")
    return NodeVictims(node, tuple(uids), count)
