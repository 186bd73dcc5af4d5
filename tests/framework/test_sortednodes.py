"""v1.37's host choice: Go's container/heap over the scored nodes (framework/sortednodes.py),
and `schedule_pod` choosing by it at v1.37 only (v1.28 and v1.34 draw from the seed)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from eventsched.audit.explain import selection_reason
from eventsched.framework import CycleState, Features, ListSink, schedule_pod
from eventsched.framework.runtime import ScoreTable
from eventsched.framework.selection import heap_choice
from eventsched.framework.sortednodes import (
    SortedScoredNodes,
    node_key,
    randomizer,
    select_by_heap,
)
from tests.framework.fakes import framework, nodes, pod

CASES = Path(__file__).with_name("heapcases") / "cases.json"


def pop_order(scores: list[tuple[str, int, int]]) -> list[str]:
    """Every node popped from `NewSortedScoredNodes`, as (name, total, randomizer)."""
    heap = SortedScoredNodes([node_key(total, rand) for _, total, rand in scores])
    return [scores[heap.pop()][0] for _ in range(len(scores))]


@pytest.mark.parametrize(
    ("case", "scores", "want"),
    [
        ("empty", [], []),
        ("single node", [("node1", 5, 0)], ["node1"]),
        (
            "descending by TotalScore",
            [("node1", 1, 0), ("node3", 3, 0), ("node2", 2, 0)],
            ["node3", "node2", "node1"],
        ),
        (
            "tie-break by Randomizer",
            [("nodeA", 5, 1), ("nodeB", 5, 3), ("nodeC", 5, 2)],
            ["nodeB", "nodeC", "nodeA"],
        ),
        (
            "mixed scores and tie-breaks",
            [("node3.1", 3, 1), ("node2", 2, 0), ("node1", 1, 0), ("node3.2", 3, 2)],
            ["node3.2", "node3.1", "node2", "node1"],
        ),
        # from schedule_one_test.go Test_SelectHost
        (
            "unique properly ordered scores",
            [("node1", 1, 0), ("node2", 2, 0)],
            ["node2", "node1"],
        ),
        (
            "equal scores",
            [("node2.2", 2, 2), ("node2.1", 2, 1), ("node2.3", 2, 3)],
            ["node2.3", "node2.2", "node2.1"],
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_sorted_scored_nodes_pop(
    case: str, scores: list[tuple[str, int, int]], want: list[str]
) -> None:
    # from pkg/scheduler/framework/sorted_nodes_test.go: TestSortedScoredNodes_Pop
    assert pop_order(scores) == want


def test_len_counts_down_as_nodes_are_popped() -> None:
    # from sorted_nodes_test.go: TestSortedScoredNodes_Len
    heap = SortedScoredNodes([node_key(t) for t in (10, 20, 30)])
    for want in (3, 2, 1):
        assert len(heap) == want
        heap.pop()
    assert len(heap) == 0


def test_the_port_pops_as_gos_container_heap_does() -> None:
    """200 lists (up to 14 nodes, many ties, some randomizers) ordered by Go's own heap
    (heapcases/main.go): the same order, node for node."""
    cases = json.loads(CASES.read_text())
    assert len(cases) == 200
    for case in cases:
        keys = [node_key(t, r) for t, r in zip(case["totals"], case["randomizers"], strict=True)]
        heap = SortedScoredNodes(keys)
        assert [heap.pop() for _ in keys] == case["order"], case
        assert select_by_heap(case["totals"], case["randomizers"]) == case["order"][0]


def test_a_tie_goes_to_the_heap_shape_not_to_the_first_node() -> None:
    """/work/notes/v137-diff.md §10.2: totals [1, 0, 2, 1, 0, 2, 1, 2, 0] give index 7."""
    assert select_by_heap([1, 0, 2, 1, 0, 2, 1, 2, 0]) == 7
    assert select_by_heap([5, 5, 5, 5]) == 0  # all equal: the first stays on top


def test_only_extender_scored_nodes_draw_a_randomizer_from_the_seed() -> None:
    totals = np.array([7, 7, 7, 7], dtype=np.int64)
    empty = np.zeros((0, 4), dtype=np.int64)
    scores = ScoreTable(np.arange(4), [], [], empty, empty, totals)
    assert heap_choice(scores, 99) == 0  # no extender: deterministic
    scores.extender_scored = np.array([False, True, False, True])
    drawn = {1: randomizer(99, 1), 3: randomizer(99, 3)}
    assert all(0 < r < 2**63 for r in drawn.values())
    assert heap_choice(scores, 99) == max(drawn, key=lambda k: drawn[k])
    assert heap_choice(scores, 99) == heap_choice(scores, 99)  # replay draws the same


PLUGINS = {"Equal": ("EqualPrioritizer", {})}
POINTS = {"score": ("Equal",)}


def test_schedule_pod_breaks_ties_by_the_heap_at_v137_only() -> None:
    """Five tied nodes: v1.37 takes node1 whatever the seed (the first scored stays on
    top when all are equal) and says so in `selected`; v1.28 and v1.34 draw by the seed."""
    for version in ("1.28", "1.34", "1.37"):
        features = Features(version=version)
        table = nodes(*(f"node{i}" for i in range(1, 6)))
        fw = framework(table, PLUGINS, POINTS, features)
        picks = set()
        for seed in range(30):
            sink = ListSink()
            picks.add(schedule_pod(fw, CycleState("a", seed), pod("p"), table, 0, sink).node)
            selected = sink.of("selected")[0].data
        if version == "1.37":
            assert picks == {"node1"}
            assert selected == {"score": 1, "tieCount": 5, "tieBreak": "heap"}
            assert selection_reason(selected) == (
                "tie between 5 nodes broken by kube-scheduler's heap order"
            )
        else:
            assert len(picks) > 1
            assert selected == {"score": 1, "tieCount": 5}


def test_the_heap_reads_the_nodes_in_the_order_they_were_filtered() -> None:
    """The filter pass starts at `nextStartNodeIndex`: the same tie, started elsewhere,
    puts another node on top (the first one filtered, here)."""
    table = nodes(*(f"node{i}" for i in range(1, 6)))
    fw = framework(table, PLUGINS, POINTS, Features(version="1.37"))
    got = [
        schedule_pod(fw, CycleState("a", 1), pod("p"), table, s, ListSink()).node for s in range(5)
    ]
    assert got == ["node1", "node2", "node3", "node4", "node5"]
