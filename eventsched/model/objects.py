"""Cluster objects other than nodes and pods that default plugins read.

- Namespaces: their labels, for inter-pod affinity's `namespaceSelector`.
- Services, ReplicaSets, StatefulSets and ReplicationControllers: their pod
  selectors, for PodTopologySpread's default constraints (kube-scheduler's
  `helper.DefaultSelector`).
- PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes, for
  the volume plugins (model/volumes.py, held in `ClusterObjects.storage`).
- PodDisruptionBudgets, for DefaultPreemption (model/disruption.py).
- The custom kinds plugins declare in their own packages (model/customkinds.py:
  CapacityScheduling's ElasticQuotas, NodeResourceTopologyMatch's
  NodeResourceTopologies), held in `ClusterObjects.custom` and decoded through their
  declarations, so this module knows none of them.

Only the fields a decision reads are kept, so each observation is small
enough to log like a node or a pod.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from eventsched.model.customkinds import CUSTOM_KINDS, CustomObject, KindNames
from eventsched.model.customobjects import CustomObjects
from eventsched.model.disruption import PDB, PodDisruptionBudget
from eventsched.model.pod import Pod
from eventsched.model.selectors import IN, LabelRequirement, LabelSelector
from eventsched.model.storage import StorageObjects
from eventsched.model.volumes import (
    CSI_DRIVER,
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
#: The kinds this module reads itself; the cluster adapters always watch these.
BUILT_IN_KINDS = (NAMESPACE, *WORKLOAD_KINDS, *VOLUME_KINDS, PDB)
#: Every kind read: the built-in ones, then the custom kinds plugins declare (the cluster
#: adapter watches one of those only when a profile enables a plugin that reads it).
KINDS = KindNames(BUILT_IN_KINDS, CUSTOM_KINDS)
#: Kinds whose objects have no namespace: their key is KIND/NAME.
CLUSTER_SCOPED = KindNames(
    (NAMESPACE, PV, STORAGE_CLASS, CSI_NODE, CSI_DRIVER), CUSTOM_KINDS, namespaced=False
)


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
ClusterObject = Namespace | Workload | VolumeObject | PodDisruptionBudget | CustomObject


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
    custom = CUSTOM_KINDS.get(kind)
    if custom is not None:
        return custom.from_record(record)
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
    custom = CUSTOM_KINDS.get(str(obj.get("kind")))
    if custom is not None:
        return custom.from_manifest(obj)
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
    """The namespaces, workloads, storage objects, disruption budgets and objects of custom
    kinds the scheduler has observed."""

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
        #: The objects of the custom kinds plugins declare (model/customkinds.py).
        self.custom = CustomObjects()

    def __iter__(self) -> Iterator[ClusterObject]:
        yield from self.namespaces.values()
        yield from self.workloads.values()
        yield from self.storage
        yield from self.budgets.values()
        yield from self.custom

    def __len__(self) -> int:
        return (
            len(self.namespaces)
            + len(self.workloads)
            + len(self.storage)
            + len(self.budgets)
            + len(self.custom)
        )

    def has(self, obj: ClusterObject) -> bool:
        """Whether an object of that kind and name is held (whatever its content)."""
        if isinstance(obj, Namespace):
            return obj.name in self.namespaces
        if isinstance(obj, Workload):
            return (obj.kind, obj.namespace, obj.name) in self.workloads
        if isinstance(obj, PodDisruptionBudget):
            return (obj.namespace, obj.name) in self.budgets
        if isinstance(obj, VolumeObject):
            return self.storage.has(obj)
        return self.custom.has(obj)

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
        elif isinstance(obj, VolumeObject):
            self.storage.upsert(obj)
        else:
            self.custom.upsert(obj)

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
        elif isinstance(obj, VolumeObject):
            self.storage.remove(obj)
        else:
            self.custom.remove(obj)

    def clear(self) -> None:
        self.namespaces.clear()
        self.workloads.clear()
        self._services.clear()
        self.storage.clear()
        self.budgets.clear()
        self.custom.clear()

    def disruption_budgets(self) -> tuple[PodDisruptionBudget, ...]:
        """Every budget observed, by namespace and name (kube-scheduler's
        `getPodDisruptionBudgets` lists them all; the order changes no verdict of
        `filterPodsWithPDBViolation`, a stable one keeps replay's the same)."""
        return tuple(self.budgets[key] for key in sorted(self.budgets))

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
