"""What a restarted process lists, gathered before it becomes the view.

A process that starts with `scheduler_started {view: listed}` lists every
node, pod and object again, as kube-scheduler's informers do, but logs only
those whose record differs from the log's last observation of them. Until
its lists are in, what it lists (and what it observes or sees removed
meanwhile) is gathered here, not in the view. The `listed` event that closes
the lists names everything listed, in list order; its fold installs exactly
those, in that order, so the view's node order is the list's, as a fresh
kube-scheduler's is.

Where the gathered copy of an unlogged object comes from differs, and is the
same object either way:

- the live process puts in what it listed, having checked that its record
  encodes to the digest the log last recorded for it (a pod reads back from its
  record as the pod it was recorded from: tests/fuzz/test_record_round_trip.py);
- replay (and anything else folding the log) starts from the view as the log
  had it before the start: the last observation of each object.

A pod a `bound` of this log placed, whose last observation predates its
binding, is listed on that node: the record without `nodeName` is the one the
log holds, and `listed` names the node (`placed`), as `reserved` and `bound`
placed it before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eventsched.events.vocabulary import LISTED
from eventsched.model import Node, Pod
from eventsched.model.objects import ClusterObject, object_from_record


@dataclass
class Relist:
    """Nodes, pods and other objects gathered while a restarted process lists them."""

    nodes: dict[str, Node] = field(default_factory=dict)
    pods: dict[str, Pod] = field(default_factory=dict)
    objects: dict[str, ClusterObject] = field(default_factory=dict)
    #: Pods (uid -> node) a `bound` of this log placed, listed on that node, whose
    #: record as last logged has no node: the gathered copy is that record, on the node
    #: or (carried from the view before the start) not yet.
    placed: dict[str, str] = field(default_factory=dict)

    @classmethod
    def carried(
        cls,
        nodes: Iterable[Node],
        pods: Mapping[str, Pod],
        objects: Iterable[ClusterObject],
    ) -> Relist:
        """What a view held before a start: each object as its last observation said."""
        return cls(
            nodes={node.name: node for node in nodes},
            pods=dict(pods),
            objects={obj.key: obj for obj in objects},
        )

    def put_pod(self, pod: Pod, placed_on: str = "") -> None:
        """`pod` as the log last recorded it; `placed_on`: the node our `bound` gave it
        (`pod` may be on it already, as listed)."""
        self.pods[pod.uid] = pod
        if placed_on:
            self.placed[pod.uid] = placed_on
        else:
            self.placed.pop(pod.uid, None)

    def drop_pod(self, uid: str) -> None:
        self.pods.pop(uid, None)
        self.placed.pop(uid, None)

    def listed(self) -> dict[str, Any]:
        """The `maintenance` data that installs what was gathered, in the order gathered."""
        return {
            "action": LISTED,
            "nodes": list(self.nodes),
            "pods": list(self.pods),
            "objects": list(self.objects),
            "placed": dict(self.placed),
        }

    def installed(self, data: Mapping[str, Any]) -> Listed:
        """What a `listed` event names, taken from here: its nodes, pods and objects in
        its order (a name not gathered is left out)."""
        placed = data.get("placed") or {}
        pods = []
        for uid in data.get("pods") or ():
            pod = self.pods.get(uid)
            if pod is not None:
                node = placed.get(uid)
                pods.append(pod.with_node(node) if node and pod.node_name != node else pod)
        return Listed(
            nodes=[self.nodes[n] for n in data.get("nodes") or () if n in self.nodes],
            pods=pods,
            objects=[self.objects[k] for k in data.get("objects") or () if k in self.objects],
        )

    # -- saved form (a pruned log's base cut between a start and its `listed`) -------

    def to_record(self) -> dict[str, Any]:
        return {
            "nodes": [node.to_record() for node in self.nodes.values()],
            "pods": [self._pod_record(pod) for pod in self.pods.values()],
            "objects": [obj.to_record() for obj in self.objects.values()],
            "placed": dict(self.placed),
        }

    def _pod_record(self, pod: Pod) -> dict[str, Any]:
        """A placed pod's record as the log holds it, without the node, however gathered."""
        return pod.to_record(node=pod.uid not in self.placed)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Relist:
        relist = cls.carried(
            (Node.from_record(r) for r in record.get("nodes") or ()),
            {p.uid: p for p in (Pod.from_record(r) for r in record.get("pods") or ())},
            (object_from_record(r) for r in record.get("objects") or ()),
        )
        relist.placed = {str(k): str(v) for k, v in (record.get("placed") or {}).items()}
        return relist


@dataclass(frozen=True)
class Listed:
    """The view a `listed` event installs, in its order."""

    nodes: list[Node]
    pods: list[Pod]
    objects: list[ClusterObject]
