"""A synthetic but realistic cluster, the same one for the same arguments.

Benchmarks and `eventsched simulate --nodes N --pods M` need clusters far
larger than anyone writes by hand, and comparing two runs (or two
configurations replayed over one log) is only meaningful when the cluster
is identical. So everything here comes from one seeded random generator:
names, sizes, taints, uids and timestamps alike.

The mix follows a typical cloud cluster: a few instance types across three
zones, ~5% GPU nodes kept for GPU work by a taint, ~2% cordoned nodes, and
pods from Deployments of various sizes, some high-priority, a few
tolerating the GPU taint and a few asking for a GPU.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar
from uuid import UUID

from eventsched.cluster.controllers import UidFactory, expand_workload
from eventsched.cluster.naming import rfc3339
from eventsched.cluster.priorities import PriorityClasses
from eventsched.cluster.types import LoadedCluster
from eventsched.model import Node, Pod
from eventsched.model.accounting import LEGACY_ACCOUNTING, Accounting
from eventsched.model.objects import REPLICA_SET, Workload
from eventsched.model.selectors import LabelSelector

GPU_RESOURCE = "nvidia.com/gpu"
GPU_TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
CORDON_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
HIGH_PRIORITY_CLASS = "high-priority"
HIGH_PRIORITY = 1000
REGION = "us-east-1"
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
NAMESPACES = ("default", "shop", "payments", "analytics", "platform")
APP_NAMES = (
    "web", "api", "worker", "cache", "checkout", "cart", "search", "auth",
    "billing", "ingest", "report", "notify", "catalog", "media", "gateway",
)  # fmt: skip
MAX_PODS = 110

_T = TypeVar("_T")
_POD_FIELDS = [f.name for f in fields(Pod)]
_UID, _NAME, _CREATED = (_POD_FIELDS.index(name) for name in ("uid", "name", "created"))

#: Generated objects are "created" from here on, one second apart.
_EPOCH = datetime(2025, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class _Shape:
    instance_type: str
    cpus: int
    memory_gi: int
    gpus: int = 0


_GENERAL = (
    (_Shape("m5.xlarge", 4, 16), 3),
    (_Shape("m5.2xlarge", 8, 32), 4),
    (_Shape("r5.2xlarge", 8, 64), 2),
    (_Shape("m5.4xlarge", 16, 64), 3),
    (_Shape("m5.8xlarge", 32, 128), 1),
)
_GPU = (
    (_Shape("g4dn.2xlarge", 8, 32, 1), 2),
    (_Shape("g4dn.4xlarge", 16, 64, 1), 2),
    (_Shape("g4dn.12xlarge", 48, 192, 4), 1),
)
_CPU_MILLI = ((100, 3), (250, 4), (500, 4), (1000, 2), (2000, 1))
_MEMORY_MI = ((128, 3), (256, 4), (512, 4), (1024, 3), (2048, 2), (4096, 1))
_REPLICAS = ((1, 3), (2, 4), (3, 4), (5, 3), (10, 2), (20, 1))


def generate_cluster(
    nodes: int,
    pods: int,
    seed: int = 0,
    scheduler_name: str = "eventsched",
    accounting: Accounting = LEGACY_ACCOUNTING,
) -> LoadedCluster:
    """`nodes` nodes and `pods` pending pods; equal arguments give an equal cluster; the
    pods' resources counted by `accounting` (the profiles' `Features.accounting`).

    With the ReplicaSets that own the pods as objects (`generate_manifests`
    writes only the pods: a ReplicaSet in a manifest stands for pods of its own).
    """
    manifests = generate_manifests(nodes, pods, seed, scheduler_name)
    loaded = LoadedCluster()
    # Replicas differ only in name, uid and timestamp: parse each template once and
    # build the others positionally (a third of the cost of dataclasses.replace).
    parsed: dict[tuple[int, str], list[Any]] = {}
    for obj in manifests:
        if obj["kind"] == "Node":
            loaded.nodes.append(Node.from_manifest(obj))
        elif obj["kind"] == "Pod":
            meta = obj["metadata"]
            key = (id(obj["spec"]), meta["ownerReferences"][0]["name"])
            values = parsed.get(key)
            if values is None:
                first = Pod.from_manifest(obj, accounting=accounting)
                values = parsed[key] = [getattr(first, name) for name in _POD_FIELDS]
            values[_UID], values[_NAME] = meta["uid"], meta["name"]
            values[_CREATED] = meta["creationTimestamp"]
            loaded.pods.append(Pod(*values))
    loaded.objects.extend(_replica_sets(loaded.pods))
    return loaded


def _replica_sets(pods: list[Pod]) -> list[Workload]:
    """The ReplicaSets the generated Deployments' pods belong to, with the selector the
    deployment controller gives them (`app` and `pod-template-hash`): in a real cluster
    they exist, and PodTopologySpread's default constraints select by them."""
    found: dict[tuple[str, str], Workload] = {}
    for pod in pods:
        if pod.owner is None or (pod.namespace, pod.owner.name) in found:
            continue
        labels = {k: pod.labels[k] for k in ("app", "pod-template-hash") if k in pod.labels}
        selector = LabelSelector.parse({"matchLabels": labels}, pod.owner.name, "selector")
        found[(pod.namespace, pod.owner.name)] = Workload(
            REPLICA_SET, pod.namespace, pod.owner.name, selector
        )
    return list(found.values())


def generate_manifests(
    nodes: int, pods: int, seed: int = 0, scheduler_name: str = "eventsched"
) -> list[dict[str, Any]]:
    """The cluster of `generate_cluster` as manifests (a PriorityClass, Nodes, Pods).

    Written out as YAML and read back with `load_manifests`, they give the
    same nodes and pods, so a generated cluster can be saved and edited.
    """
    if nodes < 0 or pods < 0:
        raise ValueError(f"nodes and pods must be >= 0 (got nodes={nodes}, pods={pods})")
    rng = random.Random(seed)
    # A stream of its own, so that adding a uid somewhere does not change the cluster.
    uid_rng = random.Random(f"uids/{seed}")

    def new_uid(_description: str) -> str:
        return str(UUID(int=uid_rng.getrandbits(128), version=4))

    manifests: list[dict[str, Any]] = [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": HIGH_PRIORITY_CLASS},
            "value": HIGH_PRIORITY,
            "description": "User-facing services that may preempt batch work.",
        }
    ]
    gpu_count = max(1, round(nodes * 0.05)) if nodes >= 4 else 0
    gpu_nodes = set(rng.sample(range(nodes), gpu_count))
    others = [i for i in range(nodes) if i not in gpu_nodes]
    cordon_count = max(1, round(nodes * 0.02)) if nodes >= 10 else 0
    cordoned = set(rng.sample(others, cordon_count))
    for index in range(nodes):
        manifests.append(_node(index, rng, index in gpu_nodes, index in cordoned, new_uid))
    manifests.extend(_pods(pods, rng, scheduler_name, bool(gpu_nodes), new_uid))
    return manifests


# -- nodes -----------------------------------------------------------------------------


def _node(
    index: int, rng: random.Random, gpu: bool, cordoned: bool, new_uid: UidFactory
) -> dict[str, Any]:
    shape = _pick(rng, _GPU if gpu else _GENERAL)
    name = f"node-{index:05d}"
    zone = ZONES[index % len(ZONES)]
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "topology.kubernetes.io/region": REGION,
        "topology.kubernetes.io/zone": zone,
        "node.kubernetes.io/instance-type": shape.instance_type,
        "eks.amazonaws.com/nodegroup": "gpu" if gpu else "general",
    }
    capacity: dict[str, Any] = {
        "cpu": str(shape.cpus),
        "memory": f"{shape.memory_gi}Gi",
        "pods": str(MAX_PODS),
        "ephemeral-storage": "100Gi",
    }
    allocatable: dict[str, Any] = {
        "cpu": f"{shape.cpus * 1000 - _reserved_milli_cpu(shape.cpus)}m",
        # EKS reserves 255Mi + 11Mi per pod for the kubelet, plus 100Mi eviction threshold.
        "memory": f"{shape.memory_gi * 1024 - 255 - 11 * MAX_PODS - 100}Mi",
        "pods": str(MAX_PODS),
        "ephemeral-storage": "90Gi",
    }
    if shape.gpus:
        labels["nvidia.com/gpu.present"] = "true"
        capacity[GPU_RESOURCE] = allocatable[GPU_RESOURCE] = str(shape.gpus)
    spec: dict[str, Any] = {"providerID": f"aws:///{zone}/i-{index:017x}"}
    taints = [dict(GPU_TAINT)] if gpu else []
    if cordoned:
        spec["unschedulable"] = True
        taints.append(dict(CORDON_TAINT))
    if taints:
        spec["taints"] = taints
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": new_uid(f"Node/{name}"),
            "labels": labels,
            "creationTimestamp": rfc3339(_EPOCH),
        },
        "spec": spec,
        "status": {"capacity": capacity, "allocatable": allocatable},
    }


def _reserved_milli_cpu(cpus: int) -> int:
    """GKE/EKS kube-reserved CPU: 6% of the first core, 1% of the second, 0.5% up to 4, 0.25% above."""
    reserved = 60.0 + (10 if cpus >= 2 else 0) + 5 * max(0, min(cpus, 4) - 2)
    reserved += 2.5 * max(0, cpus - 4)
    return int(reserved)


# -- pods ------------------------------------------------------------------------------


def _pods(
    count: int, rng: random.Random, scheduler_name: str, with_gpu: bool, new_uid: UidFactory
) -> list[dict[str, Any]]:
    """`count` pods from Deployments, the last one cut to size."""
    priorities = PriorityClasses(values={HIGH_PRIORITY_CLASS: HIGH_PRIORITY})
    pods: list[dict[str, Any]] = []
    app = 0
    while len(pods) < count:
        replicas = min(_pick(rng, _REPLICAS), count - len(pods))
        deployment = _deployment(app, replicas, rng, scheduler_name, with_gpu)
        for manifest in expand_workload(deployment, new_uid, priorities).pods:
            meta = manifest["metadata"]
            meta["uid"] = new_uid(f"Pod/{meta['namespace']}/{meta['name']}")
            meta["creationTimestamp"] = rfc3339(_EPOCH + timedelta(seconds=len(pods)))
            pods.append(manifest)
        app += 1
    return pods


def _deployment(
    app: int, replicas: int, rng: random.Random, scheduler_name: str, with_gpu: bool
) -> dict[str, Any]:
    name = f"{APP_NAMES[app % len(APP_NAMES)]}-{app}"
    roll = rng.random()
    gpu = with_gpu and roll < 0.01
    tolerates_gpu_nodes = gpu or 0.01 <= roll < 0.04
    requests: dict[str, Any] = {
        "cpu": f"{_pick(rng, _CPU_MILLI)}m",
        "memory": f"{_pick(rng, _MEMORY_MI)}Mi",
    }
    resources: dict[str, Any] = {"requests": requests}
    if gpu:
        requests[GPU_RESOURCE] = "1"
        resources["limits"] = {GPU_RESOURCE: "1"}
    spec: dict[str, Any] = {
        "schedulerName": scheduler_name,
        "containers": [
            {
                "name": "app",
                "image": f"registry.example.com/{name.rsplit('-', 1)[0]}:1.{app % 10}",
                "resources": resources,
            }
        ],
    }
    if rng.random() < 0.15:
        spec["priorityClassName"] = HIGH_PRIORITY_CLASS
    if tolerates_gpu_nodes:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "gpu",
                                "effect": "NoSchedule"}]  # fmt: skip
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": rng.choice(NAMESPACES)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": spec},
        },
    }


def _pick(rng: random.Random, weighted: tuple[tuple[_T, int], ...]) -> _T:
    values = [value for value, _ in weighted]
    weights = [weight for _, weight in weighted]
    return rng.choices(values, weights)[0]
