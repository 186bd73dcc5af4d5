"""k8s.io/kube-scheduler/extender/v1 as JSON: the requests kube-scheduler sends, the answers
it reads. The keys are the Go field names (`Pod`, `Nodes`, `NodeNames`, `FailedNodes`, ...).

A request that is not what kube-scheduler sends is refused with `ProtocolError`, whose
message names the field and what was expected; the server answers it in the verb's own
result shape (`{"Error": ...}`), never with a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from eventsched.framework.preemption.metavictims import NodeVictims
from eventsched.framework.servedpreempt import PreemptAnswer
from eventsched.framework.servedverbs import FilterAnswer, HostPriority

VERBS = ("filter", "prioritize", "bind", "preempt")


class ProtocolError(ValueError):
    """A request body kube-scheduler would not send; the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class ExtenderArgs:
    """`ExtenderArgs`: the pod, and the candidates as node objects or (nodeCacheCapable) names."""

    pod: Mapping[str, Any]
    #: The `NodeNames` form: names only (kube-scheduler's nodeCacheCapable: true).
    node_names: Sequence[str] | None
    #: The `Nodes` form: `Nodes.items`, whole v1.Node objects.
    nodes: Sequence[Mapping[str, Any]] | None

    @property
    def form(self) -> str:
        return "NodeNames" if self.node_names is not None else "Nodes"

    def names(self) -> list[str]:
        if self.node_names is not None:
            return list(self.node_names)
        return [str(n["metadata"]["name"]) for n in self.nodes or ()]


@dataclass(frozen=True, slots=True)
class BindingArgs:
    """`ExtenderBindingArgs`."""

    pod_name: str
    pod_namespace: str
    pod_uid: str
    node: str


def _object(body: bytes) -> dict[str, Any]:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ProtocolError(f"the request body is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise ProtocolError(f"the request body must be a JSON object, got {type(value).__name__}")
    return value


def parse_args(body: bytes) -> ExtenderArgs:
    value = _object(body)
    pod = value.get("Pod")
    if not isinstance(pod, dict) or not isinstance(pod.get("metadata"), dict):
        raise ProtocolError("ExtenderArgs.Pod: a v1.Pod object with metadata is required")
    names = value.get("NodeNames")
    nodes = value.get("Nodes")
    if names is not None:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ProtocolError("ExtenderArgs.NodeNames: a list of node names is expected")
        return ExtenderArgs(pod, names, None)
    if nodes is None:
        raise ProtocolError(
            "ExtenderArgs: neither NodeNames nor Nodes is set (kube-scheduler sends one)"
        )
    items = nodes.get("items") if isinstance(nodes, dict) else None
    if not isinstance(items, list):
        raise ProtocolError("ExtenderArgs.Nodes: a v1.NodeList with items is expected")
    for i, item in enumerate(items):
        meta = item.get("metadata") if isinstance(item, dict) else None
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
            raise ProtocolError(f"ExtenderArgs.Nodes.items[{i}]: a v1.Node with a name is expected")
    return ExtenderArgs(pod, None, items)


@dataclass(frozen=True, slots=True)
class PreemptionArgs:
    """`ExtenderPreemptionArgs`: the pod, and kube-scheduler's candidates with their victims."""

    pod: Mapping[str, Any]
    #: `NodeNameToMetaVictims` (nodeCacheCapable: true: UIDs only) or `NodeNameToVictims`.
    form: str
    candidates: Sequence[NodeVictims]


def parse_preemption(body: bytes) -> PreemptionArgs:
    """Either map: victims as `MetaPod` (`UID`) or as whole v1.Pod objects, read for their uid."""
    value = _object(body)
    pod = value.get("Pod")
    if not isinstance(pod, dict) or not isinstance(pod.get("metadata"), dict):
        raise ProtocolError("ExtenderPreemptionArgs.Pod: a v1.Pod object with metadata is required")
    for form in ("NodeNameToMetaVictims", "NodeNameToVictims"):
        victims = value.get(form)
        if victims is None:
            continue
        if not isinstance(victims, dict):
            raise ProtocolError(f"ExtenderPreemptionArgs.{form}: a map of node name to victims")
        candidates = [_node_victims(form, node, v) for node, v in victims.items()]
        return PreemptionArgs(pod, form, candidates)
    raise ProtocolError(
        "ExtenderPreemptionArgs: neither NodeNameToMetaVictims nor NodeNameToVictims is set"
        " (kube-scheduler sends one)"
    )


def _node_victims(form: str, node: str, victims: Any) -> NodeVictims:
    where = f"ExtenderPreemptionArgs.{form}[{node}]"
    pods = victims.get("Pods") if isinstance(victims, dict) else None
    if not isinstance(pods, list):
        raise ProtocolError(f"{where}.Pods: a list of victims is expected")
    uids = []
    for i, pod in enumerate(pods):
        if form == "NodeNameToMetaVictims":
            uid = pod.get("UID") if isinstance(pod, dict) else None
        else:
            meta = pod.get("metadata") if isinstance(pod, dict) else None
            uid = meta.get("uid") if isinstance(meta, dict) else None
        if not isinstance(uid, str) or not uid:
            field = "UID" if form == "NodeNameToMetaVictims" else "metadata.uid"
            raise ProtocolError(f"{where}.Pods[{i}].{field}: a pod UID is required")
        uids.append(uid)
    count = victims.get("NumPDBViolations", 0)
    if not isinstance(count, int):
        raise ProtocolError(f"{where}.NumPDBViolations: an integer is expected")
    return NodeVictims(node, tuple(uids), count)


def preemption_result(answer: PreemptAnswer) -> dict[str, Any]:
    """`ExtenderPreemptionResult`: always `NodeNameToMetaVictims`, as kube-scheduler reads it."""
    return {
        "NodeNameToMetaVictims": {
            k.node: {"Pods": [{"UID": u} for u in k.uids], "NumPDBViolations": k.pdb_violations}
            for k in answer.kept
        }
    }


def parse_binding(body: bytes) -> BindingArgs:
    value = _object(body)
    fields = {}
    for key in ("PodName", "PodNamespace", "PodUID", "Node"):
        field = value.get(key)
        if not isinstance(field, str) or not field:
            raise ProtocolError(f"ExtenderBindingArgs.{key}: a non-empty string is required")
        fields[key] = field
    return BindingArgs(fields["PodName"], fields["PodNamespace"], fields["PodUID"], fields["Node"])


def filter_result(args: ExtenderArgs, answer: FilterAnswer) -> dict[str, Any]:
    """`ExtenderFilterResult` in the request's form: names back for names, objects for objects."""
    result: dict[str, Any] = {
        "Nodes": None,
        "NodeNames": None,
        "FailedNodes": answer.failed,
        "FailedAndUnresolvableNodes": answer.unresolvable,
        "Error": answer.error,
    }
    if answer.error:
        return result
    if args.node_names is not None:
        result["NodeNames"] = answer.passed
    else:
        passed = set(answer.passed)
        result["Nodes"] = {
            "metadata": {},
            "items": [n for n in args.nodes or () if n["metadata"]["name"] in passed],
        }
    return result


def host_priority_list(priorities: Sequence[HostPriority]) -> list[dict[str, Any]]:
    return [{"Host": p.host, "Score": p.score} for p in priorities]


def error_result(verb: str, message: str) -> dict[str, Any]:
    """The verb's result with `Error` set (prioritize's list has no Error: a bare object)."""
    if verb == "filter":
        return {
            "Nodes": None,
            "NodeNames": None,
            "FailedNodes": {},
            "FailedAndUnresolvableNodes": {},
            "Error": message,
        }
    if verb == "preempt":
        return {"NodeNameToMetaVictims": None, "Error": message}
    return {"Error": message}
