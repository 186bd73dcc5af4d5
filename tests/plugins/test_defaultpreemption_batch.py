"""The batch dry run (batch.py) gives exactly what the node-by-node dry run gives.

Random clusters (pods of random priorities and requests, some PDBs, some tainted
or unschedulable nodes, pods nominated to some nodes) run through the default
profile's own Filter plugins: PreFilter for the preemptor, then both dry runs
over the same nodes, offset and number of candidates; candidates (victims and
PDB violations), statuses and the nodes visited must be equal.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventsched.config import default_profile
from eventsched.framework import CycleState, Framework, Handle
from eventsched.framework.nominatedpass import NominatedCount
from eventsched.framework.preemption.candidates import DryRunResult, dry_run_preemption
from eventsched.model import Node, NodeTable, Pod
from eventsched.model.disruption import PodDisruptionBudget
from eventsched.plugins import in_tree_registry
from eventsched.plugins.defaultpreemption.batch import batch_dry_run
from eventsched.plugins.defaultpreemption.plugin import NodePods
from eventsched.plugins.defaultpreemption.reprieve import ReprieveOrders
from tests.plugins.preemption import pod

CPU = ("100m", "300m", "500m", "1", "2")


def make_node(name: str, cpu: str, tainted: bool, unschedulable: bool) -> Node:
    taints = [{"key": "gpu", "value": "x", "effect": "NoSchedule"}] if tainted else []
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {"taints": taints, "unschedulable": unschedulable},
            "status": {"allocatable": {"cpu": cpu, "memory": "4Gi", "pods": "5"}},
        }
    )


@st.composite
def clusters(draw: Any) -> tuple[NodeTable, Pod, list[PodDisruptionBudget]]:
    table = NodeTable()
    n = draw(st.integers(1, 12))
    for i in range(n):
        table.upsert_node(
            make_node(
                f"n{i}",
                draw(st.sampled_from(("2", "3", "4"))),
                draw(st.booleans()) and draw(st.booleans()),
                draw(st.integers(0, 9)) == 0,
            )
        )
    count = 0
    for i in range(n):
        for _ in range(draw(st.integers(0, 5))):
            count += 1
            placed = pod(
                f"p{count}",
                draw(st.sampled_from((-5, 0, 0, 10, 50, 200))),
                {"cpu": draw(st.sampled_from(CPU)), "memory": "100Mi"},
                node=f"n{i}",
                start=f"2026-11-24T08:{draw(st.integers(0, 59)):02d}:00Z",
                labels={"app": draw(st.sampled_from(("a", "b")))},
            )
            table.add_pod(placed, f"n{i}")
    for k in range(draw(st.integers(0, 2))):
        nominee = pod(f"nom{k}", draw(st.sampled_from((0, 100, 500))), {"cpu": "500m"})
        table.nominated.nominate(nominee, f"n{draw(st.integers(0, n - 1))}")
    pdbs = [
        PodDisruptionBudget.from_manifest(
            {
                "metadata": {"namespace": "default", "name": f"pdb-{app}"},
                "spec": {"selector": {"matchLabels": {"app": app}}},
                "status": {"disruptionsAllowed": draw(st.integers(0, 2))},
            }
        )
        for app in ("a", "b")
        if draw(st.booleans())
    ]
    preemptor = pod(
        "preemptor", 100, {"cpu": draw(st.sampled_from(("500m", "1", "2", "3"))), "memory": "100Mi"}
    )
    return table, preemptor, pdbs


def key(result: DryRunResult) -> tuple[Any, ...]:
    return (
        [(c.node, [v.uid for v in c.victims], c.num_pdb_violations) for c in result.candidates],
        {n: (s.code, s.reasons, s.plugin) for n, s in result.statuses.items()},
        list(result.visited),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.integers(0, 11), st.integers(1, 12))
def test_the_batch_dry_run_is_the_node_by_node_dry_run(
    cluster: tuple[NodeTable, Pod, list[PodDisruptionBudget]], offset: int, wanted: int
) -> None:
    table, preemptor, pdbs = cluster
    fw = Framework(default_profile(), in_tree_registry(), Handle(table))
    state = CycleState("attempt", 1)
    _, status, _ = fw.run_pre_filter(state, preemptor, table)
    assert status.is_success
    assert fw.judged_by_requested_only(state)
    nodes = table.names
    offset %= len(nodes)

    def fits_on(name: str) -> Any:
        return lambda removed: fw.run_filter_with_nominated_pods(
            state, preemptor, table, name, removed
        )

    before = table.requested.copy()
    one_by_one = dry_run_preemption(
        preemptor, nodes, NodePods(table), pdbs, offset, wanted, fits_on
    )
    batched = batch_dry_run(fw, state, preemptor, table, nodes, pdbs, offset, wanted)
    assert key(batched) == key(one_by_one)
    assert (table.requested == before).all()  # the table is as it was


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.data())
def test_reprieve_orders_kept_between_runs_follow_the_table(
    cluster: tuple[NodeTable, Pod, list[PodDisruptionBudget]], data: st.DataObject
) -> None:
    """One ReprieveOrders across dry runs, with pods placed and removed, a budget and
    the preemptor's priority changed in between: every run is the node-by-node run."""
    table, preemptor, pdbs = cluster
    fw = Framework(default_profile(), in_tree_registry(), Handle(table))
    orders = ReprieveOrders()
    for step in range(4):
        state = CycleState("attempt", step)
        assert fw.run_pre_filter(state, preemptor, table)[1].is_success
        nodes = table.names

        def fits_on(name: str, state: CycleState = state, preemptor: Pod = preemptor) -> Any:
            return lambda removed: fw.run_filter_with_nominated_pods(
                state, preemptor, table, name, removed
            )

        want = dry_run_preemption(preemptor, nodes, NodePods(table), pdbs, 0, 3, fits_on)
        got = batch_dry_run(fw, state, preemptor, table, nodes, pdbs, 0, 3, orders)
        assert key(got) == key(want)
        change = data.draw(st.sampled_from(("place", "remove", "budget", "priority")))
        node = data.draw(st.sampled_from(nodes))
        if change == "place":
            placed = pod(f"new{step}", data.draw(st.sampled_from((0, 50))), {"cpu": "1"})
            table.add_pod(placed, node)
        elif change == "remove" and table.pods[table.index[node]]:
            table.remove_pod(next(iter(table.pods[table.index[node]])), node)
        elif change == "budget":
            pdbs = (
                pdbs[1:]
                if pdbs
                else [
                    PodDisruptionBudget.from_manifest(
                        {
                            "metadata": {"namespace": "default", "name": "pdb-all"},
                            "spec": {"selector": {"matchLabels": {"app": "a"}}},
                            "status": {"disruptionsAllowed": 0},
                        }
                    )
                ]
            )
        else:
            preemptor = pod("preemptor", data.draw(st.sampled_from((20, 100, 300))), {"cpu": "2"})


def with_host_port(pod: Pod) -> Pod:
    """`pod` with its container asking for host port 8080."""
    record = pod.to_record()
    record["hostPorts"] = [{"port": 8080, "protocol": "TCP", "hostIP": "0.0.0.0"}]
    return Pod.from_record(record)


def test_a_pod_with_host_ports_is_not_judged_by_requested_only_filters() -> None:
    table = NodeTable([make_node("n0", "2", False, False)])
    fw = Framework(default_profile(), in_tree_registry(), Handle(table))
    state = CycleState("attempt", 1)
    ported = Pod.from_manifest(
        {
            "metadata": {"name": "web", "namespace": "default", "uid": "web"},
            "spec": {
                "priority": 100,
                "containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 80}]}],
            },
        }
    )
    fw.run_pre_filter(state, ported, table)
    assert not fw.judged_by_requested_only(state)


@pytest.mark.parametrize("wanted", [1, 3])
def test_batch_stops_where_the_node_by_node_run_stops(wanted: int) -> None:
    table = NodeTable([make_node(f"n{i}", "2", False, False) for i in range(6)])
    for i in range(6):
        table.add_pod(pod(f"low{i}", 0, {"cpu": "2"}, node=f"n{i}"), f"n{i}")
    preemptor = pod("preemptor", 100, {"cpu": "1"})
    fw = Framework(default_profile(), in_tree_registry(), Handle(table))
    state = CycleState("attempt", 1)
    fw.run_pre_filter(state, preemptor, table)
    result = batch_dry_run(fw, state, preemptor, table, table.names, [], 2, wanted)
    assert list(result.visited) == [f"n{(2 + i) % 6}" for i in range(wanted)]
    assert [c.node for c in result.candidates] == list(result.visited)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.booleans())
def test_the_filter_pass_counts_nominated_pods_as_the_one_node_path_does(
    cluster: tuple[NodeTable, Pod, list[PodDisruptionBudget]], ported: bool
) -> None:
    """NominatedCount's pass, batch (requested-only Filters) or row by row (a host port
    brings NodePorts in): each row's verdict and status is
    `RunFilterPluginsWithNominatedPods`' on that row."""
    table, incoming, _ = cluster
    if ported:
        incoming = with_host_port(incoming)
    fw = Framework(default_profile(), in_tree_registry(), Handle(table))
    state = CycleState("attempt", 1)
    fw.run_pre_filter(state, incoming, table)
    assert fw.judged_by_requested_only(state) is not ported
    rows = np.arange(len(table), dtype=np.intp)
    passed, rejections, status = NominatedCount(fw, state, incoming, table).filter(rows)
    assert status.is_success
    got = {int(r): None for r in passed}
    for rejection in rejections:
        for row, found in rejection.status_of():
            got[row] = (found.code, found.reasons, found.plugin)
    want = {}
    for row, name in enumerate(table.names):
        one = fw.run_filter_with_nominated_pods(state, incoming, table, name)
        want[row] = None if one.is_success else (one.code, one.reasons, one.plugin)
    assert got == want
