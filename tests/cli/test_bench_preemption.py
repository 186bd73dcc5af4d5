"""The preemption workloads of `eventsched bench --workload` and the churn op they need.

PreemptionBasic and PreemptionAsync as newer scheduler_perf configs define
them (`misc/performance-config.yaml`), their templates (pod-low-priority.yaml,
pod-high-priority.yaml) read as the scheduler reads any manifest, and the
`churn` op (eventsched/benchmarks/churn.py) run against a simulated cluster. The runs
that need preemption are skipped until DefaultPreemption is in the default
profile; they are small (10 nodes), never a measurement.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import eventsched.benchmarks.churn
import eventsched.benchmarks.workload_bench
import eventsched.benchmarks.workload_cluster
import eventsched.benchmarks.workloads
from eventsched.cli.main import main
from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import EventStore, upgrade
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions

MI = 2**20
WIRED = "DefaultPreemption" in default_profile().plugin_names()
needs_preemption = pytest.mark.skipif(
    not WIRED, reason="DefaultPreemption is not in the default profile yet"
)


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return eventsched.benchmarks.workload_bench


@pytest.fixture(scope="module")
def workloads(bench: ModuleType) -> ModuleType:
    return eventsched.benchmarks.workloads


@pytest.fixture(scope="module")
def churn(bench: ModuleType) -> ModuleType:
    return eventsched.benchmarks.churn


def test_counts_and_ops_are_upstreams(workloads: ModuleType) -> None:
    """misc/performance-config.yaml: PreemptionBasic 1000Nodes (no threshold), PreemptionAsync
    5000Nodes (threshold 570) with its churn op between the init and the measured pods."""
    basic = workloads.lookup("PreemptionBasic")
    assert workloads.size(basic) == workloads.Size(1000, 4000, 1000)
    assert (basic.variant, basic.threshold, basic.churn) == ("1000Nodes", None, None)
    assert [op.template for op in basic.init_ops] == ["pod-low-priority.yaml"]
    assert basic.measured.template == "pod-high-priority.yaml"
    assert basic.namespaces() == ("namespace-1", "namespace-2")
    # v1.28's 500Nodes doubled: four low-priority pods and one high-priority pod per node.
    assert workloads.size(basic, 500, 500) == workloads.Size(500, 2000, 500)
    # At 5,000 nodes the 1000Nodes variant times five: every node full of victims again.
    assert workloads.size(basic, nodes=5000) == workloads.Size(5000, 20000, 5000)

    async_ = workloads.lookup("PreemptionAsync")
    assert workloads.size(async_) == workloads.Size(5000, 20000, 5000)
    assert (async_.variant, async_.threshold) == ("5000Nodes", 570)
    assert async_.churn == workloads.Churn(
        "create", ("pod-high-priority.yaml",), 200, "namespace-2"
    )
    assert async_.measured == workloads.CreatePods("pod-default.yaml", "namespace-3")
    assert async_.namespaces() == ("namespace-1", "namespace-2", "namespace-3")
    assert {basic.plugins, async_.plugins} == {("DefaultPreemption",)}


def test_templates_read_as_upstream_wrote_them(bench: ModuleType, workloads: ModuleType) -> None:
    built = eventsched.benchmarks.workload_cluster.build(
        workloads.lookup("PreemptionBasic"), workloads.Size(5, 20, 5), "eventsched"
    )
    (low,) = built.init_batches
    assert len(low) == 20 and len(built.measured) == 5
    assert {(p.namespace, p.priority, p.requests["cpu"], p.requests["memory"]) for p in low} == {
        ("namespace-1", 0, 900, 500 * MI)
    }
    assert {
        (p.namespace, p.priority, p.requests["cpu"], p.requests["memory"]) for p in built.measured
    } == {("namespace-2", 10, 3000, 500 * MI)}
    assert built.pod_count == 25 and built.churn_namespace is None
    with pytest.raises(ValueError, match="no churn op"):
        built.churn_pod("pod-high-priority.yaml", 25)

    churned = eventsched.benchmarks.workload_cluster.build(
        workloads.lookup("PreemptionAsync"), workloads.Size(5, 20, 5), "eventsched"
    )
    pod = churned.churn_pod("pod-high-priority.yaml", churned.pod_count)
    assert (pod.key, pod.priority, pod.scheduler_name) == (
        "namespace-2/pod-00025",
        10,
        "eventsched",
    )
    with pytest.raises(ValueError, match="churn supports pods only"):
        churned.churn_pod("node-default.yaml", 26)


def _churner(bench: ModuleType, churn: ModuleType, op: Any) -> tuple[Any, SimulatedCluster]:
    workloads = eventsched.benchmarks.workloads
    built = eventsched.benchmarks.workload_cluster.build(
        replace(workloads.lookup("PreemptionAsync"), churn=op),
        workloads.Size(1, 0, 0),
        "eventsched",
    )
    sim = SimulatedCluster(built.nodes, objects=built.namespaces)
    return churn.Churner(sim, op, built.churn_pod, first_index=100), sim


def test_create_mode_creates_one_pod_per_tick_until_its_number(
    bench: ModuleType, churn: ModuleType, workloads: ModuleType
) -> None:
    op = workloads.Churn("create", ("pod-high-priority.yaml",), 20, "namespace-2", number=3)
    churner, sim = _churner(bench, churn, op)
    churner.start()
    assert churner.join(timeout=30), "the churn op did not end after its 3 ticks"
    assert (churner.ticks, churner.created, churner.deleted) == (3, 3, 0)
    assert sorted(p.key for p in sim.list_pods()) == [
        "namespace-2/pod-00100",
        "namespace-2/pod-00101",
        "namespace-2/pod-00102",
    ]


def test_recreate_mode_creates_then_deletes_each_slot_in_turn(
    bench: ModuleType, churn: ModuleType, workloads: ModuleType
) -> None:
    op = workloads.Churn("recreate", ("pod-high-priority.yaml",), 1000, "ns", number=2)
    churner, sim = _churner(bench, churn, op)
    keys = lambda: sorted(p.key for p in sim.list_pods())  # noqa: E731
    churner.tick()
    churner.tick()
    assert keys() == ["ns/pod-00100", "ns/pod-00101"]
    churner.tick()  # slot 0: delete
    assert keys() == ["ns/pod-00101"]
    sim.delete_pod("ns/pod-00101")  # gone before its slot's turn (a preemption victim, say)
    churner.tick()
    churner.tick()  # slot 0 again: create
    assert keys() == ["ns/pod-00102"]
    assert (churner.created, churner.deleted) == (3, 1)


def test_a_churn_op_upstream_would_refuse_is_refused(
    churn: ModuleType, workloads: ModuleType
) -> None:
    sim = SimulatedCluster()
    with pytest.raises(ValueError, match="not one of"):
        churn.Churner(sim, workloads.Churn("update", ("x",), 10, "ns"), lambda t, i: None, 0)
    with pytest.raises(ValueError, match="number >= 1"):
        churn.Churner(sim, workloads.Churn("recreate", ("x",), 10, "ns"), lambda t, i: None, 0)


def test_a_small_preemption_async_run_counts_only_the_measured_pods(
    bench: ModuleType, workloads: ModuleType, tmp_path: Path
) -> None:
    """With the churn ticking every 5 ms (at most 20 times), the result's bound pods are
    still only the measured ones (namespace-3), whatever the churn's pods did meanwhile.

    The churn's pods have the higher priority: one may preempt a measured pod, and
    when that pod was still between its Reserve and its Binding it is never bound
    (nor unschedulable). Such a pod must show as evicted without a bind.
    """
    workload = workloads.lookup("PreemptionAsync")
    fast = replace(workload, churn=replace(workload.churn, interval_ms=5, number=20))
    url = f"sqlite:///{tmp_path}/bench.db"
    result = bench.run(fast, url, nodes=10, pods=10)
    with EventStore.connect(url) as store:
        pods = {(e.namespace, e.name) for e in store.read(kinds=["pod_observed"])}
        bound = {e.name for e in store.read(kinds=["bound"]) if e.namespace == "namespace-3"}
        evicted = {e.name for e in store.read(kinds=["evicted"]) if e.namespace == "namespace-3"}
    measured = {name for namespace, name in pods if namespace == "namespace-3"}
    assert len(measured) == 10
    assert (result.bound, result.unschedulable, result.init_pods) == (len(bound), 0, 40)
    assert measured - bound <= evicted, "a measured pod neither bound nor preempted"
    assert Counter(namespace for namespace, _ in pods)["namespace-2"] <= result.churn_pods


@needs_preemption
def test_preemption_basic_binds_every_high_priority_pod_and_evicts_three_per_node(
    bench: ModuleType, tmp_path: Path
) -> None:
    """10 nodes, 40 pods of 900m (four fill a node's 4 CPUs), 10 pods of 3 CPUs at
    priority 10: each takes a node of its own and evicts three of the four, as
    SelectVictimsOnNode reprieves the one that still fits."""
    url = f"sqlite:///{tmp_path}/bench.db"
    result = bench.run("PreemptionBasic", url, nodes=10, pods=10)
    assert (result.bound, result.unschedulable, result.evicted) == (10, 0, 30)
    assert result.missing_plugins == []
    with EventStore.connect(url) as store:
        bound = [e for e in store.read(kinds=["bound"]) if e.namespace == "namespace-2"]
        evicted = list(store.read(kinds=["evicted"]))
        preempted = list(store.read(kinds=["preempted"]))
    assert len({e.node for e in bound}) == 10
    assert len(evicted) == 30 and {e.data["outcome"] for e in evicted} == {"deleted"}
    assert {e.namespace for e in evicted} == {"namespace-1"}
    victims = {v["uid"] for e in preempted for v in e.data["victims"]}
    assert victims == {e.uid for e in evicted}
    assert Counter(e.node for e in evicted) == Counter({e.node: 3 for e in bound})


@needs_preemption
def test_churned_high_priority_pods_preempt_on_a_running_scheduler(
    bench: ModuleType, churn: ModuleType, workloads: ModuleType, tmp_path: Path
) -> None:
    """PreemptionAsync's churn op against a scheduler that runs until the three pods it
    created are bound: each evicted three low-priority pods of its node."""
    workload = workloads.lookup("PreemptionAsync")
    op = replace(workload.churn, interval_ms=10, number=3)
    built = eventsched.benchmarks.workload_cluster.build(
        replace(workload, churn=op), workloads.Size(5, 20, 0), "eventsched"
    )
    store = EventStore.connect(f"sqlite:///{tmp_path}/churn.db", require_schema=False)
    upgrade(store.engine)
    sim = SimulatedCluster(built.nodes, objects=built.namespaces)
    scheduler = Scheduler(store, sim, [default_profile()], in_tree_registry(), SchedulerOptions())
    scheduler.start()
    for pod in built.init_batches[0]:
        sim.add_pod(pod)
    scheduler.run(until_idle=True)
    churner = churn.Churner(sim, op, built.churn_pod, first_index=built.pod_count)
    done = threading.Event()

    def churned_bound(_stats: object) -> None:
        if sum(1 for key, _ in sim.bindings if key.startswith("namespace-2/")) == 3:
            done.set()

    scheduler.on_progress = churned_bound
    timeout = threading.Timer(60, done.set)
    timeout.start()
    churner.start()
    try:
        scheduler.run(stop=done)
    finally:
        timeout.cancel()
        churner.stop()
        scheduler.stop()
        store.close()
    bound = {key: node for key, node in sim.bindings if key.startswith("namespace-2/")}
    assert len(bound) == 3, f"churned pods bound within 60 s: {bound}"
    low = Counter(p.node_name for p in sim.list_pods() if p.namespace == "namespace-1")
    assert sorted(low.values()) == [1, 1, 1, 4, 4]
    assert {node for node, count in low.items() if count == 1} == set(bound.values())


def test_list_names_the_preemption_workloads_and_the_churn(
    capsys: pytest.CaptureFixture[str],
) -> None:
    capsys.readouterr()
    assert main(["bench", "--workload", "list"]) == 0
    lines = {line.split(":")[0]: line for line in capsys.readouterr().out.splitlines()}
    assert lines["PreemptionBasic"].startswith(
        "PreemptionBasic: 1000 nodes, 4000 init + 1000 measured pods (1000Nodes; no upstream "
        "threshold): "
    )
    assert lines["PreemptionAsync"].startswith(
        "PreemptionAsync: 5000 nodes, 20000 init + 5000 measured pods (5000Nodes; upstream "
        "threshold 570 pods/s), churn: pod-high-priority.yaml every 200 ms (create): "
    )
