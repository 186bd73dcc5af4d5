"""The nodes, namespaces and pods of one scheduler_perf workload run, built from its templates.

Every object is a manifest first (a template under eventsched/benchmarks/workloads/
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
    from eventsched.benchmarks.workloads import CreatePods, NodeLabels, Size, Workload

TEMPLATES = Path(__file__).with_name("workloads")
HOSTNAME = "kubernetes.io/hostname"


@dataclass(slots=True)
class WorkloadCluster:
    nodes: list[Node]
    namespaces: list[ClusterObject]
    #: One list per init `createPods` op, scheduled in this order before the measured pods.
    init_batches: list[list[Pod]]
    measured: list[Pod]
    scheduler_name: str
    #: The namespace of the workload's churn op, if it has one.
    churn_namespace: str | None = None

    @property
    def pod_count(self) -> int:
        """Init and measured pods: the index a churn op's first pod takes."""
        return sum(len(batch) for batch in self.init_batches) + len(self.measured)

    def churn_pod(self, template_name: str, index: int) -> Pod:
        """Pod `index` of the churn op, from `template_name` (a pod template)."""
        if self.churn_namespace is None:
            raise ValueError("this workload has no churn op")
        if _template(template_name).get("kind") != "Pod":
            raise ValueError(
                f"eventsched/benchmarks/workloads/{template_name}: churn supports pods only"
            )
        manifest = pod_manifest(template_name, self.churn_namespace, index, self.scheduler_name)
        return Pod.from_manifest(manifest)


@cache
def _template(name: str) -> dict[str, Any]:
    loaded = yaml.safe_load((TEMPLATES / name).read_text())
    if not isinstance(loaded, dict):
        raise ValueError(f"eventsched/benchmarks/workloads/{name}: not a manifest")
    return loaded


def template(name: str) -> dict[str, Any]:
    """A fresh copy of one template under eventsched/benchmarks/workloads/."""
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


def pod_manifest(
    template_name: str, namespace: str, index: int, scheduler_name: str
) -> dict[str, Any]:
    """Pod `index` of a run (unique across its ops) of one `createPods` (or `churn`) op."""
    manifest = template(template_name)
    meta = manifest["metadata"]
    meta["name"] = f"{meta.pop('generateName')}{index:05d}"
    meta["namespace"] = namespace
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
            Pod.from_manifest(
                pod_manifest(op.template, op.namespace, next(counter), scheduler_name)
            )
            for _ in range(count)
        ]

    init = [pods(op, size.init_pods) for op in workload.init_ops]
    measured = pods(workload.measured, size.measured_pods)
    churn = None if workload.churn is None else workload.churn.namespace
    return WorkloadCluster(nodes, namespaces, init, measured, scheduler_name, churn)
