"""DefaultPreemption's victims on one node: MoreImportantPod, filterPodsWithPDBViolation,
SelectVictimsOnNode (eventsched/plugins/defaultpreemption/victims.py).

Victim cases come from v1.28 default_preemption_test.go `TestDryRunPreemption` run on
a single node (the ones that depend on resources and PDBs only), with NodeResourcesFit
replaced by `ResourceFit`; `calls` is upstream's `expectedNumFilterCalled`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from eventsched.framework import Code, Status
from eventsched.framework.preemption.victims import NOT_STARTED_NS, importance_order
from eventsched.model import Pod
from eventsched.model.disruption import PodDisruptionBudget
from eventsched.plugins.defaultpreemption import (
    filter_pods_with_pdb_violation,
    more_important_pod,
    select_victims_on_node,
    start_time_ns,
)
from tests.plugins.preemption import (
    HIGH,
    LARGE,
    LOW,
    MEDIUM,
    MID,
    SMALL,
    VERY_LARGE,
    ResourceFit,
    epoch,
    node,
    pdb,
    pod,
)


def select(
    preemptor: Pod, pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget] = ()
) -> tuple[list[str], int, Status, int]:
    """(victim names sorted, PDB violations, status, filter calls) on one veryLargeRes node."""
    fit = ResourceFit({"node1": node("node1")}, {"node1": list(pods)}, preemptor)
    got = select_victims_on_node(preemptor, pods, pdbs, fit.fits_on("node1"))
    return sorted(v.name for v in got.victims), got.num_pdb_violations, got.status, fit.calls


def test_start_time_parses_rfc3339_to_nanoseconds() -> None:
    assert start_time_ns(pod("a", start=epoch(5))) == 5
    assert start_time_ns(pod("b", start="2023-05-01T10:00:00Z")) == 1682935200 * 10**9
    assert start_time_ns(pod("c", start="2023-05-01T12:00:00+02:00")) == 1682935200 * 10**9
    assert start_time_ns(pod("d", start="2023-05-01T10:00:00.5-01:00")) == (
        1682938800 * 10**9 + 500_000_000
    )


def test_a_pod_without_start_time_counts_as_starting_now() -> None:
    """`util.GetPodStartTime` gives time.Now() for a pod without status.startTime."""
    assert start_time_ns(pod("a")) == NOT_STARTED_NS
    assert start_time_ns(pod("b", start="not a time")) == NOT_STARTED_NS


def test_more_important_pod_higher_priority_then_earlier_start() -> None:
    """`util.MoreImportantPod`."""
    high, low = pod("h", HIGH, start=epoch(9)), pod("l", LOW, start=epoch(1))
    early, late = pod("e", MID, start=epoch(1)), pod("t", MID, start=epoch(2))
    assert more_important_pod(high, low) and not more_important_pod(low, high)
    assert more_important_pod(early, late) and not more_important_pod(late, early)
    assert more_important_pod(late, pod("n", MID))  # not started yet: "now", the latest
    names = [p.name for p in importance_order([low, late, pod("n", MID), high, early])]
    assert names == ["h", "e", "t", "n", "l"]


def test_pdb_violation_split_keeps_order_and_counts_each_budget() -> None:
    """`filterPodsWithPDBViolation`: one budget allowing 1 of app=foo, another allowing 0 of
    app=bar; a pod of another namespace and one without labels match none."""
    pods = [
        pod("f1", labels={"app": "foo"}),
        pod("b1", labels={"app": "bar"}),
        pod("f2", labels={"app": "foo"}),
        pod("n1"),
        pod("f3", labels={"app": "foo"}),
    ]
    budgets = [pdb({"app": "foo"}, 1, name="foo"), pdb({"app": "bar"}, 0, name="bar")]
    violating, fine = filter_pods_with_pdb_violation(pods, budgets)
    assert [p.name for p in violating] == ["b1", "f2", "f3"]
    assert [p.name for p in fine] == ["f1", "n1"]


def test_pdb_disrupted_pods_do_not_count() -> None:
    """A pod in the budget's disruptedPods is already counted by the API server: it takes
    nothing off the budget and is never violating."""
    pods = [pod("f1", labels={"app": "foo"}), pod("f2", labels={"app": "foo"})]
    violating, fine = filter_pods_with_pdb_violation(pods, [pdb({"app": "foo"}, 0, ["f1"])])
    assert [p.name for p in violating] == ["f2"]
    assert [p.name for p in fine] == ["f1"]


def test_pdb_of_another_namespace_does_not_select() -> None:
    budget = PodDisruptionBudget("other", "pdb", pdb({"app": "foo"}, 0).selector, 0)
    violating, fine = filter_pods_with_pdb_violation([pod("f1", labels={"app": "foo"})], [budget])
    assert violating == [] and [p.name for p in fine] == ["f1"]


def test_no_lower_priority_pod_is_unresolvable() -> None:
    """TestDryRunPreemption "a pod that would fit on the nodes, but other pods running are
    higher priority, no preemption would happen": no filter call at all."""
    victims, violations, status, calls = select(
        pod("p", LOW, LARGE), [pod("p1", MID, LARGE, "node1")]
    )
    assert (victims, violations, calls) == ([], 0, 0)
    assert status == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("No preemption victims found for incoming pod",)
    )


def test_not_fitting_after_removing_all_lower_priority_pods_returns_the_filter_status() -> None:
    """TestPostFilter "no candidate nodes found, no enough resource after removing low
    priority pods", on one node of 200m cpu / 400 memory."""
    preemptor = pod("p", HIGH, LARGE)
    pods = [pod("p1", LOW, node="node1")]
    fit = ResourceFit(
        {"node1": node("node1", {"cpu": "200m", "memory": "400"})}, {"node1": pods}, preemptor
    )
    got = select_victims_on_node(preemptor, pods, [], fit.fits_on("node1"))
    assert got.victims == () and fit.calls == 1
    assert got.status == Status.unschedulable("Insufficient cpu")


@pytest.mark.parametrize(
    ("case", "preemptor", "pods", "want", "calls"),
    [
        (
            "a pod that fits on both nodes when lower priority pods are preempted",
            pod("p", HIGH, LARGE),
            [pod("p1", MID, LARGE, "node1")],
            ["p1"],
            2,
        ),
        (
            "medium priority pod is preempted, but lower priority one stays as it is small",
            pod("p", HIGH, LARGE),
            [pod("p1.1", LOW, SMALL, "node1"), pod("p1.2", MID, LARGE, "node1")],
            ["p1.2"],
            3,
        ),
        (
            "mixed priority pods are preempted",
            pod("p", HIGH, LARGE),
            [
                pod("p1.1", MID, SMALL, "node1"),
                pod("p1.2", LOW, SMALL, "node1"),
                pod("p1.3", MID, MEDIUM, "node1"),
                pod("p1.4", HIGH, SMALL, "node1"),
            ],
            ["p1.2", "p1.3"],
            4,
        ),
        (
            "mixed priority pods are preempted, pick later StartTime one when priorities are equal",
            pod("p", HIGH, LARGE),
            [
                pod("p1.1", LOW, SMALL, "node1", epoch(5)),
                pod("p1.2", LOW, SMALL, "node1", epoch(4)),
                pod("p1.3", MID, MEDIUM, "node1", epoch(3)),
                pod("p1.4", HIGH, SMALL, "node1", epoch(2)),
            ],
            ["p1.1", "p1.3"],
            4,
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_dry_run_preemption_victims_on_one_node(
    case: str, preemptor: Pod, pods: list[Pod], want: list[str], calls: int
) -> None:
    """TestDryRunPreemption cases, node1 only (NodeResourcesFit; veryLargeRes nodes)."""
    victims, violations, status, n = select(preemptor, pods)
    assert status.is_success
    assert (victims, violations, n) == (want, 0, calls)


FOO = {"app": "foo"}


@pytest.mark.parametrize(
    ("case", "pods", "budget", "want", "violations", "calls"),
    [
        (
            "preemption with violation of same pdb",
            [
                pod("p1.1", MID, MEDIUM, "node1", labels=FOO),
                pod("p1.2", MID, MEDIUM, "node1", labels=FOO),
            ],
            pdb(FOO, 1),
            ["p1.1", "p1.2"],
            1,
            3,
        ),
        (
            "preemption with violation of the pdb with pod whose eviction was processed, "
            "the victim doesn't belong to DisruptedPods",
            [
                pod("p1.1", MID, MEDIUM, "node1", labels=FOO),
                pod("p1.2", MID, MEDIUM, "node1", labels=FOO),
            ],
            pdb(FOO, 1, ["p2"]),
            ["p1.1", "p1.2"],
            1,
            3,
        ),
        (
            "preemption with violation of the pdb with pod whose eviction was processed, "
            "the victim belongs to DisruptedPods",
            [
                pod("p1.1", MID, MEDIUM, "node1", labels=FOO),
                pod("p1.2", MID, MEDIUM, "node1", labels=FOO),
            ],
            pdb(FOO, 1, ["p1.2"]),
            ["p1.1", "p1.2"],
            0,
            3,
        ),
        (
            "preemption with violation of the pdb with pod whose eviction was processed, "
            "the victim which belongs to DisruptedPods is treated as 'nonViolating'",
            [
                pod("p1.1", MID, MEDIUM, "node1", labels=FOO),
                pod("p1.2", MID, MEDIUM, "node1", labels=FOO),
                pod("p1.3", MID, MEDIUM, "node1", labels=FOO),
            ],
            pdb(FOO, 1, ["p1.3"]),
            ["p1.1", "p1.2", "p1.3"],
            1,
            4,
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_dry_run_preemption_pdb_cases(
    case: str,
    pods: list[Pod],
    budget: PodDisruptionBudget,
    want: list[str],
    violations: int,
    calls: int,
) -> None:
    """TestDryRunPreemption PDB cases: a veryLargeRes preemptor on a veryLargeRes node, so
    every pod goes; `violations` counts the victims taken beyond the budget."""
    victims, n_violations, status, n = select(pod("p", HIGH, VERY_LARGE), pods, [budget])
    assert status.is_success
    assert (victims, n_violations, n) == (want, violations, calls)


def test_violating_victims_are_reprieved_first() -> None:
    """SelectVictimsOnNode tries PDB-violating pods before the others, each group most
    important first: with room for one of two equal pods, the violating one is spared."""
    pods = [pod("free", MID, LARGE, "node1"), pod("guarded", MID, LARGE, "node1", labels=FOO)]
    victims, violations, status, _ = select(pod("p", HIGH, MEDIUM), pods, [pdb(FOO, 0)])
    assert status.is_success
    assert (victims, violations) == (["free"], 0)
