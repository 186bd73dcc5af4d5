"""NodeResourcesBalancedAllocation against kube-scheduler v1.28's balanced_allocation_test.go.

Nodes and pods are upstream's: `makeNode(name, milliCPU, memory, scalar)` and
the cpuOnly / cpuAndMemory / cpuAndMemoryAndGPU specs with their node names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from eventsched.framework import CycleState, PluginArgsError
from eventsched.model import Node, NodeTable, Pod
from eventsched.plugins.noderesources_balanced import (
    Fractions,
    balanced_score,
    is_scalar_resource_name,
)
from tests.plugins.conftest import plugin

NAME = "NodeResourcesBalancedAllocation"
CPU_MEMORY_GPU = [
    {"name": "cpu", "weight": 1},
    {"name": "memory", "weight": 1},
    {"name": "nvidia.com/gpu", "weight": 1},
]


def make_node(name: str, milli_cpu: int, memory: int, scalar: dict[str, int] | None = None) -> Node:
    allocatable: dict[str, Any] = {"cpu": f"{milli_cpu}m", "memory": str(memory), **(scalar or {})}
    return Node.from_manifest({"metadata": {"name": name}, "status": {"allocatable": allocatable}})


def spec_pod(name: str, *requests: dict[str, str]) -> Pod:
    """A pod with one container per request map (upstream's PodSpec literals)."""
    containers = [
        {"name": f"c{i}", "image": "img", "resources": {"requests": r}}
        for i, r in enumerate(requests)
    ]
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    return Pod.from_manifest({"metadata": meta, "spec": {"containers": containers}})


def cpu_only(name: str) -> Pod:
    return spec_pod(name, {"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"})


def cpu_and_memory(name: str) -> Pod:
    return spec_pod(name, {"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})


def cpu_and_memory_and_gpu(name: str) -> Pod:
    return spec_pod(
        name,
        {"cpu": "1000m", "memory": "2000"},
        {"cpu": "2000m", "memory": "3000", "nvidia.com/gpu": "3"},
    )


def empty_pod(name: str) -> Pod:
    """`st.MakePod().Obj()`: one container, no requests."""
    return spec_pod(name, {})


@dataclass
class Case:
    name: str
    pod: Pod
    nodes: list[Node]
    expected: list[int]
    #: (pod, node name) placed before scoring.
    pods: list[tuple[Pod, str]] = field(default_factory=list)
    args: dict[str, Any] = field(default_factory=dict)
    run_pre_score: bool = True


GPU8 = {"nvidia.com/gpu": 8}

# TestNodeResourcesBalancedAllocation (v1.28), every case with upstream's expected scores.
CASES = [
    Case(
        "nothing scheduled, nothing requested",
        empty_pod("p"),
        [make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)],
        [100, 100],
    ),
    Case(
        "nothing scheduled, resources requested, differently sized nodes",
        cpu_and_memory("p"),
        [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)],
        [87, 100],
    ),
    Case(
        "no resources requested, pods without container scheduled",
        empty_pod("p"),
        [make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)],
        [100, 100],
        pods=[
            (empty_pod("a"), "node1"),
            (empty_pod("b"), "node1"),
            (empty_pod("c"), "node2"),
            (empty_pod("d"), "node2"),
        ],
    ),
    Case(
        "no resources requested, pods with container scheduled",
        empty_pod("p"),
        [make_node("node1", 250, 1000 * 1024 * 1024), make_node("node2", 250, 1000 * 1024 * 1024)],
        [100, 100],
        pods=[(empty_pod("a"), "node1"), (empty_pod("b"), "node1")],
    ),
    Case(
        "no resources requested, pods scheduled with resources",
        empty_pod("p"),
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
        [70, 82],
        pods=[
            (cpu_only("a"), "node1"),
            (cpu_only("b"), "node1"),
            (cpu_only("c"), "node2"),
            (cpu_and_memory("d"), "node2"),
        ],
    ),
    Case(
        "resources requested, pods scheduled with resources",
        cpu_and_memory("p"),
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
        [82, 95],
        pods=[(cpu_only("a"), "node1"), (cpu_and_memory("b"), "node2")],
    ),
    Case(
        "resources requested, pods scheduled with resources, differently sized nodes",
        cpu_and_memory("p"),
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)],
        [82, 80],
        pods=[(cpu_only("a"), "node1"), (cpu_and_memory("b"), "node2")],
    ),
    Case(
        "requested resources at node capacity",
        cpu_only("p"),
        [make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)],
        [50, 75],
        pods=[(cpu_only("a"), "node1"), (cpu_and_memory("b"), "node2")],
    ),
    Case(
        "zero node resources, pods scheduled with resources",
        empty_pod("p"),
        [make_node("node1", 0, 0), make_node("node2", 0, 0)],
        [100, 100],
        pods=[(cpu_only("a"), "node1"), (cpu_and_memory("b"), "node2")],
    ),
    Case(
        "include scalar resource on a node for balanced resource allocation",
        spec_pod("p", {"memory": "0", "nvidia.com/gpu": "1"}),
        [make_node("node1", 3500, 40000, GPU8), make_node("node2", 3500, 40000, GPU8)],
        [70, 65],
        pods=[(cpu_and_memory("a"), "node2"), (cpu_and_memory_and_gpu("b"), "node1")],
        args={"resources": CPU_MEMORY_GPU},
    ),
    Case(
        "node without the scalar resource results to a higher score",
        empty_pod("p"),
        [make_node("node1", 3500, 40000, GPU8), make_node("node2", 3500, 40000)],
        [100, 100],
        pods=[(cpu_only("a"), "node1"), (cpu_only("b"), "node2")],
        args={"resources": [{"name": "cpu", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 1}]},
    ),
    Case(
        "resources requested, pods scheduled with resources if PreScore not called",
        cpu_and_memory("p"),
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
        [82, 95],
        pods=[(cpu_only("a"), "node1"), (cpu_and_memory("b"), "node2")],
        run_pre_score=False,
    ),
]


def score(case: Case) -> list[int]:
    table = NodeTable(case.nodes)
    for pod, node in case.pods:
        assert table.add_pod(pod, node)
    p = plugin(NAME, case.args, table)
    state = CycleState()
    rows = np.arange(len(table))
    if case.run_pre_score:
        assert p.pre_score(state, case.pod, table, rows) is None
    return [int(s) for s in p.score_batch(state, case.pod, table, rows)]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_upstream_table(case: Case) -> None:
    """TestNodeResourcesBalancedAllocation, case by case."""
    assert score(case) == case.expected


def test_plain_requests_not_non_zero_defaults() -> None:
    """useRequested: a pod without requests counts 0, not 100m / 200Mi (v1.28 scores
    "no resources requested, pods with container scheduled" 100, not 90)."""
    case = CASES[3]
    assert case.pod.requests.get("cpu", 0) == 0 and case.pod.non_zero[0] == 100
    assert score(case) == [100, 100]


def test_pods_resource_and_unknown_names_drop_out() -> None:
    """`pods` is not in NodeInfo's ScalarResources and a plain `foo` is not scalar:
    both give (0, 0) in calculateResourceAllocatableRequest and leave the score alone."""
    nodes = [make_node("node1", 4000, 10000)]
    pod = cpu_and_memory("p")
    base = score(Case("base", pod, nodes, [87]))
    extra = {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "pods"}, {"name": "foo"}]}
    assert score(Case("extra", pod, nodes, [87], args=extra)) == base == [87]


def test_more_than_two_resources_use_the_population_std() -> None:
    """Three fractions: sqrt(sum((f - mean)^2) / 3), truncated (upstream comment: 70 and 65)."""
    case = CASES[9]
    table = NodeTable(case.nodes)
    for pod, node in case.pods:
        table.add_pod(pod, node)
    fractions = [[3000 / 3500, 5000 / 40000, 4 / 8], [3000 / 3500, 5000 / 40000, 1 / 8]]
    expected = []
    for fs in fractions:
        mean = sum(fs) / 3
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fs) / 3)
        expected.append(int((1 - std) * 100))
    assert expected == [70, 65] == score(case)


def go_balanced_resource_scorer(requested: list[int], allocatable: list[int]) -> int:
    """A line-by-line port of upstream's `balancedResourceScorer`, for one node."""
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        fraction = float(req) / float(alloc)
        if fraction > 1:
            fraction = 1
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / float(len(fractions))
        s = 0.0
        for fraction in fractions:
            s = s + (fraction - mean) * (fraction - mean)
        std = math.sqrt(s / float(len(fractions)))
    return int((1 - std) * float(100))


def test_batch_equals_upstream_scorer_node_by_node(rng: np.random.Generator) -> None:
    """The array form equals the per-node Go arithmetic exactly, zeros and overcommit included."""
    for k in range(1, 6):
        allocatable = rng.integers(0, 50, size=(400, k)) * rng.integers(0, 2, size=(400, k))
        requested = rng.integers(0, 60, size=(400, k))
        here = [allocatable[:, j] != 0 for j in range(k)]
        values = [
            np.minimum(requested[:, j] / np.where(here[j], allocatable[:, j], 1), 1.0)
            for j in range(k)
        ]
        got = balanced_score(Fractions(values, here), 400).tolist()
        want = [
            go_balanced_resource_scorer(requested[i].tolist(), allocatable[i].tolist())
            for i in range(400)
        ]
        assert got == want


def test_two_resources_on_every_node_take_the_short_path_to_the_same_scores(
    rng: np.random.Generator,
) -> None:
    """cpu and memory on every node (Fractions.all_counted): the usual case's own path."""
    allocatable = rng.integers(1, 50, size=(400, 2))
    requested = rng.integers(0, 60, size=(400, 2))
    here = [np.ones(400, dtype=bool)] * 2
    values = [np.minimum(requested[:, j] / allocatable[:, j], 1.0) for j in range(2)]
    short = balanced_score(Fractions(values, here, all_counted=True), 400).tolist()
    assert short == balanced_score(Fractions(values, here), 400).tolist()
    assert short == [
        go_balanced_resource_scorer(requested[i].tolist(), allocatable[i].tolist())
        for i in range(400)
    ]


def test_scalar_resource_names() -> None:
    """schedutil.IsScalarResourceName."""
    for name in (
        "nvidia.com/gpu",
        "hugepages-2Mi",
        "kubernetes.io/batch",
        "attachable-volumes-csi-x",
    ):
        assert is_scalar_resource_name(name)
    for name in ("cpu", "memory", "pods", "ephemeral-storage", "foo", "requests.example.com/x"):
        assert not is_scalar_resource_name(name)


# TestValidateNodeResourcesBalancedAllocationArgs and SetDefaults_NodeResourcesBalancedAllocationArgs.
def test_args_defaults() -> None:
    assert plugin(NAME).resources == ("cpu", "memory")
    assert plugin(NAME, {"resources": []}).resources == ("cpu", "memory")
    assert plugin(
        NAME, {"resources": [{"name": "cpu"}, {"name": "x/y", "weight": 0}]}
    ).resources == (
        "cpu",
        "x/y",
    )


@pytest.mark.parametrize(
    ("args", "field", "problem"),
    [
        (
            {"resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]},
            "resources[0].weight",
            "Invalid value: 2: must be 1",
        ),
        (
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]},
            "resources[1].name",
            'Duplicate value: "cpu"',
        ),
        ({"resources": "cpu"}, "resources", "must be a list"),
        ({"resources": ["cpu"]}, "resources[0]", "must be a map"),
        ({"resources": [{"name": "cpu", "weight": "1"}]}, "resources[0].weight", "integer"),
        ({"resources": [{"name": "cpu", "wieght": 1}]}, "resources[0].wieght", "unknown field"),
        ({"resources": [{"name": 5}]}, "resources[0].name", "resource name"),
        ({"resource": []}, "resource", "takes resources"),
    ],
)
def test_args_validation_names_the_field(args: dict[str, Any], field: str, problem: str) -> None:
    with pytest.raises(PluginArgsError) as raised:
        plugin(NAME, args)
    assert raised.value.field == field
    assert problem in raised.value.problem


def test_no_normalize_and_no_events() -> None:
    """ScoreExtensions nil; not an EnqueueExtensions (score only)."""
    p = plugin(NAME)
    assert not hasattr(p, "normalize_score")
    assert not hasattr(p, "events_to_register")
