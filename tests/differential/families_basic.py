"""Scenario families of the node-local plugins: resources, taints, node affinity, node name,
unschedulable nodes, balanced allocation, image locality and priorities.

Each family is a function (rng, index) -> scenario (without `id`): the generator seeds
the rng per family and index, so a scenario is the same on every run.
"""

from __future__ import annotations

import random
from typing import Any

from tests.differential.builders import (
    container,
    node,
    pod,
    priority_class,
    runtime_class,
    taint,
)

Scenario = dict[str, Any]

ZONES = ("zone-a", "zone-b", "zone-c")
CPUS = ("100m", "250m", "500m", "1", "2")
MEMS = ("128Mi", "256Mi", "512Mi", "1Gi", "2Gi")
NODE_CPUS = ("2", "4", "8")
NODE_MEMS = ("4Gi", "8Gi", "16Gi")
GPU = "example.com/gpu"


def basic_nodes(rng: random.Random, n: int, **kw: Any) -> list[dict[str, Any]]:
    return [
        node(
            f"node-{i}",
            cpu=rng.choice(NODE_CPUS),
            memory=rng.choice(NODE_MEMS),
            zone=ZONES[i % len(ZONES)],
            region="region-1",
            **kw,
        )
        for i in range(n)
    ]


def filler_pods(
    rng: random.Random, nodes: list[dict[str, Any]], count: int, prefix: str = "run"
) -> list[dict[str, Any]]:
    """Assigned pods with random requests (some with none), spread over the nodes."""
    pods = []
    for i in range(count):
        target = rng.choice(nodes)["metadata"]["name"]
        if rng.random() < 0.15:
            pods.append(pod(f"{prefix}-{i}", node_name=target))
        else:
            pods.append(
                pod(
                    f"{prefix}-{i}", node_name=target, cpu=rng.choice(CPUS), memory=rng.choice(MEMS)
                )
            )
    return pods


def scenario(
    description: str,
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    pending: dict[str, Any],
    objects: list[dict[str, Any]] | None = None,
    namespaces: list[dict[str, Any]] | None = None,
) -> Scenario:
    return {
        "description": description,
        "namespaces": namespaces or [],
        "objects": objects or [],
        "nodes": nodes,
        "pods": pods,
        "pending": pending,
    }


# -- resources ------------------------------------------------------------------------------


def resources(rng: random.Random, index: int) -> Scenario:
    kind = index % 8
    n = rng.randint(2, 6)
    nodes = basic_nodes(rng, n)
    pods = filler_pods(rng, nodes, rng.randint(0, 8))
    objects: list[dict[str, Any]] = []
    cpu, mem = rng.choice(CPUS), rng.choice(MEMS)
    if kind == 0:
        desc = "cpu and memory requests"
        pending = pod("pending", cpu=cpu, memory=mem)
    elif kind == 1:
        desc = "requests larger than most nodes have left"
        pending = pod("pending", cpu=rng.choice(("3", "4", "6", "7")), memory=rng.choice(MEMS))
    elif kind == 2:
        desc = "memory only, large"
        pending = pod("pending", memory=rng.choice(("6Gi", "10Gi", "14Gi", "20Gi")))
    elif kind == 3:
        desc = "pods count: small nodes full of pods"
        for nd in nodes:
            nd["status"]["allocatable"]["pods"] = nd["status"]["capacity"]["pods"] = str(
                rng.randint(1, 3)
            )
        pods = []
        for i, nd in enumerate(nodes):
            for j in range(rng.randint(0, 3)):
                pods.append(pod(f"run-{i}-{j}", node_name=nd["metadata"]["name"], cpu="100m"))
        pending = pod("pending", cpu="100m")
    elif kind == 4:
        desc = "extended resource"
        for nd in nodes:
            if rng.random() < 0.6:
                count = str(rng.randint(1, 4))
                nd["status"]["allocatable"][GPU] = nd["status"]["capacity"][GPU] = count
        for p in pods[:3]:
            if p["spec"]["nodeName"] and rng.random() < 0.5:
                p["spec"]["containers"] = [container(cpu="100m", extra={GPU: "1"})]
        pending = pod("pending", cpu=cpu, extra={GPU: str(rng.randint(1, 3))})
    elif kind == 5:
        desc = "init containers larger than the app containers"
        pending = pod(
            "pending",
            containers=[container("app", cpu="250m", memory="256Mi")],
            initContainers=[
                container("init-0", cpu=rng.choice(("1", "2", "3")), memory="128Mi"),
                container("init-1", cpu="100m", memory=rng.choice(("1Gi", "3Gi", "6Gi"))),
            ],
        )
    elif kind == 6:
        desc = "pod overhead from a RuntimeClass"
        overhead = {"cpu": rng.choice(("250m", "500m", "1")), "memory": "256Mi"}
        objects.append(runtime_class("sandboxed", overhead))
        pending = pod(
            "pending",
            cpu=rng.choice(("500m", "1", "2")),
            memory="512Mi",
            runtimeClassName="sandboxed",
            overhead=overhead,
        )
    else:
        desc = "ephemeral storage and no cpu/memory requests"
        for nd in nodes:
            amount = rng.choice(("10Gi", "20Gi", "50Gi"))
            nd["status"]["allocatable"]["ephemeral-storage"] = amount
            nd["status"]["capacity"]["ephemeral-storage"] = amount
        pending = pod("pending", extra={"ephemeral-storage": rng.choice(("5Gi", "15Gi", "30Gi"))})
    return scenario(desc, nodes, pods, pending, objects)


# -- taints and tolerations --------------------------------------------------------------

TAINTS = (
    taint("dedicated", "NoSchedule", "gpu"),
    taint("dedicated", "NoSchedule", "infra"),
    taint("maintenance", "NoExecute"),
    taint("spot", "PreferNoSchedule", "true"),
    taint("flaky", "PreferNoSchedule"),
    taint("team", "NoSchedule", "a"),
)
TOLERATIONS = (
    {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
    {"key": "dedicated", "operator": "Exists"},
    {"key": "maintenance", "operator": "Exists", "effect": "NoExecute"},
    {"key": "spot", "operator": "Equal", "value": "true", "effect": "PreferNoSchedule"},
    {"key": "flaky", "operator": "Exists", "effect": "PreferNoSchedule"},
    {"key": "team", "operator": "Equal", "value": "b", "effect": "NoSchedule"},
    {"operator": "Exists", "effect": "PreferNoSchedule"},
    {"key": "dedicated", "operator": "Equal", "value": "infra"},
)


def taints(rng: random.Random, index: int) -> Scenario:
    n = rng.randint(2, 7)
    nodes = basic_nodes(rng, n)
    for nd in nodes:
        chosen = rng.sample(TAINTS, rng.choice((0, 0, 1, 1, 2, 3)))
        keyed = {(t["key"], t["effect"]): t for t in chosen}  # one taint per key and effect
        if keyed:
            nd["spec"] = {"taints": list(keyed.values())}
    if index % 6 == 0:  # every node tainted
        for nd in nodes:
            nd.setdefault("spec", {}).setdefault(
                "taints", [taint("dedicated", "NoSchedule", "gpu")]
            )
    tolerations = rng.sample(TOLERATIONS, rng.choice((0, 1, 2, 3)))
    if index % 9 == 4:
        tolerations = [{"operator": "Exists"}]
    pending = pod("pending", cpu=rng.choice(CPUS), tolerations=tolerations)
    pods = filler_pods(rng, nodes, rng.randint(0, 4))
    return scenario("taints and tolerations", nodes, pods, pending)


# -- node affinity ---------------------------------------------------------------------------


def _affinity_nodes(rng: random.Random) -> list[dict[str, Any]]:
    n = rng.randint(2, 8)
    nodes = basic_nodes(rng, n)
    for nd in nodes:
        labels = nd["metadata"]["labels"]
        if rng.random() < 0.7:
            labels["disktype"] = rng.choice(("ssd", "hdd"))
        if rng.random() < 0.7:
            labels["tier"] = str(rng.randint(1, 4))
        if rng.random() < 0.3:
            labels["gpu"] = "true"
    return nodes


def _requirement(rng: random.Random) -> dict[str, Any]:
    op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "In"))
    if op in ("Gt", "Lt"):
        return {"key": "tier", "operator": op, "values": [str(rng.randint(1, 3))]}
    if op in ("Exists", "DoesNotExist"):
        return {"key": rng.choice(("gpu", "disktype", "tier")), "operator": op}
    key = rng.choice(("disktype", "topology.kubernetes.io/zone"))
    values = ["ssd", "hdd"] if key == "disktype" else list(ZONES)
    return {"key": key, "operator": op, "values": sorted(rng.sample(values, rng.randint(1, 2)))}


def node_affinity(rng: random.Random, index: int) -> Scenario:
    nodes = _affinity_nodes(rng)
    selector = {"disktype": rng.choice(("ssd", "hdd"))} if index % 4 == 0 else None
    affinity: dict[str, Any] = {}
    if index % 4 in (1, 3):
        terms = [
            {"matchExpressions": [_requirement(rng) for _ in range(rng.randint(1, 2))]}
            for _ in range(rng.randint(1, 2))
        ]
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if index % 4 in (2, 3) or rng.random() < 0.3:
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {
                "weight": rng.randint(1, 100),
                "preference": {"matchExpressions": [_requirement(rng)]},
            }
            for _ in range(rng.randint(1, 3))
        ]
    pending = pod(
        "pending",
        cpu=rng.choice(CPUS),
        nodeSelector=selector,
        affinity={"nodeAffinity": affinity} if affinity else None,
    )
    pods = filler_pods(rng, nodes, rng.randint(0, 5))
    return scenario("node selector and node affinity", nodes, pods, pending)


def node_name(rng: random.Random, index: int) -> Scenario:
    """A pod with `spec.nodeName` never reaches kube-scheduler (it is assigned already), so
    naming nodes goes through node affinity's `matchFields` on `metadata.name`, as
    DaemonSet pods do; NodeAffinity's PreFilter then narrows the nodes to those names."""
    nodes = basic_nodes(rng, rng.randint(2, 6))
    names = [nd["metadata"]["name"] for nd in nodes] + ["node-absent"]
    op = "In" if index % 3 else "NotIn"
    chosen = sorted(rng.sample(names, rng.randint(1, 2)))
    # The API allows one value per In/NotIn on metadata.name: several names are several
    # terms (ORed) for In, several requirements of one term (ANDed) for NotIn.
    fields = [{"key": "metadata.name", "operator": op, "values": [n]} for n in chosen]
    terms: list[dict[str, Any]] = (
        [{"matchFields": [f]} for f in fields] if op == "In" else [{"matchFields": fields}]
    )
    if index % 5 == 4:
        for term in terms:
            term["matchExpressions"] = [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}
            ]
    affinity: dict[str, Any] = {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
    }
    if index % 4 == 1:
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {
                "weight": 50,
                "preference": {
                    "matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": [rng.choice(names)]}
                    ]
                },
            }
        ]
    pods = filler_pods(rng, nodes, rng.randint(0, 5))
    cpu = rng.choice((*CPUS, "3"))
    pending = pod("pending", cpu=cpu, affinity={"nodeAffinity": affinity})
    return scenario("node names through matchFields metadata.name", nodes, pods, pending)


# -- unschedulable nodes ------------------------------------------------------------------


def unschedulable(rng: random.Random, index: int) -> Scenario:
    nodes = basic_nodes(rng, rng.randint(2, 6))
    for nd in nodes:
        if rng.random() < 0.5:
            nd["spec"] = {"unschedulable": True}
    if index % 5 == 0:
        for nd in nodes:
            nd["spec"] = {"unschedulable": True}
    tolerations = None
    if index % 3 == 1:
        tolerations = [
            {
                "key": "node.kubernetes.io/unschedulable",
                "operator": "Exists",
                "effect": "NoSchedule",
            }
        ]
    elif index % 3 == 2 and rng.random() < 0.5:
        tolerations = [{"operator": "Exists"}]
    pods = filler_pods(rng, nodes, rng.randint(0, 4))
    pending = pod("pending", cpu=rng.choice(CPUS), tolerations=tolerations)
    return scenario("unschedulable nodes", nodes, pods, pending)


# -- balanced allocation --------------------------------------------------------------------


def balanced(rng: random.Random, index: int) -> Scenario:
    n = rng.randint(2, 6)
    nodes = basic_nodes(rng, n)
    pods = []
    for i, nd in enumerate(nodes):
        for j in range(rng.randint(0, 3)):
            pods.append(
                pod(
                    f"run-{i}-{j}",
                    node_name=nd["metadata"]["name"],
                    cpu=rng.choice(("100m", "500m", "1", "1500m")),
                    memory=rng.choice(("128Mi", "1Gi", "2Gi", "3Gi")),
                )
            )
    if index % 3 == 0:
        pending = pod("pending", cpu=rng.choice(("1", "2")), memory="128Mi")
    elif index % 3 == 1:
        pending = pod("pending", cpu="100m", memory=rng.choice(("2Gi", "4Gi")))
    else:
        pending = pod("pending", cpu=rng.choice(CPUS), memory=rng.choice(MEMS))
    return scenario("balanced allocation: cpu/memory ratios", nodes, pods, pending)


# -- image locality -------------------------------------------------------------------------

IMAGES = (
    ("registry.example/app:1.0", 300 * 1024 * 1024),
    ("registry.example/db:5", 800 * 1024 * 1024),
    ("registry.example/tiny:1", 5 * 1024 * 1024),
    ("registry.example/big:2", 1500 * 1024 * 1024),
    ("nginx:latest", 140 * 1024 * 1024),
)


def images(rng: random.Random, index: int) -> Scenario:
    nodes = basic_nodes(rng, rng.randint(2, 6))
    for nd in nodes:
        held = rng.sample(IMAGES, rng.randint(0, 3))
        if held:
            nd["status"]["images"] = [{"names": [name], "sizeBytes": size} for name, size in held]
    names = [name for name, _ in IMAGES] + ["registry.example/absent:1"]
    wanted = rng.sample(names, rng.randint(1, 3))
    wanted = ["nginx" if w == "nginx:latest" and rng.random() < 0.5 else w for w in wanted]
    containers = [
        container(f"c{i}", cpu="100m", memory="128Mi", image=image)
        for i, image in enumerate(wanted)
    ]
    pods = filler_pods(rng, nodes, rng.randint(0, 3))
    pending = pod("pending", containers=containers)
    return scenario("image locality: node images and pod images", nodes, pods, pending)


# -- priorities ---------------------------------------------------------------------------


def priorities(rng: random.Random, index: int) -> Scenario:
    """Priorities change nothing without preemption: the same filters and scores."""
    nodes = basic_nodes(rng, rng.randint(2, 5))
    objects = [priority_class("high", 1000), priority_class("low", -5)]
    pods = filler_pods(rng, nodes, rng.randint(1, 6))
    for p in pods:
        if rng.random() < 0.5:
            cls = rng.choice((("high", 1000), ("low", -5)))
            p["spec"]["priorityClassName"], p["spec"]["priority"] = cls
    cls = rng.choice((("high", 1000), ("low", -5)))
    size = rng.choice((*CPUS, "3", "6"))
    pending = pod(
        "pending", cpu=size, memory=rng.choice(MEMS), priorityClassName=cls[0], priority=cls[1]
    )
    return scenario("priority classes, no preemption", nodes, pods, pending, objects)
