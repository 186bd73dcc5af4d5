"""DefaultPreemption's candidates (eventsched/plugins/defaultpreemption/candidates.py).

Cases from v1.28 default_preemption_test.go: `TestPodEligibleToPreemptOthers`,
`TestDryRunPreemption` (the cases that depend on resources and PDBs only; upstream's
offsets 4, 1, 3 come from `rand.New(rand.NewSource(4))` and are passed as they are),
and `TestPostFilter`'s "no candidate" messages (nodesWherePreemptionMightHelp, dry run
and FitError together). `calls` is upstream's `expectedNumFilterCalled`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from eventsched.framework import Code, Status
from eventsched.model import Node, Pod
from eventsched.model.disruption import PodDisruptionBudget
from eventsched.plugins.defaultpreemption import (
    DefaultPreemptionArgs,
    DryRunResult,
    dry_run_preemption,
    fit_error_message,
    nodes_where_preemption_might_help,
    num_candidates,
    offset_and_num_candidates,
    pod_eligible_to_preempt_others,
    preemption_offset,
)
from tests.plugins.preemption import (
    HIGH,
    LARGE,
    LOW,
    MID,
    ONE_POD,
    VERY_HIGH,
    ResourceFit,
    by_node,
    node,
    pdb,
    pod,
)

UNSCHEDULABLE = Status.unschedulable()
UNRESOLVABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
DISRUPTED = {
    "conditions": [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
    ]
}


# --- TestPodEligibleToPreemptOthers ---------------------------------------------------


@pytest.mark.parametrize(
    ("case", "preemptor", "on_node", "status", "eligible", "reason"),
    [
        (
            "Pod with nominated node",
            pod("p_with_nominated_node", HIGH, status={"nominatedNodeName": "node1"}),
            [pod("p1", LOW, node="node1", terminating=True)],
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had untolerated taint",)),
            True,
            "",
        ),
        ("Pod without nominated node", pod("p_without_nominated_node", HIGH), [], None, True, ""),
        (
            "Pod with 'PreemptNever' preemption policy",
            pod("p_with_preempt_never_policy", HIGH, preemptionPolicy="Never"),
            [],
            None,
            False,
            "not eligible due to preemptionPolicy=Never.",
        ),
        (
            "preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
            pod("p_with_nominated_node", HIGH, status={"nominatedNodeName": "node1"}),
            [pod("p1", LOW, node="node1", terminating=True, status=dict(DISRUPTED))],
            None,
            False,
            "not eligible due to a terminating pod on the nominated node.",
        ),
        (
            "non-victim Pods terminating",
            pod("p_with_nominated_node", HIGH, status={"nominatedNodeName": "node1"}),
            [pod("p1", LOW, node="node1", terminating=True)],
            None,
            True,
            "",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_pod_eligible_to_preempt_others(
    case: str,
    preemptor: Pod,
    on_node: list[Pod],
    status: Status | None,
    eligible: bool,
    reason: str,
) -> None:
    got = pod_eligible_to_preempt_others(preemptor, on_node, status)
    assert (got.eligible, got.reason) == (eligible, reason)


def test_a_higher_priority_victim_terminating_does_not_block() -> None:
    """Only a lower-priority pod terminating by preemption blocks a new preemption."""
    preemptor = pod("p", MID, status={"nominatedNodeName": "node1"})
    victim = pod("v", HIGH, node="node1", terminating=True, status=dict(DISRUPTED))
    assert pod_eligible_to_preempt_others(preemptor, [victim], None).eligible


# --- nodesWherePreemptionMightHelp ----------------------------------------------------


def test_only_unresolvable_nodes_are_left_out() -> None:
    """v1.28: a node is left out only when its status is UnschedulableAndUnresolvable;
    one missing from the statuses (a nil status there) is still tried."""
    statuses = {"node1": UNSCHEDULABLE, "node2": UNRESOLVABLE, "node4": UNSCHEDULABLE}
    got = nodes_where_preemption_might_help(["node1", "node2", "node3", "node4"], statuses)
    assert got.nodes == ("node1", "node3", "node4")
    assert got.statuses == {
        "node2": Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("Preemption is not helpful for scheduling",)
        )
    }


# --- GetOffsetAndNumCandidates --------------------------------------------------------


@pytest.mark.parametrize(
    ("nodes", "pct", "absolute", "want"),
    [
        (5, 40, 1, 2),  # TestDryRunPreemption "... DefaultPreemptionArgs limits to 2"
        (5, 40, 2, 2),  # "preemption looks past numCandidates ..."
        (3, 10, 100, 3),  # defaults: at most every node
        (1000, 10, 100, 100),  # 10% = 100
        (5000, 10, 100, 500),
        (999, 10, 0, 99),  # rounded down
        (7, 0, 3, 3),
        (0, 10, 100, 0),
    ],
)
def test_num_candidates(nodes: int, pct: int, absolute: int, want: int) -> None:
    """`calculateNumCandidates`: nodes*pct/100, at least minCandidateNodesAbsolute, at most nodes."""
    assert num_candidates(nodes, DefaultPreemptionArgs(pct, absolute)) == want


def test_offset_comes_from_the_seed() -> None:
    """The offset is a pure function of (seed, node count), so replay starts at the same
    node, and it is spread over every node as seeds vary."""
    assert preemption_offset(42, 10) == preemption_offset(42, 10)
    offsets = {preemption_offset(seed, 10) for seed in range(200)}
    assert offsets == set(range(10))
    assert preemption_offset(7, 0) == 0 and preemption_offset(7, 1) == 0
    offset, n = offset_and_num_candidates(42, 10, DefaultPreemptionArgs())
    assert (offset, n) == (preemption_offset(42, 10), 10)


# --- TestDryRunPreemption --------------------------------------------------------------

FIVE = ["node1", "node2", "node3", "node4", "node5"]


def dry_run(
    preemptor: Pod,
    pods: Sequence[Pod],
    names: Sequence[str],
    offset: int,
    wanted: int,
    pdbs: Sequence[PodDisruptionBudget] = (),
    nodes: Mapping[str, Node] | None = None,
) -> tuple[DryRunResult, int]:
    all_nodes = nodes or {n: node(n) for n in names}
    fit = ResourceFit(all_nodes, by_node(pods), preemptor)
    got = dry_run_preemption(preemptor, names, by_node(pods), pdbs, offset, wanted, fit.fits_on)
    return got, fit.calls


def summary(result: DryRunResult) -> list[tuple[str, list[str], int]]:
    """Candidates sorted by node, victims by name, as upstream's test compares them."""
    return sorted(
        (c.node, sorted(v.name for v in c.victims), c.num_pdb_violations) for c in result.candidates
    )


def test_a_pod_that_fits_on_both_nodes_when_lower_priority_pods_are_preempted() -> None:
    pods = [pod("p1", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")]
    got, calls = dry_run(pod("p", HIGH, LARGE), pods, ["node1", "node2"], 0, 2)
    assert summary(got) == [("node1", ["p1"], 0), ("node2", ["p2"], 0)]
    assert calls == 4


def test_higher_priority_pods_running_no_preemption() -> None:
    """ "a pod that would fit on the nodes, but other pods running are higher priority"."""
    pods = [pod("p1", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")]
    got, calls = dry_run(pod("p", LOW, LARGE), pods, ["node1", "node2"], 0, 2)
    assert summary(got) == [] and calls == 0
    assert set(got.statuses) == {"node1", "node2"}


def test_all_nodes_are_possible_candidates_but_args_limit_to_2() -> None:
    """ "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2":
    offset 4 => node5 (yes), node1 (yes)."""
    pods = [pod(f"p{i}", MID, LARGE, f"node{i}") for i in range(1, 6)]
    wanted = num_candidates(5, DefaultPreemptionArgs(40, 1))
    got, calls = dry_run(pod("p", HIGH, LARGE), pods, FIVE, 4, wanted)
    assert summary(got) == [("node1", ["p1"], 0), ("node5", ["p5"], 0)]
    assert got.visited == ("node5", "node1") and calls == 4


def test_some_nodes_are_not_possible_candidates_args_limit_to_2() -> None:
    """ "some nodes are not possible candidates, DefaultPreemptionArgs limits to 2":
    offset 4 => node5 (no), node1 (yes), node2 (no), node3 (yes)."""
    prios = {1: MID, 2: VERY_HIGH, 3: MID, 4: MID, 5: VERY_HIGH}
    pods = [pod(f"p{i}", prios[i], LARGE, f"node{i}") for i in range(1, 6)]
    got, calls = dry_run(pod("p", HIGH, LARGE), pods, FIVE, 4, 2)
    assert summary(got) == [("node1", ["p1"], 0), ("node3", ["p3"], 0)]
    assert got.visited == ("node5", "node1", "node2", "node3") and calls == 4


@pytest.mark.parametrize(
    ("cycle", "offset", "want"),
    [(0, 4, ["node1", "node5"]), (1, 1, ["node2", "node3"]), (2, 3, ["node4", "node5"])],
)
def test_preemption_offset_across_multiple_scheduling_cycles_and_wrap_around(
    cycle: int, offset: int, want: list[str]
) -> None:
    """ "preemption offset across multiple scheduling cycles and wrap around": tp1..tp3."""
    pods = [pod(f"p{i}", MID, LARGE, f"node{i}") for i in range(1, 6)]
    got, calls = dry_run(pod(f"tp{cycle + 1}", HIGH, LARGE), pods, FIVE, offset, 2)
    assert [c for c, _, _ in summary(got)] == want
    assert calls == 4


def test_preemption_looks_past_num_candidates_until_a_non_pdb_violating_node_is_found() -> None:
    """offset 4 => node5 (yes, pdb), node1 (yes, pdb), node2 (no: the violating list is
    full), node3 (yes); three candidates for numCandidates 2, 8 filter calls."""
    foo = {"app": "foo"}
    pods = [
        pod("p1", MID, LARGE, "node1", labels=foo),
        pod("p2", MID, LARGE, "node2", labels=foo),
        pod("p3", MID, LARGE, "node3"),
        pod("p4", MID, LARGE, "node4"),
        pod("p5", MID, LARGE, "node5", labels=foo),
    ]
    wanted = num_candidates(5, DefaultPreemptionArgs(40, 2))
    got, calls = dry_run(pod("p", HIGH, LARGE), pods, FIVE, 4, wanted, [pdb(foo, 0)])
    assert summary(got) == [("node1", ["p1"], 1), ("node3", ["p3"], 0), ("node5", ["p5"], 1)]
    assert [c.node for c in got.candidates] == ["node3", "node5", "node1"]  # non-violating first
    assert calls == 8


def test_a_node_where_no_pod_needs_to_go_is_an_error() -> None:
    """DryRunPreemption: success with no victim is "expected at least one victim pod"."""
    got, _ = dry_run(
        pod("p", HIGH, LARGE),
        [pod("p1", MID, LARGE, "node1")],
        ["node1"],
        0,
        1,
        nodes={"node1": node("node1", {"cpu": "1", "memory": "1Gi"})},
    )
    assert got.candidates == ()
    assert [s.message for s in got.errors] == ['expected at least one victim pod on node "node1"']


# --- TestPostFilter: the message when no node has a candidate --------------------------


def no_candidate_message(
    preemptor: Pod, pods: Sequence[Pod], nodes: Mapping[str, Node], statuses: Mapping[str, Status]
) -> str:
    potential = nodes_where_preemption_might_help(list(nodes), statuses)
    got, _ = dry_run(preemptor, pods, potential.nodes, 0, len(nodes), nodes=nodes)
    assert got.candidates == ()
    return fit_error_message({**got.statuses, **potential.statuses})


NODE_RES = {"cpu": "200m", "memory": "400"}


@pytest.mark.parametrize(
    ("case", "preemptor", "pods", "nodes", "statuses", "want"),
    [
        (
            "pod with tied priority is still unschedulable",
            pod("p"),
            [pod("p1", node="node1")],
            {"node1": ONE_POD},
            {"node1": UNSCHEDULABLE},
            "0/1 nodes are available: 1 No preemption victims found for incoming pod.",
        ),
        (
            "preemption should respect filteredNodesStatuses",
            pod("p", HIGH),
            [pod("p1", node="node1")],
            {"node1": ONE_POD},
            {"node1": UNRESOLVABLE},
            "0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        ),
        (
            "no candidate nodes found, no enough resource after removing low priority pods",
            pod("p", HIGH, LARGE),
            [pod("p1", node="node1"), pod("p2", node="node2")],
            {"node1": NODE_RES, "node2": NODE_RES},
            {"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE},
            "0/2 nodes are available: 2 Insufficient cpu.",
        ),
        (
            "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
            pod("p", HIGH, LARGE),
            [pod("p1", HIGH, node="node1"), pod("p2", node="node2"), pod("p3", HIGH, node="node3")],
            {"node1": ONE_POD, "node2": NODE_RES, "node3": ONE_POD},
            {"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE, "node3": UNSCHEDULABLE},
            "0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod.",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_post_filter_no_candidate_messages(
    case: str,
    preemptor: Pod,
    pods: list[Pod],
    nodes: dict[str, dict[str, str]],
    statuses: dict[str, Status],
    want: str,
) -> None:
    """TestPostFilter wants "preemption: " + this message (the prefix is PostFilter's)."""
    built = {name: node(name, cap) for name, cap in nodes.items()}
    assert no_candidate_message(preemptor, pods, built, statuses) == want


def test_post_filter_pod_with_higher_priority_can_be_made_schedulable() -> None:
    """TestPostFilter "pod with higher priority can be made schedulable": a one-pod node."""
    got, _ = dry_run(
        pod("p", HIGH),
        [pod("p1", node="node1")],
        ["node1"],
        0,
        1,
        nodes={"node1": node("node1", ONE_POD)},
    )
    assert summary(got) == [("node1", ["p1"], 0)]
