"""The nodes, namespaces and pods of one scheduler_perf workload run, built from its templates.

Every object is a manifest first (a template under benchmarks/workloads/
with a name, a namespace, labels filled in) and goes through
`Node.from_manifest`, `Pod.from_manifest` or `object_from_manifest`, so the
scheduler reads each field the templates set as it reads a real cluster's.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from eventsched.model import Node, Pod
from eventsched.model.objects import ClusterObject, object_from_manifest

if TYPE_CHECKING:
    from benchmarks.workloads import CreatePods, NodeLabels, Size, Workload

TEMPLATES = Path(__file__).with_name("workloads")
HOSTNAME = "kubernetes.io/hostname"


@dataclass(slots=True)
class WorkloadCluster:
    nodes: list[Node]
    namespaces: list[ClusterObject]
    #: One list per init `createPods` op, scheduled in this order before the measured pods.
    init_batches: list[list[Pod]]
    measured: list[Pod]


@cache
def _template(name: str) -> dict[str, Any]:
    loaded = yaml.safe_load((TEMPLATES / name).read_text())
    if not isinstance(loaded, dict):
        raise ValueError(f"benchmarks/workloads/{name}: not a manifest")
    return loaded


def template(name: str) -> dict[str, Any]:
    """A fresh copy of one template under benchmarks/workloads/."""
    return copy.deepcopy(_template(name))


def node_manifest(template_name: str, index: int, labels: NodeLabels | None) -> dict[str, Any]:
    """Node `index`: named from generateName, with the hostname and, in turn, the zone label."""
    manifest = template(template_name)
    meta = manifest["metadata"]
    name = f"{meta.pop('generateName')}{index:05d}"
    meta["name"] = name
    meta["labels"] = {**(meta.get("labels") or {}), HOSTNAME: name}
    if labels is not None:
        meta["labels"][labels.key] = labels.values[index % len(labels.values)]
    return manifest


def pod_manifest(op: CreatePods, index: int, scheduler_name: str) -> dict[str, Any]:
    """Pod `index` of a run (unique across its ops) of one `createPods` op."""
    manifest = template(op.template)
    meta = manifest["metadata"]
    meta["name"] = f"{meta.pop('generateName')}{index:05d}"
    meta["namespace"] = op.namespace
    # Upstream's pods go to kube-scheduler's default profile; here, to the default profile's.
    manifest["spec"]["schedulerName"] = scheduler_name
    return manifest


def build(workload: Workload, size: Size, scheduler_name: str) -> WorkloadCluster:
    nodes = [
        Node.from_manifest(node_manifest(workload.node_template, i, workload.node_labels))
        for i in range(size.nodes)
    ]
    namespaces = [
        object_from_manifest({"kind": "Namespace", "metadata": {"name": name}})
        for name in workload.namespaces()
    ]
    counter = iter(range(size.init_pods * len(workload.init_ops) + size.measured_pods))

    def pods(op: CreatePods, count: int) -> list[Pod]:
        return [
            Pod.from_manifest(pod_manifest(op, next(counter), scheduler_name)) for _ in range(count)
        ]

    init = [pods(op, size.init_pods) for op in workload.init_ops]
    return WorkloadCluster(nodes, namespaces, init, pods(workload.measured, size.measured_pods))
