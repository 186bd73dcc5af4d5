"""Cluster objects other than nodes and pods that default plugins read.

- Namespaces: their labels, for inter-pod affinity's `namespaceSelector`.
- Services, ReplicaSets, StatefulSets and ReplicationControllers: their pod
  selectors, for PodTopologySpread's default constraints (kube-scheduler's
  `helper.DefaultSelector`).
- PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes, for
  the volume plugins (model/volumes.py, held in `ClusterObjects.storage`).
- PodDisruptionBudgets, for DefaultPreemption (model/disruption.py).
- ElasticQuotas, for CapacityScheduling (model/quota.py).
- NodeResourceTopologies, for NodeResourceTopologyMatch (model/topology.py).

Only the fields a decision reads are kept, so each observation is small
enough to log like a node or a pod.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from eventsched.model.disruption import PDB, PodDisruptionBudget
from eventsched.model.pod import Pod
from eventsched.model.quota import ELASTIC_QUOTA, ElasticQuota
from eventsched.model.selectors import IN, LabelRequirement, LabelSelector
from eventsched.model.storage import StorageObjects
from eventsched.model.topology import NRT, NodeResourceTopology
from eventsched.model.volumes import (
    CSI_NODE,
    PV,
    STORAGE_CLASS,
    VOLUME_KINDS,
    VolumeObject,
    volume_object_from_manifest,
    volume_object_from_record,
)

SERVICE = "Service"
REPLICA_SET = "ReplicaSet"
STATEFUL_SET = "StatefulSet"
REPLICATION_CONTROLLER = "ReplicationController"
WORKLOAD_KINDS = (SERVICE, REPLICA_SET, STATEFUL_SET, REPLICATION_CONTROLLER)


NAMESPACE = "Namespace"
NAME_LABEL = "kubernetes.io/metadata.name"
#: Every kind this module reads; the cluster adapters watch these (ElasticQuota only when
#: a profile enables CapacityScheduling: cluster/kube/adapter.py CUSTOM_RESOURCES).
KINDS = (NAMESPACE, *WORKLOAD_KINDS, *VOLUME_KINDS, PDB, ELASTIC_QUOTA, NRT)
#: Kinds whose objects have no namespace: their key is KIND/NAME.
CLUSTER_SCOPED = frozenset({NAMESPACE, PV, STORAGE_CLASS, CSI_NODE, NRT})


@dataclass(frozen=True, slots=True)
class Namespace:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    kind: str = NAMESPACE

    @property
    def key(self) -> str:
        return f"{NAMESPACE}/{self.name}"

    def to_record(self) -> dict[str, Any]:
        return {"kind": NAMESPACE, "name": self.name, "labels": dict(self.labels)}


@dataclass(frozen=True, slots=True)
class Workload:
    """A Service or controller and the pods it selects.

    `selector` is None for a Service without a selector (it selects no pod).
    """

    kind: str
    namespace: str
    name: str
    selector: LabelSelector | None = None

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"

    def to_record(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "selector": None if self.selector is None else self.selector.to_dict(),
        }


#: An object of one of `KINDS`.
ClusterObject = (
    Namespace | Workload | VolumeObject | PodDisruptionBudget | ElasticQuota | NodeResourceTopology
)


def record_key(record: Mapping[str, Any]) -> str:
    """The `key` of the object an `object_observed` record holds, read from the record."""
    if record.get("kind") in CLUSTER_SCOPED:
        return f"{record.get('kind')}/{record.get('name')}"
    return f"{record.get('kind')}/{record.get('namespace')}/{record.get('name')}"


def object_from_record(record: Mapping[str, Any]) -> ClusterObject:
    """The object an `object_observed` event holds (`to_record()`)."""
    kind = str(record["kind"])
    if kind == NAMESPACE:
        return Namespace(str(record["name"]), dict(record.get("labels") or {}))
    if kind in VOLUME_KINDS:
        return volume_object_from_record(record)
    if kind == PDB:
        return PodDisruptionBudget.from_record(record)
    if kind == ELASTIC_QUOTA:
        return ElasticQuota.from_record(record)
    if kind == NRT:
        return NodeResourceTopology.from_record(record)
    raw = record.get("selector")
    where = f"{kind} {record.get('namespace')}/{record.get('name')}"
    selector = None if raw is None else LabelSelector.parse(raw, where, "selector")
    return Workload(kind, str(record["namespace"]), str(record["name"]), selector)


def object_from_manifest(obj: Mapping[str, Any]) -> ClusterObject:
    """An object of one of `KINDS` from the API (or a manifest)."""
    if obj.get("kind") in VOLUME_KINDS:
        return volume_object_from_manifest(obj)
    if obj.get("kind") == PDB:
        return PodDisruptionBudget.from_manifest(obj)
    if obj.get("kind") == ELASTIC_QUOTA:
        return ElasticQuota.from_manifest(obj)
    if obj.get("kind") == NRT:
        return NodeResourceTopology.from_manifest(obj)
    if obj.get("kind") == NAMESPACE:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name"))
        labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
        # The API server sets this label on every namespace (since 1.21); a manifest
        # given to the simulation lacks it, a listed namespace has it.
        return Namespace(name, {**labels, NAME_LABEL: name})
    return workload_from_manifest(obj)


def _as_selector(labels: Mapping[str, str]) -> LabelSelector:
    """A map selector (Service, ReplicationController) as a LabelSelector."""
    return LabelSelector(
        tuple(LabelRequirement(k, IN, frozenset([v])) for k, v in sorted(labels.items()))
    )


def _as_map(selector: LabelSelector) -> dict[str, str]:
    """A map selector (`_as_selector`'s result) back as its label map."""
    return {r.key: next(iter(r.values)) for r in selector.requirements}


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
    """The namespaces, workloads, storage objects, disruption budgets and elastic quotas the
    scheduler has observed."""

    def __init__(self) -> None:
        self.namespaces: dict[str, Namespace] = {}
        #: (kind, namespace, name) -> workload. Change it through `upsert` and `remove`,
        #: which keep `_services` in step.
        self.workloads: dict[tuple[str, str, str], Workload] = {}
        #: namespace -> the Services of `workloads` in it, in the same order: what
        #: `default_selector` reads for every pod (upstream lists the namespace's Services).
        self._services: dict[str, dict[tuple[str, str, str], Workload]] = {}
        self.storage = StorageObjects()
        self.budgets: dict[tuple[str, str], PodDisruptionBudget] = {}
        #: namespace -> name -> quota.
        self.quotas: dict[str, dict[str, ElasticQuota]] = {}
        self.topologies: dict[str, NodeResourceTopology] = {}

    def __iter__(self) -> Iterator[ClusterObject]:
        yield from self.namespaces.values()
        yield from self.workloads.values()
        yield from self.storage
        yield from self.budgets.values()
        for quotas in self.quotas.values():
            yield from quotas.values()
        yield from self.topologies.values()

    def __len__(self) -> int:
        quotas = sum(len(q) for q in self.quotas.values())
        return (
            len(self.namespaces)
            + len(self.workloads)
            + len(self.storage)
            + len(self.budgets)
            + quotas
            + len(self.topologies)
        )

    def has(self, obj: ClusterObject) -> bool:
        """Whether an object of that kind and name is held (whatever its content)."""
        if isinstance(obj, Namespace):
            return obj.name in self.namespaces
        if isinstance(obj, Workload):
            return (obj.kind, obj.namespace, obj.name) in self.workloads
        if isinstance(obj, PodDisruptionBudget):
            return (obj.namespace, obj.name) in self.budgets
        if isinstance(obj, ElasticQuota):
            return obj.name in self.quotas.get(obj.namespace, {})
        if isinstance(obj, NodeResourceTopology):
            return obj.name in self.topologies
        return self.storage.has(obj)

    def upsert(self, obj: ClusterObject) -> None:
        if isinstance(obj, Namespace):
            self.namespaces[obj.name] = obj
        elif isinstance(obj, Workload):
            key = (obj.kind, obj.namespace, obj.name)
            self.workloads[key] = obj
            if obj.kind == SERVICE:
                self._services.setdefault(obj.namespace, {})[key] = obj
        elif isinstance(obj, PodDisruptionBudget):
            self.budgets[(obj.namespace, obj.name)] = obj
        elif isinstance(obj, ElasticQuota):
            self.quotas.setdefault(obj.namespace, {})[obj.name] = obj
        elif isinstance(obj, NodeResourceTopology):
            self.topologies[obj.name] = obj
        else:
            self.storage.upsert(obj)

    def remove(self, obj: ClusterObject) -> None:
        if isinstance(obj, Namespace):
            self.namespaces.pop(obj.name, None)
        elif isinstance(obj, Workload):
            key = (obj.kind, obj.namespace, obj.name)
            self.workloads.pop(key, None)
            services = self._services.get(obj.namespace)
            if services is not None and services.pop(key, None) is not None and not services:
                del self._services[obj.namespace]
        elif isinstance(obj, PodDisruptionBudget):
            self.budgets.pop((obj.namespace, obj.name), None)
        elif isinstance(obj, ElasticQuota):
            quotas = self.quotas.get(obj.namespace, {})
            quotas.pop(obj.name, None)
            if not quotas:
                self.quotas.pop(obj.namespace, None)
        elif isinstance(obj, NodeResourceTopology):
            self.topologies.pop(obj.name, None)
        else:
            self.storage.remove(obj)

    def clear(self) -> None:
        self.namespaces.clear()
        self.workloads.clear()
        self._services.clear()
        self.storage.clear()
        self.budgets.clear()
        self.quotas.clear()
        self.topologies.clear()

    def elastic_quota(self, namespace: str) -> ElasticQuota | None:
        """The namespace's ElasticQuota as CapacityScheduling reads it: the first by name of
        those it has (upstream lists the namespace's quotas and takes the first)."""
        quotas = self.quotas.get(namespace)
        return quotas[min(quotas)] if quotas else None

    def disruption_budgets(self) -> tuple[PodDisruptionBudget, ...]:
        """Every budget observed, by namespace and name (kube-scheduler's
        `getPodDisruptionBudgets` lists them all; the order changes no verdict of
        `filterPodsWithPDBViolation`, a stable one keeps replay's the same)."""
        return tuple(self.budgets[key] for key in sorted(self.budgets))

    def topology(self, node_name: str) -> NodeResourceTopology | None:
        """The NodeResourceTopology of a node, None when none is known."""
        return self.topologies.get(node_name)

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
        for service in self._services.get(pod.namespace, {}).values():
            if service.selector is not None and service.selector.matches(pod.labels):
                merged.update(_as_map(service.selector))
        owner = pod.owner
        if owner is not None and owner.kind in (REPLICA_SET, STATEFUL_SET, REPLICATION_CONTROLLER):
            controller = self.workloads.get((owner.kind, pod.namespace, owner.name))
            if controller is not None and controller.selector is not None:
                if owner.kind == REPLICATION_CONTROLLER:
                    merged.update(_as_map(controller.selector))
                else:
                    return _as_selector(merged).with_requirements(controller.selector.requirements)
        return _as_selector(merged)
