"""NodeResourcesFit against upstream's messages and arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from eventsched.framework import Code, PluginArgsError
from eventsched.model import NodeTable
from tests.plugins.conftest import make_node, make_pod, plugin, run_filter, run_score


def reasons(statuses: list) -> list[tuple[str, ...] | None]:
    return [None if s is None else s.reasons for s in statuses]


def test_insufficient_reasons_in_upstream_order_and_code() -> None:
    table = NodeTable(
        [
            make_node("roomy", cpu="8", memory="16Gi"),
            make_node("small", cpu="1", memory="1Gi", pods="1"),
            make_node("no-gpu", cpu="8", memory="16Gi"),
        ]
    )
    table.add_pod(make_pod("existing"), "small")
    pod = make_pod("p", {"cpu": "2", "memory": "2Gi", "nvidia.com/gpu": 1})
    table.upsert_node(make_node("gpu", cpu="8", memory="16Gi", **{"nvidia.com/gpu": "1"}))
    statuses = run_filter("NodeResourcesFit", pod, table)
    assert reasons(statuses) == [
        ("Insufficient nvidia.com/gpu",),
        ("Too many pods", "Insufficient cpu", "Insufficient memory", "Insufficient nvidia.com/gpu"),
        ("Insufficient nvidia.com/gpu",),
        None,
    ]
    assert all(s.code == Code.UNSCHEDULABLE for s in statuses if s is not None)


def test_requests_already_on_the_node_count() -> None:
    table = NodeTable([make_node("a", cpu="2")])
    table.add_pod(make_pod("x", {"cpu": "1500m"}), "a")
    assert reasons(run_filter("NodeResourcesFit", make_pod("p", {"cpu": "500m"}), table)) == [None]
    assert reasons(run_filter("NodeResourcesFit", make_pod("p", {"cpu": "501m"}), table)) == [
        ("Insufficient cpu",)
    ]


def test_pod_without_requests_checks_only_the_pod_count() -> None:
    table = NodeTable([make_node("full", cpu="1", pods="1")])
    table.add_pod(make_pod("x", {"cpu": "1"}), "full")
    assert reasons(run_filter("NodeResourcesFit", make_pod("p"), table)) == [("Too many pods",)]


def test_ignored_resources_are_not_checked() -> None:
    table = NodeTable([make_node("a")])
    pod = make_pod("p", {"example.com/widget": 1})
    assert reasons(run_filter("NodeResourcesFit", pod, table)) == [
        ("Insufficient example.com/widget",)
    ]
    assert reasons(
        run_filter("NodeResourcesFit", pod, table, {"ignoredResources": ["example.com/widget"]})
    ) == [None]
    assert reasons(
        run_filter("NodeResourcesFit", pod, table, {"ignoredResourceGroups": ["example.com"]})
    ) == [None]


def test_least_allocated_uses_non_zero_defaults_and_integer_mean() -> None:
    # 4 cpu, 8Gi. A pod with no requests counts 100m and 200Mi when scoring.
    table = NodeTable(
        [make_node("a", cpu="4", memory="8Gi"), make_node("b", cpu="4", memory="8Gi")]
    )
    table.add_pod(make_pod("x", {"cpu": "2", "memory": "2Gi"}), "b")
    raw, _ = run_score("NodeResourcesFit", make_pod("p"), table)
    # a: cpu (4000-100)*100//4000 = 97, mem (8192-200)*100//8192 = 97 -> 97
    # b: cpu (4000-2100)*100//4000 = 47, mem (8192-2248)*100//8192 = 72 -> (47+72)//2 = 59
    assert raw == [97, 59]


def _go_least_allocated(requested: list[int], allocatable: list[int], weights: list[int]) -> int:
    """upstream leastResourceScorer over one node's (requested, allocatable) per resource."""
    score = weight_sum = 0
    for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
        if alloc == 0:
            continue
        score += (0 if req > alloc else (alloc - req) * 100 // alloc) * weight
        weight_sum += weight
    return score // weight_sum if weight_sum else 0


@pytest.mark.parametrize("with_empty_nodes", [False, True])
def test_least_allocated_equals_upstream_node_by_node(
    rng: np.random.Generator, with_empty_nodes: bool
) -> None:
    """Every node with some cpu and memory takes the short path; a node without any of one
    the general one. Both give upstream's integer scores, weights and overcommit included."""
    nodes, placed = [], []
    for i in range(120):
        cpu = int(rng.integers(1, 9)) * 1000
        memory = int(rng.integers(1, 17)) * 1024
        if with_empty_nodes and i % 7 == 0:
            memory = 0
        nodes.append(make_node(f"n{i}", cpu=f"{cpu}m", memory=f"{memory}Mi"))
        # Not zero: a placed pod without requests counts the non-zero defaults when scored.
        requested = (int(rng.integers(1, 12)) * 1000, int(rng.integers(1, 20)) * 1024)
        placed.append(requested)
    table = NodeTable(nodes)
    for i, (cpu, memory) in enumerate(placed):
        table.add_pod(make_pod(f"x{i}", {"cpu": f"{cpu}m", "memory": f"{memory}Mi"}), f"n{i}")
    pod = make_pod("p", {"cpu": "700m", "memory": "900Mi"})
    args = {
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 3}],
        }
    }
    raw, _ = run_score("NodeResourcesFit", pod, table, args)
    mib = 1024 * 1024
    want = []
    for i, node in enumerate(nodes):
        cpu_alloc = node.allocatable.get("cpu", 0)
        memory_alloc = node.allocatable.get("memory", 0)
        cpu, memory = placed[i]
        want.append(
            _go_least_allocated(
                [cpu + 700, (memory + 900) * mib], [cpu_alloc, memory_alloc], [2, 3]
            )
        )
    assert raw == want


def test_most_allocated_and_weights() -> None:
    table = NodeTable([make_node("a", cpu="4", memory="8Gi")])
    pod = make_pod("p", {"cpu": "1", "memory": "4Gi"})
    args = {
        "scoringStrategy": {
            "type": "MostAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 3}],
        }
    }
    raw, _ = run_score("NodeResourcesFit", pod, table, args)
    # cpu 25, memory 50 -> (25*1 + 50*3) // 4 = 43
    assert raw == [43]


def test_requested_to_capacity_ratio_interpolates_the_shape() -> None:
    table = NodeTable([make_node("a", cpu="4", memory="8Gi")])
    pod = make_pod("p", {"cpu": "1", "memory": "2Gi"})  # 25% of both
    args = {
        "scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
            "requestedToCapacityRatio": {
                "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
            },
        }
    }
    raw, _ = run_score("NodeResourcesFit", pod, table, args)
    assert raw == [25]


def test_an_extended_resource_the_pod_does_not_request_is_left_out() -> None:
    """upstream calculateResourceAllocatableRequest gives (0, 0) for a scalar resource the
    pod does not request: the weighted mean is over cpu and memory only."""
    node = make_node("a", cpu="8", memory="4Gi", **{"example.com/gpu": "4"})
    table = NodeTable([node])
    pod = make_pod("p", {"cpu": "2", "memory": "1Gi"})  # cpu 75 free, memory 75 free
    args = {
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [
                {"name": "cpu", "weight": 3},
                {"name": "memory", "weight": 1},
                {"name": "example.com/gpu", "weight": 2},
            ],
        }
    }
    raw, _ = run_score("NodeResourcesFit", pod, table, args)
    assert raw == [75]  # with gpu counted (100 free, weight 2) it would be 83
    requesting = make_pod("q", {"cpu": "2", "memory": "1Gi", "example.com/gpu": "2"})
    raw, _ = run_score("NodeResourcesFit", requesting, table, args)
    assert raw == [(75 * 3 + 75 + 50 * 2) // 6]


@pytest.mark.parametrize(("cpu_weight", "expected"), [(2, 58), (1, 67)])
def test_requested_to_capacity_ratio_rounds_as_go_does(cpu_weight: int, expected: int) -> None:
    """A falling shape: Go's integer division truncates the negative rise towards zero
    (cpu 52% -> 100 - 3640 // 60 = 40, not 39; memory 6% -> 93), and math.Round takes
    half away from zero ((40 + 93) / 2 = 66.5 -> 67)."""
    table = NodeTable([make_node("a", cpu="4", memory="16Gi")])
    pod = make_pod("p", {"cpu": "2100m", "memory": "1Gi"})
    args = {
        "scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "resources": [
                {"name": "cpu", "weight": cpu_weight},
                {"name": "memory", "weight": 1},
            ],
            "requestedToCapacityRatio": {
                "shape": [
                    {"utilization": 0, "score": 10},
                    {"utilization": 60, "score": 3},
                    {"utilization": 100, "score": 0},
                ]
            },
        }
    }
    raw, _ = run_score("NodeResourcesFit", pod, table, args)
    assert raw == [expected]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"scoringStrategy": {"type": "Foo"}}, "scoringStrategy.type"),
        (
            {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 0}]}},
            "scoringStrategy.resources[0].weight",
        ),
        (
            {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
            "scoringStrategy.requestedToCapacityRatio.shape",
        ),
        ({"ignoredResources": "cpu"}, "ignoredResources"),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_bad_args_name_the_field(args: dict, field: str) -> None:
    with pytest.raises(PluginArgsError) as err:
        plugin("NodeResourcesFit", args)
    assert err.value.field == field


def test_batch_filter_matches_a_per_node_reference(rng: np.random.Generator) -> None:
    nodes = [
        make_node(
            f"n{i}",
            cpu=f"{int(rng.integers(1, 8))}",
            memory=f"{int(rng.integers(1, 16))}Gi",
            pods="5",
        )
        for i in range(200)
    ]
    table = NodeTable(nodes)
    for i in range(400):
        table.add_pod(
            make_pod(f"x{i}", {"cpu": f"{int(rng.integers(1, 10)) * 100}m"}),
            f"n{int(rng.integers(0, 200))}",
        )
    pod = make_pod("p", {"cpu": "900m", "memory": "3Gi"})
    got = reasons(run_filter("NodeResourcesFit", pod, table))
    for row, node in enumerate(nodes):
        used = table.pods[row].values()
        expected = []
        if len(used) + 1 > 5:
            expected.append("Too many pods")
        if node.allocatable["cpu"] - sum(p.requests.get("cpu", 0) for p in used) < 900:
            expected.append("Insufficient cpu")
        if node.allocatable["memory"] - sum(p.requests.get("memory", 0) for p in used) < 3 << 30:
            expected.append("Insufficient memory")
        assert got[row] == (tuple(expected) if expected else None), node.name
