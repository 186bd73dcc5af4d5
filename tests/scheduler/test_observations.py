"""What a pod observation costs the log: only changes a decision can read are written."""

from __future__ import annotations

from dataclasses import replace

from eventsched.audit.replay import Selection, replay
from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import (
    EventRecord,
    EventStore,
    is_listed,
    is_process_start,
    scheduler_started,
)
from eventsched.framework import PluginRef
from eventsched.model import Pod
from eventsched.model.changes import BindOutcome
from eventsched.plugins import full_registry, in_tree_registry
from eventsched.view import ClusterView
from tests.scheduler.helpers import node, pod
from tests.scheduler.test_scheduler import run_scheduler


def observed(store: EventStore, name: str) -> list[dict]:
    return [dict(e.data) for e in store.read_pod("default", name) if e.kind == "pod_observed"]


def test_the_pod_our_binding_placed_is_not_observed_again(store: EventStore) -> None:
    cluster = SimulatedCluster([node("a"), node("b")], [pod(f"p{i}") for i in range(4)])
    run_scheduler(store, cluster)
    for i in range(4):
        # Pending, then bound: the informer's view of the bound pod differs only in
        # nodeName, which `reserved` + `bound` already say.
        records = observed(store, f"p{i}")
        assert len(records) == 1 and "nodeName" not in records[0]
    report = replay(store, in_tree_registry(), Selection())
    assert report.reproduced == report.attempts == 4


def test_a_later_change_of_a_bound_pod_is_observed_and_replay_places_it(
    store: EventStore,
) -> None:
    cluster = SimulatedCluster([node("a", cpu="1")], [pod("first")])
    assert run_scheduler(store, cluster).stats.bound == 1
    bound = cluster.get_pod("default/first")
    assert bound is not None and bound.node_name == "a"
    # The pod starts running (not logged: phase is not part of a decision), then its
    # labels change (logged, with its node).
    cluster.update_pod(replace(bound, labels={"tier": "web"}))
    cluster.add_pod(pod("second", cpu="800m"))  # cannot fit beside `first` (500m of 1 cpu)
    scheduler = run_scheduler(store, cluster)
    records = observed(store, "first")
    assert len(records) == 2 and records[1]["nodeName"] == "a"
    assert records[1]["labels"] == {"tier": "web"}
    assert scheduler.last_failure
    report = replay(store, in_tree_registry(), Selection())
    assert report.reproduced == report.attempts == 2


def test_running_is_not_a_change_but_terminal_is() -> None:
    base = {
        "metadata": {"name": "p", "namespace": "default", "uid": "u"},
        "spec": {"containers": [{"name": "c"}], "nodeName": "a"},
    }
    pending = Pod.from_manifest({**base, "status": {"phase": "Pending"}})
    running = Pod.from_manifest({**base, "status": {"phase": "Running"}})
    done = Pod.from_manifest({**base, "status": {"phase": "Succeeded"}})
    assert pending.to_record() == running.to_record()
    assert done.to_record()["terminal"] is True and done.is_terminal
    assert Pod.from_record(done.to_record()) == done
    # A log written before `terminal` kept the phase.
    old = {**pending.to_record(), "phase": "Failed"}
    assert Pod.from_record(old).is_terminal


class RivalBindsTheSameNode(SimulatedCluster):
    """Another binder's Binding to the node we chose lands first; ours gets 409."""

    def bind(self, pod: Pod, node_name: str) -> BindOutcome:
        if pod.name == "contested" and not getattr(self, "contested", False):
            self.contested = True
            super().bind(pod, node_name)
            return BindOutcome(False, 409, "the pod is already bound", final=True)
        return super().bind(pod, node_name)


def test_a_pod_seen_on_our_node_before_our_binding_fails_is_observed(store: EventStore) -> None:
    cluster = RivalBindsTheSameNode([node("a", cpu="1")], [pod("contested")])
    run_scheduler(store, cluster)
    kinds = [e.kind for e in store.read_pod("default", "contested")]
    assert "bind_failed" in kinds and "bound" not in kinds
    records = observed(store, "contested")
    assert records[-1]["nodeName"] == "a"
    # The next pod's decision counts `contested` on node a, live and in replay.
    cluster.add_pod(pod("next", cpu="800m"))
    scheduler = run_scheduler(store, cluster)
    assert "default/next" in {p.key for p, _ in scheduler.last_failure.values()}
    report = replay(store, in_tree_registry(), Selection())
    assert report.mismatches == [] and report.reproduced == report.attempts


def test_a_restarted_scheduler_logs_only_what_changed_of_what_it_lists(
    store: EventStore,
) -> None:
    # Node b is deleted and node c added while no scheduler runs. The restarted process
    # lists everything again; it logs only what differs from the log's last observation
    # (c, the new pod), and `listed` names all it listed, in list order (the node
    # table's row order, which decisions depend on), so replay's view is its own: b is
    # simply not in it, without a removal the process never saw.
    cluster = SimulatedCluster([node("a", cpu="1"), node("b", cpu="8")], [pod("first")])
    run_scheduler(store, cluster)
    cluster.remove_node("b")
    cluster.add_node(node("c", cpu="1"))
    cluster.add_pod(pod("big", cpu="2"))
    scheduler = run_scheduler(store, cluster)
    starts = [e for e in store.read(kinds=["maintenance"]) if is_process_start(e.kind, e.data)]
    assert [e.data["view"] for e in starts] == ["listed", "listed"]
    after = [e for e in store.read(after=starts[-1].position)]
    assert [e.node for e in after if e.kind == "node_observed"] == ["c"]
    assert [e.name for e in after if e.kind == "pod_observed"] == ["big"]
    assert not [e for e in store.read(kinds=["node_removed"])]
    (listed,) = [e for e in after if is_listed(e.kind, e.data)]
    assert listed.data["nodes"] == ["a", "c"]
    first = scheduler.view.pods[listed.data["pods"][0]]
    # `first` was bound to b by our `bound`; its last observation came before that.
    assert first.name == "first" and listed.data["placed"] == {first.uid: "b"}
    assert first.node_name == "b"
    assert "default/big" in {p.key for p, _ in scheduler.last_failure.values()}
    assert scheduler.view.table.names == ["a", "c"]
    report = replay(store, in_tree_registry(), Selection())
    assert report.mismatches == [] and report.reproduced == report.attempts == 2


def test_a_start_in_an_older_log_that_logged_every_object_still_replays(
    store: EventStore,
) -> None:
    # Logs written before `listed` said `view: empty` and observed everything again.
    cluster = SimulatedCluster([node("a", cpu="1")], [pod("first")])
    run_scheduler(store, cluster)
    view = ClusterView()
    for event in store.read():
        view.apply(event)
    assert view.table.names == ["a"] and view.relisting is None
    old = {"action": "scheduler_started", "instance": "old", "view": "empty"}
    view.apply(EventRecord(kind="maintenance", data=old))
    assert view.table.names == [] and not view.pods and view.relisting is None
    view.apply(EventRecord(kind="maintenance", data=scheduler_started("new")))
    assert view.relisting is not None and not view.relisting.nodes


def test_only_the_annotations_a_configured_plugin_reads_are_kept(store: EventStore) -> None:
    # ImportanceSort reads eventsched.io/importance; no plugin of this profile reads
    # kubectl's last-applied-configuration (or any other annotation).
    base = default_profile()
    importance = replace(
        base, plugins={**base.plugins, "queueSort": (PluginRef("ImportanceSort"),)}
    )
    manifest = pod("annotated")
    annotated = replace(
        manifest,
        annotations={
            "eventsched.io/importance": "7",
            "kubectl.kubernetes.io/last-applied-configuration": "{" + "x" * 5000 + "}",
        },
    )
    cluster = SimulatedCluster([node("a")], [annotated])
    run_scheduler(store, cluster, profiles=[importance], registry=full_registry())
    (record,) = observed(store, "annotated")
    assert record["annotations"] == {"eventsched.io/importance": "7"}
    report = replay(store, full_registry(), Selection())
    assert report.reproduced == report.attempts == 1


def test_the_default_profile_keeps_no_annotation(store: EventStore) -> None:
    annotated = replace(pod("plain"), annotations={"team": "payments"})
    run_scheduler(store, SimulatedCluster([node("a")], [annotated]))
    (record,) = observed(store, "plain")
    assert "annotations" not in record
