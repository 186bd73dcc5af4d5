"""Choosing the node (eventsched/plugins/defaultpreemption/pick.py): v1.28
default_preemption_test.go `TestSelectBestCandidate`, each case a dry run over
veryLargeRes nodes with default args (every node a candidate) and then
`select_candidate`; `expected` lists the nodes upstream accepts.
"""

from __future__ import annotations

import pytest

from eventsched.framework.preemption.pick import earliest_start_of_highest_priority
from eventsched.model import Pod
from eventsched.plugins.defaultpreemption import (
    Candidate,
    DefaultPreemptionArgs,
    dry_run_preemption,
    num_candidates,
    select_candidate,
)
from tests.plugins.preemption import (
    HIGH,
    LARGE,
    LOW,
    MEDIUM,
    MID,
    NEG,
    SMALL,
    VERY_HIGH,
    VERY_LARGE,
    ResourceFit,
    by_node,
    epoch,
    node,
    pod,
)

E0 = epoch(0)


def best(preemptor: Pod, pods: list[Pod], names: list[str]) -> str:
    nodes = {n: node(n) for n in names}
    fit = ResourceFit(nodes, by_node(pods), preemptor)
    wanted = num_candidates(len(names), DefaultPreemptionArgs())
    result = dry_run_preemption(preemptor, names, by_node(pods), [], 0, wanted, fit.fits_on)
    chosen = select_candidate(result.candidates)
    assert chosen is not None
    return chosen.node


CASES = [
    (
        "a pod that fits on both nodes when lower priority pods are preempted",
        pod("p", HIGH, LARGE),
        [pod("p1", MID, LARGE, "node1", E0), pod("p2", MID, LARGE, "node2", E0)],
        ["node1", "node2"],
        ["node1", "node2"],
    ),
    (
        "node with min highest priority pod is picked",
        pod("p", HIGH, VERY_LARGE),
        [
            pod("p1.1", MID, MEDIUM, "node1", E0),
            pod("p1.2", MID, LARGE, "node1", E0),
            pod("p2.1", MID, MEDIUM, "node2", E0),
            pod("p2.2", LOW, MEDIUM, "node2", E0),
            pod("p3.1", LOW, MEDIUM, "node3", E0),
            pod("p3.2", LOW, MEDIUM, "node3", E0),
        ],
        ["node1", "node2", "node3"],
        ["node3"],
    ),
    (
        "when highest priorities are the same, minimum sum of priorities is picked",
        pod("p", HIGH, VERY_LARGE),
        [
            pod("p1.1", MID, MEDIUM, "node1", E0),
            pod("p1.2", MID, LARGE, "node1", E0),
            pod("p2.1", MID, LARGE, "node2", E0),
            pod("p2.2", LOW, MEDIUM, "node2", E0),
            pod("p3.1", MID, MEDIUM, "node3", E0),
            pod("p3.2", MID, MEDIUM, "node3", E0),
        ],
        ["node1", "node2", "node3"],
        ["node2"],
    ),
    (
        "when highest priority and sum are the same, minimum number of pods is picked",
        pod("p", HIGH, VERY_LARGE),
        [
            pod("p1.1", MID, SMALL, "node1", E0),
            pod("p1.2", NEG, SMALL, "node1", E0),
            pod("p1.3", MID, SMALL, "node1", E0),
            pod("p1.4", NEG, SMALL, "node1", E0),
            pod("p2.1", MID, LARGE, "node2", E0),
            pod("p2.2", NEG, MEDIUM, "node2", E0),
            pod("p3.1", MID, MEDIUM, "node3", E0),
            pod("p3.2", NEG, SMALL, "node3", E0),
            pod("p3.3", LOW, SMALL, "node3", E0),
        ],
        ["node1", "node2", "node3"],
        ["node2"],
    ),
    (
        "sum of adjusted priorities is considered",
        pod("p", HIGH, VERY_LARGE),
        [
            pod("p1.1", MID, SMALL, "node1", E0),
            pod("p1.2", NEG, SMALL, "node1", E0),
            pod("p1.3", NEG, SMALL, "node1", E0),
            pod("p2.1", MID, LARGE, "node2", E0),
            pod("p2.2", NEG, MEDIUM, "node2", E0),
            pod("p3.1", MID, MEDIUM, "node3", E0),
            pod("p3.2", NEG, SMALL, "node3", E0),
            pod("p3.3", LOW, SMALL, "node3", E0),
        ],
        ["node1", "node2", "node3"],
        ["node2"],
    ),
    (
        "non-overlapping lowest high priority, sum priorities, and number of pods",
        pod("p", VERY_HIGH, VERY_LARGE),
        [
            pod("p1.1", MID, SMALL, "node1", E0),
            pod("p1.2", LOW, SMALL, "node1", E0),
            pod("p1.3", LOW, SMALL, "node1", E0),
            pod("p2.1", HIGH, LARGE, "node2", E0),
            pod("p3.1", MID, MEDIUM, "node3", E0),
            pod("p3.2", LOW, SMALL, "node3", E0),
            pod("p3.3", LOW, SMALL, "node3", E0),
            pod("p3.4", LOW, MEDIUM, "node3", E0),
            pod("p4.1", MID, MEDIUM, "node4", E0),
            pod("p4.2", MID, SMALL, "node4", E0),
            pod("p4.3", MID, SMALL, "node4", E0),
            pod("p4.4", NEG, SMALL, "node4", E0),
        ],
        ["node1", "node2", "node3", "node4"],
        ["node1"],
    ),
    (
        "same priority, same number of victims, different start time for each node's pod",
        pod("p", HIGH, VERY_LARGE),
        [
            pod("p1.1", MID, MEDIUM, "node1", epoch(2)),
            pod("p1.2", MID, MEDIUM, "node1", epoch(2)),
            pod("p2.1", MID, MEDIUM, "node2", epoch(3)),
            pod("p2.2", MID, MEDIUM, "node2", epoch(3)),
            pod("p3.1", MID, MEDIUM, "node3", epoch(1)),
            pod("p3.2", MID, MEDIUM, "node3", epoch(1)),
        ],
        ["node1", "node2", "node3"],
        ["node2"],
    ),
    (
        "same priority, same number of victims, different start time for all pods",
        pod("p", HIGH, VERY_LARGE),
        [
            pod("p1.1", MID, MEDIUM, "node1", epoch(4)),
            pod("p1.2", MID, MEDIUM, "node1", epoch(2)),
            pod("p2.1", MID, MEDIUM, "node2", epoch(5)),
            pod("p2.2", MID, MEDIUM, "node2", epoch(1)),
            pod("p3.1", MID, MEDIUM, "node3", epoch(3)),
            pod("p3.2", MID, MEDIUM, "node3", epoch(6)),
        ],
        ["node1", "node2", "node3"],
        ["node3"],
    ),
    (
        "different priority, same number of victims, different start time for all pods",
        pod("p", HIGH, VERY_LARGE),
        [
            pod("p1.1", LOW, MEDIUM, "node1", epoch(4)),
            pod("p1.2", MID, MEDIUM, "node1", epoch(2)),
            pod("p2.1", MID, MEDIUM, "node2", epoch(6)),
            pod("p2.2", LOW, MEDIUM, "node2", epoch(1)),
            pod("p3.1", LOW, MEDIUM, "node3", epoch(3)),
            pod("p3.2", MID, MEDIUM, "node3", epoch(5)),
        ],
        ["node1", "node2", "node3"],
        ["node2"],
    ),
]


@pytest.mark.parametrize(
    ("case", "preemptor", "pods", "names", "expected"),
    CASES,
    ids=[c[0] for c in CASES],
)
def test_select_best_candidate(
    case: str, preemptor: Pod, pods: list[Pod], names: list[str], expected: list[str]
) -> None:
    assert best(preemptor, pods, names) in expected


def test_no_candidate_and_one_candidate() -> None:
    """`SelectCandidate`: nil without candidates; the only one as it is."""
    only = Candidate("node1", (pod("v", LOW),), 3)
    assert select_candidate([]) is None
    assert select_candidate([only]) is only


def test_fewest_pdb_violations_comes_first() -> None:
    """Criterion 1 beats every other: more, lower-priority victims but no PDB violation."""
    violating = Candidate("node1", (pod("a", LOW),), 1)
    clean = Candidate("node2", (pod("b", MID), pod("c", MID)), 0)
    assert select_candidate([violating, clean]) is clean


def test_still_tied_takes_the_first_candidate() -> None:
    """Upstream takes a random one (Go map order); here the dry run's order decides."""
    first = Candidate("node2", (pod("a", LOW, start=E0),), 0)
    second = Candidate("node1", (pod("b", LOW, start=E0),), 0)
    assert select_candidate([first, second]) is first
    assert select_candidate([second, first]) is second


def test_victims_without_start_time_count_as_the_latest() -> None:
    """`GetPodStartTime` of a not-started pod is now: its node wins the start-time criterion."""
    started = Candidate("node1", (pod("a", LOW, start=epoch(9)),), 0)
    pending = Candidate("node2", (pod("b", LOW),), 0)
    assert select_candidate([started, pending]) is pending


def test_earliest_start_is_taken_among_the_highest_priority_victims() -> None:
    """`util.GetEarliestPodStartTime`: a lower-priority victim's earlier start does not count."""
    c = Candidate(
        "n",
        (
            pod("a", MID, start=epoch(5)),
            pod("b", LOW, start=epoch(1)),
            pod("c", MID, start=epoch(3)),
        ),
        0,
    )
    assert earliest_start_of_highest_priority(c) == 3
