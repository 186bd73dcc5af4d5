"""NodeResourcesBalancedAllocation at 1.33+ (best-effort pods Skip) and 1.36+ (the score is the
change in balance), after v1.37.2's balanced_allocation_test.go
TestNodeResourcesBalancedAllocation (its DRA cases aside); v1.28's table is
test_balancedallocation.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from eventsched.config.featuregates import features_for
from eventsched.framework import CycleState, Features
from eventsched.model import Node, NodeTable, Pod
from tests.plugins.conftest import plugin
from tests.plugins.test_balancedallocation import make_node, spec_pod

NAME = "NodeResourcesBalancedAllocation"
V137 = features_for("1.37")
GPU_ARGS = {
    "resources": [
        {"name": "cpu", "weight": 1},
        {"name": "memory", "weight": 1},
        {"name": "nvidia.com/gpu", "weight": 1},
    ]
}


def cpu_only() -> tuple[dict[str, str], ...]:
    return ({"cpu": "1000m"}, {"cpu": "2000m"})


def cpu_and_memory() -> tuple[dict[str, str], ...]:
    return ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})


def score(
    pod: Pod,
    nodes: list[Node],
    placed: list[tuple[tuple[dict[str, str], ...], str]] = (),  # type: ignore[assignment]
    args: dict[str, Any] | None = None,
    features: Features = V137,
    pre_score: bool = True,
) -> list[int] | str:
    """Each node's score, or "Skip" when PreScore Skips."""
    table = NodeTable(nodes)
    for i, (requests, node) in enumerate(placed):
        table.add_pod(spec_pod(f"placed-{i}", *requests).with_node(node), node)
    p = plugin(NAME, args, table, features)
    state = CycleState()
    rows = np.arange(len(table))
    if pre_score:
        status = p.pre_score(state, pod, table, rows)
        if status is not None and status.is_skip:
            return "Skip"
    return [int(x) for x in p.score_batch(state, pod, table, rows)]


CASES: list[tuple[str, Pod, list[Node], list[Any], dict[str, Any] | None, list[int] | str]] = [
    (
        "nothing scheduled, nothing requested, skip in PreScore",
        spec_pod("p", {}),
        [make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)],
        [],
        None,
        "Skip",
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        spec_pod("p", *cpu_and_memory()),
        [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)],
        [],
        None,
        [68, 75],
    ),
    (
        "resources requested, pods scheduled with resources",
        spec_pod("p", *cpu_and_memory()),
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
        [(cpu_only(), "node1"), (cpu_and_memory(), "node2")],
        None,
        [73, 74],
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        spec_pod("p", *cpu_and_memory()),
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)],
        [(cpu_only(), "node1"), (cpu_and_memory(), "node2")],
        None,
        [73, 70],
    ),
    (
        "resources requested, pods scheduled with resources, nodes to reach min/max score",
        spec_pod("p", {"memory": "2000"}, {"memory": "3000"}),
        [make_node("node1", 3000, 5000), make_node("node2", 3000, 5000)],
        [(cpu_only(), "node1")],
        None,
        [100, 50],
    ),
    (
        "requested resources at node capacity",
        spec_pod("p", *cpu_only()),
        [make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)],
        [(cpu_only(), "node1"), (cpu_and_memory(), "node2")],
        None,
        [62, 62],
    ),
    (
        "scalar resource is included in the score computation if pod requests the scalar resource",
        spec_pod("p", {"cpu": "0", "memory": "0", "nvidia.com/gpu": "1"}),
        [
            make_node("node1", 3500, 40000, {"nvidia.com/gpu": 8}),
            make_node("node2", 3500, 40000, {"nvidia.com/gpu": 8}),
        ],
        [
            (
                ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}),
                "node2",
            ),
            (
                (
                    {"cpu": "1000m", "memory": "2000"},
                    {"cpu": "2000m", "memory": "3000", "nvidia.com/gpu": "3"},
                ),
                "node1",
            ),
        ],
        GPU_ARGS,
        [75, 76],
    ),
    (
        "scalar resource is not included in the score computation if pod doesn't request the "
        "scalar resource",
        spec_pod("p", *cpu_and_memory()),
        [make_node("node1", 3500, 40000, {"nvidia.com/gpu": 8}), make_node("node2", 3500, 40000)],
        [],
        GPU_ARGS,
        [56, 56],
    ),
]


@pytest.mark.parametrize(
    ("name", "pod", "nodes", "placed", "args", "expected"), CASES, ids=[c[0] for c in CASES]
)
def test_the_score_is_the_change_in_balance_at_1_37(
    name: str,
    pod: Pod,
    nodes: list[Node],
    placed: list[Any],
    args: dict[str, Any] | None,
    expected: list[int] | str,
) -> None:
    assert score(pod, nodes, placed, args) == expected


def test_without_prescore_the_score_is_the_same() -> None:
    """ "resources requested, pods scheduled with resources if PreScore not called"."""
    nodes = [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)]
    placed = [(cpu_only(), "node1"), (cpu_and_memory(), "node2")]
    pod = spec_pod("p", *cpu_and_memory())
    assert score(pod, nodes, placed, pre_score=False) == [73, 74]
    # Score for a best-effort pod without PreScore: 0 (balanced_allocation.go Score).
    assert score(spec_pod("p", {}), nodes, placed, pre_score=False) == [0, 0]


def test_1_35_scores_the_balance_after_placement_as_1_28() -> None:
    """v1.35.0's balancedResourceScorer is v1.28's: (1 - std) * 100 with the pod."""
    nodes = [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)]
    pod = spec_pod("p", *cpu_and_memory())
    # node1: 75% cpu, 50% memory: std 0.125 -> 87; node2: 50%, 50% -> 100.
    assert score(pod, nodes, features=features_for("1.35")) == [87, 100]


@pytest.mark.parametrize(("version", "skips"), [("1.32", False), ("1.33", True), ("1.34", True)])
def test_best_effort_pods_skip_from_1_33(version: str, skips: bool) -> None:
    """kubernetes#130260 (v1.33.0's PreScore; v1.32.0 scores them by the node's balance)."""
    nodes = [make_node("node1", 4000, 10000)]
    placed = [(cpu_only(), "node1")]
    result = score(spec_pod("p", {}), nodes, placed, features=features_for(version))
    assert result == ("Skip" if skips else [62])  # 75% cpu, 0% memory: std 0.375
    # A pod requesting only what is not scored (here: a GPU) is best-effort too.
    gpu = spec_pod("g", {"nvidia.com/gpu": "1"})
    gpu_nodes = [make_node("node1", 4000, 10000, {"nvidia.com/gpu": 1})]
    assert (score(gpu, gpu_nodes, features=features_for(version)) == "Skip") is skips
