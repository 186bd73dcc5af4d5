"""Builders for the volume plugins' tests: claims, volumes, classes, CSI nodes and pods using them.

They build Kubernetes manifests and read them through the model, as the
cluster adapters do, so a test states its objects the way upstream's test
tables do (`makePVC("pvc-a", waitSC.Name).withBoundPV("pv-a")`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from eventsched.model import Node, NodeTable, Pod
from eventsched.model.objects import ClusterObject
from eventsched.model.volumes import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from tests.plugins.conftest import make_node, make_pod

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"


def claim(
    name: str,
    storage_class: str | None = None,
    *,
    bound_to: str = "",
    namespace: str = "default",
    access_modes: Iterable[str] = ("ReadWriteOnce",),
    storage: str | None = None,
    phase: str | None = None,
    selected_node: str = "",
    bind_completed: bool | None = None,
    deleting: bool = False,
    owner_uid: str = "",
    selector: dict[str, Any] | None = None,
    volume_mode: str | None = None,
) -> PersistentVolumeClaim:
    """`makePVC`: bound (`withBoundPV`) means a volume name and the bind-completed annotation."""
    annotations: dict[str, str] = {}
    if bound_to and (bind_completed is None or bind_completed):
        annotations["pv.kubernetes.io/bind-completed"] = "yes"
    if selected_node:
        annotations["volume.kubernetes.io/selected-node"] = selected_node
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": f"uid-{name}",
        "annotations": annotations,
    }
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if owner_uid:
        meta["ownerReferences"] = [
            {"kind": "Pod", "name": "p", "uid": owner_uid, "controller": True}
        ]
    spec: dict[str, Any] = {"accessModes": list(access_modes)}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if bound_to:
        spec["volumeName"] = bound_to
    if storage is not None:
        spec["resources"] = {"requests": {"storage": storage}}
    if selector is not None:
        spec["selector"] = selector
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    status = {"phase": phase or ("Bound" if bound_to else "Pending")}
    obj = {"kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec, "status": status}
    return PersistentVolumeClaim.from_manifest(obj)


def volume(
    name: str,
    storage_class: str = "",
    *,
    labels: dict[str, str] | None = None,
    capacity: str = "1Gi",
    access_modes: Iterable[str] = ("ReadWriteOnce",),
    phase: str = "Available",
    affinity: dict[str, list[str]] | None = None,
    terms: list[dict[str, Any]] | None = None,
    claim_ref: tuple[str, str] | None = None,
    source: dict[str, Any] | None = None,
    volume_mode: str | None = None,
    deleting: bool = False,
) -> PersistentVolume:
    """`makePV`; `affinity` is `withNodeAffinity` (one term, key In values per key)."""
    spec: dict[str, Any] = {
        "storageClassName": storage_class,
        "capacity": {"storage": capacity},
        "accessModes": list(access_modes),
        **(source or {"csi": {"driver": "csi.example.com", "volumeHandle": name}}),
    }
    if affinity is not None:
        expressions = [{"key": k, "operator": "In", "values": v} for k, v in affinity.items()]
        terms = [{"matchExpressions": expressions}]
    if terms is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": terms}}
    if claim_ref is not None:
        spec["claimRef"] = {"namespace": claim_ref[0], "name": claim_ref[1]}
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    meta: dict[str, Any] = {"name": name, "labels": labels or {}}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    obj = {"kind": "PersistentVolume", "metadata": meta, "spec": spec, "status": {"phase": phase}}
    return PersistentVolume.from_manifest(obj)


def storage_class(
    name: str,
    mode: str = "WaitForFirstConsumer",
    provisioner: str = "",
    topologies: list[dict[str, list[str]]] | None = None,
) -> StorageClass:
    obj: dict[str, Any] = {
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
    }
    if topologies is not None:
        obj["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": k, "values": v} for k, v in term.items()]}
            for term in topologies
        ]
    return StorageClass.from_manifest(obj)


def csi_node(name: str, **limits: int | None) -> CSINode:
    """A CSINode whose drivers (keyword: driver name with dots as `_`) have these counts."""
    drivers = []
    for driver, count in limits.items():
        entry: dict[str, Any] = {"name": driver.replace("_", "."), "nodeID": name}
        if count is not None:
            entry["allocatable"] = {"count": count}
        drivers.append(entry)
    obj = {"kind": "CSINode", "metadata": {"name": name}, "spec": {"drivers": drivers}}
    return CSINode.from_manifest(obj)


def csi_driver(name: str, storage_capacity: bool | None = True) -> CSIDriver:
    spec = {} if storage_capacity is None else {"storageCapacity": storage_capacity}
    return CSIDriver.from_manifest({"kind": "CSIDriver", "metadata": {"name": name}, "spec": spec})


def storage_capacity(
    name: str,
    storage_class: str,
    topology: dict[str, str] | None,
    capacity: str | None = None,
    maximum: str | None = None,
) -> CSIStorageCapacity:
    """A CSIStorageCapacity; `topology` is nodeTopology's matchLabels (None: nil)."""
    obj: dict[str, Any] = {
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name, "namespace": "kube-system"},
        "storageClassName": storage_class,
    }
    if topology is not None:
        obj["nodeTopology"] = {"matchLabels": topology}
    if capacity is not None:
        obj["capacity"] = capacity
    if maximum is not None:
        obj["maximumVolumeSize"] = maximum
    return CSIStorageCapacity.from_manifest(obj)


def pvc_volume(claim_name: str, name: str = "") -> dict[str, Any]:
    return {"name": name or f"vol-{claim_name}", "persistentVolumeClaim": {"claimName": claim_name}}


def pod_with(name: str, *volumes: dict[str, Any], uid: str = "") -> Pod:
    """A pod with these `spec.volumes`."""
    pod = make_pod(name, volumes=list(volumes))
    return replace(pod, uid=uid) if uid else pod


def node(name: str, **labels: str) -> Node:
    """`makeNode`: a node labelled with its hostname, plus `labels`."""
    return make_node(name, labels={HOSTNAME: name, **labels})


def table_of(
    nodes: Iterable[Node],
    objects: Iterable[ClusterObject] = (),
    placed: Iterable[tuple[Pod, str]] = (),
) -> NodeTable:
    table = NodeTable(nodes)
    for obj in objects:
        table.objects.upsert(obj)
    for pod, node_name in placed:
        table.add_pod(pod.with_node(node_name), node_name)
    return table
