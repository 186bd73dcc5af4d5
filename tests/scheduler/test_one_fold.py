"""There is one fold of the log: the live scheduler's view is replay's view, object for object.

The scheduler changes its view only by applying the events it appends
(`ClusterView.apply`, as each joins the batch); replay applies the events it
reads with the same function. After every durable append of a mixed run
(pods of ours and of another scheduler, a gang that waits at Permit, a
Binding refused with 409 by a rival that bound first, a pod and a node
deleted, a PodDisruptionBudget whose status changes and one deleted while the
scheduler runs, a restart, a pruned base), the view the live process decides on
and the view rebuilt from the log up to that position must be equal.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from eventsched.audit.base import from_base
from eventsched.audit.counterfactual import counterfactual
from eventsched.audit.replayer import Replayer
from eventsched.cli.db import prune
from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.config.file import load_config
from eventsched.events import EventStore, upgrade
from eventsched.framework import CycleState, PluginRef
from eventsched.model import Pod
from eventsched.model.changes import BindOutcome
from eventsched.model.disruption import PodDisruptionBudget
from eventsched.model.objects import Namespace, Workload
from eventsched.model.selectors import LabelSelector
from eventsched.plugins import full_registry, in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from eventsched.view import ClusterView
from tests.scheduler.helpers import node, pod
from tests.scheduler.test_observations import RivalBindsTheSameNode
from tests.scheduler.test_scheduler import run_scheduler

ROOT = Path(__file__).resolve().parents[2]
PDB_KIND = "PodDisruptionBudget"


def gang(name: str, size: int, min_available: int) -> list[Pod]:
    return [
        replace(
            pod(f"{name}-{i}", cpu="250m"),
            labels={"scheduling.x-k8s.io/pod-group": name},
            annotations={"scheduling.x-k8s.io/min-available": str(min_available)},
        )
        for i in range(size)
    ]


WEB_BUDGET = PodDisruptionBudget("default", "web", LabelSelector.parse({}, "", ""))
OLD_BUDGET = PodDisruptionBudget("default", "old")


class BudgetsChangeWhileBinding(RivalBindsTheSameNode):
    """While the scheduler runs (at web-1's Binding), the disruption controller counts
    web-0 as disrupted (WEB_BUDGET's status changes) and OLD_BUDGET is deleted."""

    def bind(self, pod: Pod, node_name: str) -> BindOutcome:
        outcome = super().bind(pod, node_name)
        if pod.name == "web-1" and not getattr(self, "budgets_changed", False):
            self.budgets_changed = True
            self.put_object(
                replace(WEB_BUDGET, disruptions_allowed=1, disrupted_pods=frozenset({"web-0"}))
            )
            self.delete_object(OLD_BUDGET.key)
        return outcome


def run(store: EventStore, cluster: SimulatedCluster, views: dict[int, dict[str, Any]]) -> None:
    """One process: start, schedule until idle, stop; the view after each durable append."""
    config = load_config(str(ROOT / "examples" / "profiles" / "coscheduling.yaml"), full_registry())
    scheduler = Scheduler(
        store,
        cluster,
        config.profiles,
        full_registry(),
        SchedulerOptions(initial_backoff=0.05, max_backoff=0.1, group_commit_attempts=3),
    )

    def durable(position: int) -> None:
        # While a restarted process lists, its view is empty and what it gathers is
        # only what it listed so far; replay gathers from the view the log had. They
        # are one view again from the `listed` that closes the lists.
        if scheduler.view.relisting is None:
            views[position] = scheduler.view.to_state()

    scheduler.on_durable = durable
    scheduler.start()
    scheduler.run(until_idle=True)
    scheduler.stop()


def replayed_views(store: EventStore, positions: set[int]) -> dict[int, dict[str, Any]]:
    replayer = Replayer(full_registry(), *from_base(store))
    found = {}
    for event in store.read():
        replayer.fold(event)
        if event.position in positions:
            found[event.position] = replayer.view.to_state()
    return found


def test_the_live_view_is_the_replayed_view_after_every_append(store: EventStore) -> None:
    others = replace(pod("theirs", cpu="1"), scheduler_name="default-scheduler", node_name="b")
    cluster = BudgetsChangeWhileBinding(
        [node("a", cpu="2"), node("b", cpu="4"), node("c", cpu="1")],
        [pod("web-0"), pod("web-1"), pod("contested"), others, *gang("train", 3, 3)],
    )
    cluster.put_object(Namespace("team", {"tier": "gold"}))
    cluster.put_object(Workload("ReplicaSet", "default", "web", LabelSelector.parse({}, "", "")))
    cluster.put_object(WEB_BUDGET)
    cluster.put_object(OLD_BUDGET)
    views: dict[int, dict[str, Any]] = {}
    run(store, cluster, views)
    budgets = [
        [(o["name"], o["disruptionsAllowed"]) for o in state["objects"] if o["kind"] == PDB_KIND]
        for state in views.values()
    ]
    assert [("old", 0), ("web", 0)] in [sorted(b) for b in budgets]
    assert [("web", 1)] in budgets, "the status change and the deletion are folded live"
    (removed,) = store.read(kinds=["object_removed"])
    assert removed.data == OLD_BUDGET.to_record()
    # Meanwhile: a node goes, a bound pod goes, a pod that fits nowhere comes; a
    # namespace is relabelled, a controller goes, a Service comes.
    cluster.put_object(Namespace("team", {"tier": "silver"}))
    cluster.delete_object("ReplicaSet/default/web")
    cluster.put_object(Workload("Service", "default", "web", LabelSelector.parse({}, "", "")))
    cluster.remove_node("c")
    cluster.delete_pod("default/web-0")
    cluster.add_pod(pod("huge", cpu="16"))
    cluster.add_pod(pod("web-2"))
    run(store, cluster, views)
    assert len(views) >= 6
    assert any(
        p["assumed"] and p["finished"] for state in views.values() for p in state["placements"]
    ), "a pod bound by us and not observed again stays as its `bound` left it"
    last = views[max(views)]["objects"]
    assert {o["kind"]: o.get("labels") for o in last} == {
        "Namespace": {"tier": "silver"},
        "Service": None,
        PDB_KIND: None,
    }
    assert [o for o in last if o["kind"] == PDB_KIND] == [
        {**WEB_BUDGET.to_record(), "disruptionsAllowed": 1, "disruptedPods": ["web-0"]}
    ]
    replayed = replayed_views(store, set(views))
    for position, live in views.items():
        assert replayed[position] == live, f"views differ at log position {position}"


def test_a_pruned_base_loads_into_the_same_view(tmp_path: Path) -> None:
    # SQLite: it prunes to the second, where PostgreSQL drops whole past days
    # (tests/audit/test_prune.py prunes a backdated log on both).
    url = f"sqlite:///{tmp_path / 'events.db'}"
    upgrade(url)
    with EventStore.connect(url) as store:
        pruned_base_is_the_view(store)


def pruned_base_is_the_view(store: EventStore) -> None:
    cluster = SimulatedCluster([node("a"), node("b")], [pod(f"p{i}") for i in range(5)])
    cluster.put_object(replace(WEB_BUDGET, disruptions_allowed=2))
    views: dict[int, dict[str, Any]] = {}
    run(store, cluster, views)
    pruned = prune(store, datetime.now(UTC) + timedelta(seconds=1))
    assert pruned is not None
    cut = pruned.plan.position  # the newest batch is kept: the cut is an earlier append
    view, _ = from_base(store)
    assert view.to_state() == views[cut]
    assert view.table.objects.disruption_budgets() == (replace(WEB_BUDGET, disruptions_allowed=2),)
    last = max(views)
    assert ClusterView.from_state(views[last]).to_state() == views[last]


class RecordsAtPreBind:
    """A PreBind plugin that records what it saw: on a binder thread, while the loop
    schedules the next pods into another batch."""

    name = "RecordsAtPreBind"

    def __init__(self, args: object, handle: object, features: object = None) -> None:
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        time.sleep(0.002)  # let the loop start other attempts meanwhile
        state.record_input(self.name, "seen", {"pod": pod.uid, "attempt": state.attempt})


def test_a_binding_cycle_records_into_its_own_attempt(store: EventStore) -> None:
    # The sink travels with the attempt's CycleState: what a PreBind plugin records on
    # a binder thread lands on its own pod and attempt, never on the attempt the loop
    # is deciding at that moment (a handle-wide sink did that).
    registry = in_tree_registry()
    registry.register("RecordsAtPreBind", RecordsAtPreBind)
    base = default_profile()
    profile = replace(base, plugins={**base.plugins, "preBind": (PluginRef("RecordsAtPreBind"),)})
    cluster = SimulatedCluster([node("a", cpu="64")], [pod(f"p{i}") for i in range(30)])
    run_scheduler(
        store,
        cluster,
        profiles=[profile],
        registry=registry,
        group_commit_attempts=1,
        binder_workers=4,
    )
    seen = [e for e in store.read(kinds=["input_recorded"]) if e.plugin == "RecordsAtPreBind"]
    assert len(seen) == 30
    for event in seen:
        assert event.uid == event.data["value"]["pod"]
        assert event.attempt == event.data["value"]["attempt"]


def test_counterfactual_keeps_its_own_placements_across_a_restart(store: EventStore) -> None:
    # Four pods fill four one-CPU nodes; a restarted process then sees a fifth that fits
    # nowhere. The restart starts an empty view, and the pods it lists again are ours:
    # the counterfactual places them itself, so it must keep where it put them, or the
    # fifth pod would find room in the replay that it never had.
    nodes = [node(f"n{i}", cpu="1") for i in range(4)]
    cluster = SimulatedCluster(nodes, [pod(f"p{i}", cpu="800m") for i in range(4)])
    run_scheduler(store, cluster)
    cluster.add_pod(pod("late", cpu="800m"))
    run_scheduler(store, cluster)
    assert [e.name for e in store.read(kinds=["unschedulable"])] == ["late"]
    report = counterfactual(store, in_tree_registry(), [default_profile()])
    assert report.became_schedulable() == [] and report.moved() == []
