"""Cluster objects other than nodes and pods that default plugins read.

- Namespaces: their labels, for inter-pod affinity's `namespaceSelector`.
- Services, ReplicaSets, StatefulSets and ReplicationControllers: their pod
  selectors, for PodTopologySpread's default constraints (kube-scheduler's
  `helper.DefaultSelector`).

Only the fields a decision reads are kept, so each observation is small
enough to log like a node or a pod.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from eventsched.model.pod import Pod
from eventsched.model.selectors import IN, LabelRequirement, LabelSelector

SERVICE = "Service"
REPLICA_SET = "ReplicaSet"
STATEFUL_SET = "StatefulSet"
REPLICATION_CONTROLLER = "ReplicationController"
WORKLOAD_KINDS = (SERVICE, REPLICA_SET, STATEFUL_SET, REPLICATION_CONTROLLER)


@dataclass(frozen=True, slots=True)
class Namespace:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Workload:
    """A Service or controller and the pods it selects.

    `selector` is None for a Service without a selector (it selects no pod).
    """

    kind: str
    namespace: str
    name: str
    selector: LabelSelector | None = None


def _as_selector(labels: Mapping[str, str]) -> LabelSelector:
    """A map selector (Service, ReplicationController) as a LabelSelector."""
    return LabelSelector(
        tuple(LabelRequirement(k, IN, frozenset([v])) for k, v in sorted(labels.items()))
    )


def workload_from_manifest(obj: Mapping[str, Any]) -> Workload:
    kind = str(obj.get("kind") or "")
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    where = f"{kind} {meta.get('namespace', 'default')}/{meta.get('name', '')}"
    raw = spec.get("selector")
    selector: LabelSelector | None
    if kind in (SERVICE, REPLICATION_CONTROLLER):
        selector = _as_selector({str(k): str(v) for k, v in raw.items()}) if raw else None
    else:
        selector = LabelSelector.parse(raw, where, "spec.selector") if raw is not None else None
    return Workload(kind, str(meta.get("namespace") or "default"), str(meta.get("name")), selector)


class ClusterObjects:
    """The namespaces and workloads the scheduler has observed."""

    def __init__(self) -> None:
        self.namespaces: dict[str, Namespace] = {}
        self.workloads: dict[tuple[str, str, str], Workload] = {}

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        """A namespace's labels, None when it is not known."""
        namespace = self.namespaces.get(name)
        return None if namespace is None else namespace.labels

    def default_selector(self, pod: Pod) -> LabelSelector:
        """kube-scheduler's `helper.DefaultSelector`: what selects the pod's siblings.

        The selectors of the Services in the pod's namespace that select it,
        merged, and the requirements of its controller (ReplicaSet,
        StatefulSet or ReplicationController) when that is known. Empty
        (`is_everything`) when nothing selects the pod: then no default
        spread constraint applies.
        """
        merged: dict[str, str] = {}
        for workload in self.workloads.values():
            if (
                workload.kind == SERVICE
                and workload.namespace == pod.namespace
                and workload.selector is not None
                and workload.selector.matches(pod.labels)
            ):
                merged.update({r.key: next(iter(r.values)) for r in workload.selector.requirements})
        owner = pod.owner
        if owner is not None and owner.kind in (REPLICA_SET, STATEFUL_SET, REPLICATION_CONTROLLER):
            controller = self.workloads.get((owner.kind, pod.namespace, owner.name))
            if controller is not None and controller.selector is not None:
                if owner.kind == REPLICATION_CONTROLLER:
                    merged.update(
                        {r.key: next(iter(r.values)) for r in controller.selector.requirements}
                    )
                else:
                    return _as_selector(merged).with_requirements(controller.selector.requirements)
        return _as_selector(merged)
