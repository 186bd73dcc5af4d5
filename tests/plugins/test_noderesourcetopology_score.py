"""NodeResourceTopologyMatch's Score against scheduler-plugins v0.28.9's score_test.go and
least_numa_test.go: the three resource strategies (TestNodeResourceScorePlugin), nodes
without data (TestNodeResourcePartialDataScorePlugin), LeastNUMANodes
(TestNodeResourceScorePluginLeastNUMA, TestNUMANodesRequired, TestNormalizeScore,
TestMinDistance), with our own nodes and amounts; "ours" cases pin Go arithmetic
upstream relies on (truncation, Quantity.Value() rounding, gonum's sum and variance).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from eventsched.plugins.noderesourcetopology.leastnuma import (
    average_distance,
    normalize_score,
    numa_nodes_required,
)
from eventsched.plugins.noderesourcetopology.numa import NUMANode, numa_nodes
from eventsched.plugins.noderesourcetopology.score import (
    balanced_allocation,
    go_div,
    go_int64,
    gonum_sum,
    gonum_variance,
    least_allocated,
    score_cells,
)
from tests.plugins.nrt import GPU, node_for, nrt, pod, score_all, table, zone

MI = 2**20


def two_equal_cells(cells: dict[str, tuple[int, str]], policy: str, scope: str) -> Any:
    """A node per name, each with two cells of the same (cpu, memory)."""
    pairs = []
    for name, (cpu, memory) in cells.items():
        topology = nrt(
            name,
            zone(0, {"cpu": cpu, "memory": memory}),
            zone(1, {"cpu": cpu, "memory": memory}),
            policy=policy,
            scope=scope,
        )
        pairs.append((node_for(topology), topology))
    return table(*pairs)


def three_nodes(policy: str = "single-numa-node", scope: str = "container") -> Any:
    """Like upstream's defaultNUMANodes: three nodes of two equal cells each."""
    return two_equal_cells({"A": (8, "1000Mi"), "B": (4, "40Mi"), "C": (5, "50Mi")}, policy, scope)


SMALL = {"cpu": 2, "memory": "10Mi"}


@pytest.mark.parametrize(
    ("strategy", "args", "wanted"),
    [
        # upstream "MostAllocated strategy": (2*100/8 + 10*100/1000) / 2 = (25 + 1) / 2 ...
        ("MostAllocated", None, [13, 37, 30]),
        # upstream "BalancedAllocation strategy": int64((1 - sample variance) * 100)
        ("BalancedAllocation", None, [97, 96, 98]),
        # upstream "LeastAllocated strategy": ((8-2)*100/8 + (1000-10)*100/1000) / 2 = 87
        ("LeastAllocated", None, [87, 62, 70]),
        # ours: weights weigh the per-resource scores ((75*3 + 99) / 4 = 81)
        ("LeastAllocated", [{"name": "cpu", "weight": 3}, {"name": "memory"}], [81, 56, 65]),
    ],
)
def test_node_resource_score_plugin(strategy: str, args: Any, wanted: list[int]) -> None:
    # upstream: TestNodeResourceScorePlugin
    config: dict[str, Any] = {"scoringStrategy": {"type": strategy}}
    if args is not None:
        config["scoringStrategy"]["resources"] = args
    assert score_all(three_nodes(), pod(SMALL), config) == wanted


def test_container_scope_scores_the_mean_and_pod_scope_the_effective_request() -> None:
    # ours: containerScopeScore: each container against the unchanged cells, truncated mean
    two = pod({"cpu": 2, "memory": "10Mi"}, {"cpu": 1, "memory": "10Mi"})
    assert score_all(three_nodes(), two)[0] == (87 + 93) // 2
    # podScopeScore: {cpu 3, memory 20Mi}: (5*100/8 + 980*100/1000) / 2 = (62 + 98) / 2
    assert score_all(three_nodes(scope="pod"), two)[0] == 80


def test_the_lowest_non_zero_cell_score_wins() -> None:
    # ours: scoreForEachNUMANode
    cells = [
        NUMANode(0, {"cpu": 2000, "memory": 100 * MI}),
        NUMANode(1, {"cpu": 8000, "memory": 100 * MI}),
    ]
    assert score_cells({"cpu": 4000, "memory": 10 * MI}, cells, least_allocated, {}) == 45
    # a cell the pod does not fit scores 0 and is skipped
    assert score_cells({"cpu": 4000, "memory": 200 * MI}, cells, least_allocated, {}) == 25
    assert score_cells({"cpu": 9000, "memory": 200 * MI}, cells, least_allocated, {}) == 0
    assert score_cells({"cpu": 1000}, [], least_allocated, {}) == 0


def test_cell_ids_must_index_the_cell_list() -> None:
    # ours: upstream's numaScores[numa.NUMAID] panics for cells node-0 and node-2 only
    cells = [NUMANode(0, {"cpu": 2000}), NUMANode(2, {"cpu": 2000})]
    with pytest.raises(IndexError, match="index out of range"):
        score_cells({"cpu": 1000}, cells, least_allocated, {})


def test_cpu_is_scored_in_whole_cores() -> None:
    # ours: Quantity.Value() rounds 500m up to 1 and 1500m up to 2: (2 - 1) * 100 / 2
    cells = [NUMANode(0, {"cpu": 1500})]
    assert score_cells({"cpu": 500}, cells, least_allocated, {}) == 50


def test_pods_that_are_not_guaranteed_score_max_and_nodes_without_data_zero() -> None:
    # upstream: TestNodeResourcePartialDataScorePlugin ("One node with NRT data")
    topology = nrt("with", zone(0, {"cpu": 8, "memory": "1000Mi"}))
    plain = node_for(nrt("without", zone(0, {"cpu": 8, "memory": "1000Mi"})))
    t = table((node_for(topology), topology), (plain, None))
    assert score_all(t, pod(SMALL)) == [87, 0]
    assert score_all(t, pod(SMALL, guaranteed=False)) == [100, 100]
    # another policy: 0 for the resource strategies
    other = nrt("other", zone(0, {"cpu": 8, "memory": "1000Mi"}), policy="restricted")
    assert score_all(table((node_for(other), other)), pod(SMALL)) == [0]


def test_balanced_allocation_arithmetic() -> None:
    # ours: a request above the cell scores 0; gonum's variance divides by n - 1
    assert balanced_allocation({"cpu": 3000, "memory": 1}, {"cpu": 2000, "memory": 10}, {}) == 0
    assert gonum_variance([0.5, 0.25]) == pytest.approx(0.03125)
    # one requested resource: 0/0 is NaN, and int64(NaN) on amd64 is the smallest int64
    assert math.isnan(gonum_variance([0.5]))
    assert balanced_allocation({"cpu": 1000}, {"cpu": 2000}, {}) == -(2**63)
    # a cell without the resource counts as full (fraction 1)
    assert balanced_allocation({"cpu": 1000, "x": 1}, {"cpu": 2000}, {}) == go_int64(
        (1 - gonum_variance([0.5, 1.0])) * 100
    )


def test_go_arithmetic_helpers() -> None:
    # ours: truncation toward zero, division by zero panics, amd64 NaN conversion
    assert go_div(-7, 2) == -3 and go_div(7, 2) == 3
    with pytest.raises(ZeroDivisionError):
        go_div(1, 0)
    assert go_int64(99.99) == 99 and go_int64(-0.5) == 0 and go_int64(math.nan) == -(2**63)
    # gonum's floats.Sum adds in two lanes: (x0 + x2) + (x1 + x3) for four values
    values = [1e16, 1.0, -1e16, 1.0]
    assert gonum_sum(values) == 2.0 and sum(values) == 1.0
    assert gonum_sum([0.1] * 37) == pytest.approx(3.7)


# -- LeastNUMANodes ----------------------------------------------------------------------


def equal_nodes(scope: str) -> Any:
    """Upstream's defaultNUMANodes with a best-effort policy: no costs (255 everywhere)."""
    cells = {"Node1": (4, "500Mi"), "Node2": (2, "50Mi"), "Node3": (6, "60Mi")}
    return two_equal_cells(cells, "best-effort", scope)


def four_cells(name: str, gpus: tuple[int, int, int, int]) -> Any:
    """Upstream's fourNUMANodes: cells 0-1 and 2-3 close (12), across far (20)."""
    near = {0: 1, 1: 0, 2: 3, 3: 2}
    zones = []
    for i in range(4):
        costs = {j: 10 if j == i else 12 if j == near[i] else 20 for j in range(4)}
        zones.append(zone(i, {"cpu": 2, "memory": "50Mi", GPU: gpus[i]}, costs))
    topology = nrt(name, *zones, policy="single-numa-node", scope="container")
    return node_for(topology), topology


LEAST_NUMA = {"scoringStrategy": {"type": "LeastNUMANodes"}}
CASES = [
    # (upstream case, scope, cpu of each container (all with 50Mi), wanted per Node1..Node3)
    ("container scope, one container case 1", "container", (2,), [94, 94, 94]),
    ("container scope, one container case 2", "container", (4,), [94, 82, 94]),
    ("container scope, one container case 3", "container", (6,), [82, 0, 94]),
    ("container scope, two containers case 1", "container", (2, 2), [94, 94, 94]),
    ("container scope, two containers case 2", "container", (1, 3), [94, 82, 94]),
    ("container scope, two containers case 3", "container", (5, 3), [82, 0, 94]),
    ("pod scope, two containers case 1", "pod", (2, 2), [94, 82, 82]),
    ("pod scope, two containers case 3", "pod", (5, 3), [82, 0, 82]),
]


@pytest.mark.parametrize(("case", "scope", "cpus", "wanted"), CASES, ids=[c[0] for c in CASES])
def test_least_numa(case: str, scope: str, cpus: tuple[int, ...], wanted: list[int]) -> None:
    # upstream: TestNodeResourceScorePluginLeastNUMA
    containers = [{"cpu": cpu, "memory": "50Mi"} for cpu in cpus]
    assert score_all(equal_nodes(scope), pod(*containers), LEAST_NUMA) == wanted


def test_least_numa_non_numa_resources_only() -> None:
    # upstream "container scope, two containers non NUMA resource": such a pod is BestEffort
    # (no cpu or memory), which Score gives 100 before any strategy
    only = pod({"vendor.com/non-numa": 1}, {"vendor.com/non-numa": 2})
    assert score_all(equal_nodes("container"), only, LEAST_NUMA) == [100, 100, 100]
    # upstream "container scope, two containers non NUMA resource" and "pod scope, one
    # containers non NUMA resource": only resources no cell has -> MaxNodeScore. Not
    # Guaranteed pods score 100 anyway, so the scorer is called directly.
    from eventsched.plugins.noderesourcetopology.leastnuma import pod_scope_score

    cells = numa_nodes(nrt("n", zone(0, {"cpu": 2, "memory": "1Gi"})))
    assert pod_scope_score(cells, {"vendor.com/non-numa": 1}, "Guaranteed") == 100


@pytest.mark.parametrize(
    ("case", "containers", "wanted"),
    [
        (
            "container scope, one container, 4 NUMA nodes, 1 gpu",
            [{"cpu": 2, "memory": "50Mi", GPU: 1}],
            [94, 94],
        ),
        (
            "container scope, one container, 4 NUMA nodes, 2 gpu",
            [{"cpu": 2, "memory": "50Mi", GPU: 2}],
            [82, 76],
        ),
        (
            "container scope, 2 containers, 4 NUMA nodes, 2 gpu in one container",
            [{"cpu": 2, "memory": "50Mi", GPU: 2}, {"cpu": 2, "memory": "50Mi"}],
            [82, 76],
        ),
    ],
)
def test_least_numa_with_distances(
    case: str, containers: list[dict[str, Any]], wanted: list[int]
) -> None:
    # upstream: TestNodeResourceScorePluginLeastNUMA (fourNUMANodes): GPUs in two near cells
    # take 2 cells at the best distance (82), in two far cells 2 cells without it (76)
    t = table(four_cells("near", (1, 1, 0, 0)), four_cells("far", (0, 1, 0, 1)))
    assert score_all(t, pod(*containers), LEAST_NUMA) == wanted


@pytest.mark.parametrize(
    ("count", "best", "wanted"),
    [(1, True, 94), (1, False, 88), (2, True, 82), (2, False, 76), (8, True, 10), (8, False, 4)],
)
def test_normalize_score(count: int, best: bool, wanted: int) -> None:
    # upstream: TestNormalizeScore
    assert normalize_score(count, best) == wanted


def test_numa_nodes_required_and_min_distance() -> None:
    # upstream: TestNUMANodesRequired / TestMinDistance, our cells
    _, topology = four_cells("n", (1, 1, 0, 0))
    cells = numa_nodes(topology)
    assert average_distance(cells, (0, 1)) == 11 and average_distance(cells, (0, 2)) == 15
    assert average_distance(cells, ()) == 255
    assert numa_nodes_required("Guaranteed", cells, {"cpu": 2000}) == ((0,), True)
    assert numa_nodes_required("Guaranteed", cells, {"cpu": 4000}) == ((0, 1), True)
    # GPUs in far cells 1 and 3: two cells, not at the minimal distance of two cells
    far = numa_nodes(four_cells("f", (0, 1, 0, 1))[1])
    assert numa_nodes_required("Guaranteed", far, {GPU: 2}) == ((1, 3), False)
    # every combination of three has the same average distance: the first that fits
    assert numa_nodes_required("Guaranteed", far, {GPU: 2, "cpu": 5000}) == ((0, 1, 3), True)
    assert numa_nodes_required("Guaranteed", cells, {"cpu": 9000}) is None
    # not Guaranteed: cpu fits any combination
    assert numa_nodes_required("Burstable", cells, {"cpu": 9000}) == ((0,), True)
