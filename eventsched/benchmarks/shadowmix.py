"""A generated mix for the shadow: nodes of several sizes, zones and taints, and pods with
requests, node affinity, pod affinity and anti-affinity, topology spread, tolerations and
priorities, some that fit nowhere and some that preempt.

Seeded: the same arguments give the same manifests. What `bench --kube --shadow` creates
and what the shadow tests hand the real kube-scheduler.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

ZONES = ("zone-a", "zone-b", "zone-c")
#: (cpu, memory) of the node sizes, in the proportions drawn.
SIZES = (("2", "4Gi"), ("4", "8Gi"), ("4", "8Gi"), ("8", "16Gi"), ("16", "32Gi"))
#: The taint some nodes carry, and the label the pods that tolerate it select.
DEDICATED = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
#: The PriorityClasses the mix uses: name -> value.
PRIORITY_CLASSES = {"shadow-high": 1000, "shadow-low": -10}
IMAGE = "registry.k8s.io/pause:3.10"
ZONE_KEY = "topology.kubernetes.io/zone"
HOST_KEY = "kubernetes.io/hostname"


@dataclass(frozen=True, slots=True)
class Mix:
    """The manifests: PriorityClasses, nodes, then pods (in creation order)."""

    priority_classes: list[dict[str, Any]]
    nodes: list[dict[str, Any]]
    pods: list[dict[str, Any]]


def generate(nodes: int, pods: int, namespace: str, seed: int = 0) -> Mix:
    rng = random.Random(f"shadowmix/{seed}/{nodes}/{pods}")
    return Mix(
        [_priority_class(name, value) for name, value in PRIORITY_CLASSES.items()],
        [_node(rng, i) for i in range(nodes)],
        [_pod(rng, i, namespace) for i in range(pods)],
    )


def _priority_class(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def _node(rng: random.Random, i: int) -> dict[str, Any]:
    name = f"node-{i:05d}"
    cpu, memory = rng.choice(SIZES)
    resources = {"cpu": cpu, "memory": memory, "pods": "110"}
    labels = {
        HOST_KEY: name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        ZONE_KEY: ZONES[i % len(ZONES)],
        "disk": "ssd" if rng.random() < 0.4 else "hdd",
    }
    node: dict[str, Any] = {
        "metadata": {"name": name, "labels": labels},
        "status": {"capacity": resources, "allocatable": resources},
    }
    if rng.random() < 0.1:
        node["spec"] = {"taints": [dict(DEDICATED)]}
    return node


def _pod(rng: random.Random, i: int, namespace: str) -> dict[str, Any]:
    name = f"pod-{i:05d}"
    cpu = rng.choice(("50m", "100m", "100m", "200m", "250m", "500m"))
    memory = rng.choice(("64Mi", "128Mi", "256Mi", "512Mi"))
    app = f"app-{rng.randrange(20)}"
    spec: dict[str, Any] = {}
    draw = rng.random()
    if draw < 0.10:
        spec["nodeSelector"] = {"disk": "ssd"}
    elif draw < 0.16:
        spec["affinity"] = {"nodeAffinity": _preferred_zone(rng)}
    elif draw < 0.22:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "batch"}]
    elif draw < 0.28:
        spec["affinity"] = {"podAntiAffinity": _anti_affinity(app)}
    elif draw < 0.34:
        spec["affinity"] = {"podAffinity": _preferred_affinity(app)}
    elif draw < 0.44:
        spec["topologySpreadConstraints"] = [_spread(app, rng)]
    elif draw < 0.47:
        cpu = "64"  # fits no node
    elif draw < 0.49:
        spec["nodeSelector"] = {"disk": "nvme"}  # no node has it
    priority = rng.random()
    if draw >= 0.49 and rng.random() < 0.03:
        cpu, memory = "3", "2Gi"  # large: preempts once the nodes fill
        spec["priorityClassName"] = "shadow-high"
    elif priority < 0.05:
        spec["priorityClassName"] = "shadow-high"
    elif priority < 0.15:
        spec["priorityClassName"] = "shadow-low"
    spec["containers"] = [
        {"name": "c", "image": IMAGE, "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": app}},
        "spec": spec,
    }


def _selector(app: str) -> dict[str, Any]:
    return {"matchLabels": {"app": app}}


def _preferred_zone(rng: random.Random) -> dict[str, Any]:
    zone = rng.choice(ZONES)
    term = {"matchExpressions": [{"key": ZONE_KEY, "operator": "In", "values": [zone]}]}
    return {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "preference": term}]}


def _anti_affinity(app: str) -> dict[str, Any]:
    term = {"labelSelector": _selector(app), "topologyKey": HOST_KEY}
    return {"requiredDuringSchedulingIgnoredDuringExecution": [term]}


def _preferred_affinity(app: str) -> dict[str, Any]:
    term = {"labelSelector": _selector(app), "topologyKey": ZONE_KEY}
    return {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 30, "podAffinityTerm": term}]
    }


def _spread(app: str, rng: random.Random) -> dict[str, Any]:
    return {
        "maxSkew": 1,
        "topologyKey": ZONE_KEY,
        "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
        "labelSelector": _selector(app),
    }
