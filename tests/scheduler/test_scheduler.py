"""The scheduling loop end to end: simulated cluster, real plugins, the log on a real database."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import EventStore, EventStoreError, identity_of, rebuild
from eventsched.events.record import EventRecord
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.scheduler.helpers import (
    node,
    pod,
    profile_with,
    registry_with_test_plugins,
    started_scheduler,
)


def run_scheduler(store: EventStore, cluster: SimulatedCluster, **kw: object) -> Scheduler:
    scheduler = Scheduler(
        store,
        cluster,
        kw.pop("profiles", [default_profile()]),  # type: ignore[arg-type]
        kw.pop("registry", in_tree_registry()),  # type: ignore[arg-type]
        SchedulerOptions(initial_backoff=0.05, max_backoff=0.1, **kw),  # type: ignore[arg-type]
    )
    scheduler.start()
    scheduler.run(until_idle=True)
    scheduler.stop()
    return scheduler


def bound_nodes(cluster: SimulatedCluster) -> dict[str, str]:
    return {p.key: p.node_name for p in cluster.list_pods() if p.node_name}


def test_pods_are_bound_and_every_decision_precedes_its_binding(store: EventStore) -> None:
    cluster = SimulatedCluster(
        [node("small", cpu="1"), node("big", cpu="8")],
        [pod(f"web-{i}", cpu="500m") for i in range(6)],
    )
    scheduler = run_scheduler(store, cluster)
    placed = bound_nodes(cluster)
    assert len(placed) == 6
    assert Counter(placed.values())["small"] <= 2  # 1 cpu fits two 500m pods
    events = list(store.read())
    assert [e.position for e in events] == list(range(1, len(events) + 1))
    for key, node_name in placed.items():
        ns, name = key.split("/")
        kinds = [e.kind for e in events if e.namespace == ns and e.name == name]
        assert (
            kinds.index("selected")
            < kinds.index("reserved")
            < kinds.index("permitted")
            < kinds.index("bound")
        )
        bound = next(e for e in events if e.kind == "bound" and e.name == name)
        # The identity is namespace/name, which the columns say: not written again.
        assert bound.node == node_name and "identity" not in bound.data
        assert identity_of(bound) == key
    scheduled = [e for e in cluster.events if e.reason == "Scheduled"]
    assert len(scheduled) == 6
    assert scheduled[0].message.startswith("Successfully assigned default/web-")
    assert scheduler.stats.bound == 6


def test_unschedulable_pod_gets_kube_schedulers_message_event_and_condition(
    store: EventStore,
) -> None:
    cluster = SimulatedCluster(
        [
            node("a", cpu="2"),
            node(
                "b", cpu="2", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
            ),
        ],
        [pod("huge", cpu="3")],
    )
    run_scheduler(store, cluster)
    message = (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
        "{dedicated: gpu}. preemption: 0/2 nodes are available: 1 No preemption victims "
        "found for incoming pod, 1 Preemption is not helpful for scheduling.."
    )
    failed = [e for e in store.read(kinds=["unschedulable"])]
    assert failed and failed[-1].data["message"] == message
    assert set(failed[-1].data["plugins"]) == {"NodeResourcesFit", "TaintToleration"}
    warning = [e for e in cluster.events if e.reason == "FailedScheduling"]
    assert warning and warning[-1].type == "Warning" and warning[-1].message == message
    condition = cluster.conditions["default/huge"]
    assert condition["type"] == "PodScheduled" and condition["status"] == "False"
    assert condition["reason"] == "Unschedulable" and condition["message"] == message


def test_bind_error_is_logged_unreserved_and_retried(store: EventStore) -> None:
    cluster = SimulatedCluster([node("a")], [pod("p")])
    cluster.fail_next_binds(500, 1, "etcdserver: request timed out")
    scheduler = run_scheduler(store, cluster)
    assert bound_nodes(cluster) == {"default/p": "a"}
    kinds = [e.kind for e in store.read_pod("default", "p")]
    assert kinds.count("attempt_started") == 2
    failed = next(store.read(kinds=["bind_failed"]))
    assert failed.data["code"] == 500 and "request timed out" in failed.data["reason"]
    assert kinds.index("bind_failed") < kinds.index("unreserved") < kinds.index("bound")
    # PreBind succeeded before the failed Bind, and says so; the retry's `bound` says it alone.
    assert kinds.index("prebound") < kinds.index("bind_failed")
    assert kinds.count("prebound") == 1
    assert scheduler.stats.bind_failures == 1
    assert not rebuild(store).open_reservations


def test_conflict_409_on_a_pod_still_pending_is_requeued(store: EventStore) -> None:
    """kube-scheduler's failure handler requeues unless the informer shows the pod assigned or gone."""
    cluster = SimulatedCluster([node("a")], [pod("p")])
    cluster.fail_next_binds(
        409, 1, 'Operation cannot be fulfilled on pods/binding "p": the object has been modified'
    )
    run_scheduler(store, cluster)
    kinds = [e.kind for e in store.read_pod("default", "p")]
    assert kinds.count("attempt_started") == 2
    assert kinds.index("bind_failed") < kinds.index("requeued") < kinds.index("bound")
    assert bound_nodes(cluster) == {"default/p": "a"}
    failed = [e for e in cluster.events if e.reason == "FailedScheduling"]
    assert [e.message for e in failed] == [
        'running Bind plugin "DefaultBinder": Operation cannot be fulfilled on pods/binding "p": '
        "the object has been modified"
    ]
    assert cluster.conditions["default/p"]["status"] == "True"  # bound on the retry


def test_binding_404_drops_the_pod(store: EventStore) -> None:
    cluster = SimulatedCluster([node("a")], [pod("p")])
    cluster.fail_next_binds(404, 1, 'pods "p" not found')
    run_scheduler(store, cluster)
    kinds = [e.kind for e in store.read_pod("default", "p")]
    assert kinds.count("attempt_started") == 1 and "bind_failed" in kinds
    assert "requeued" not in kinds and "bound" not in kinds


def test_failed_prebind_unreserves_with_the_same_cycle_state(store: EventStore) -> None:
    registry = registry_with_test_plugins()
    profile = profile_with({"reserve": ("FailingPreBind",), "preBind": ("FailingPreBind",)})
    cluster = SimulatedCluster([node("a", cpu="1")], [pod("p", cpu="1")])
    scheduler = Scheduler(
        store,
        cluster,
        [profile],
        registry,
        SchedulerOptions(initial_backoff=0.05, max_backoff=0.05),
    )
    scheduler.start()
    plugin = scheduler.frameworks["eventsched"].instances["FailingPreBind"]
    for _ in range(3):
        scheduler.schedule_one()
        scheduler._wait_for_inbox()  # the binding cycle's report
        scheduler._flush()
    scheduler.stop()
    assert plugin.reserved and plugin.unreserved == plugin.reserved  # type: ignore[attr-defined]
    assert not bound_nodes(cluster)
    # The node's room was given back each time: usage is zero again.
    assert int(scheduler.cache.table.requested[0, 0]) == 0
    failed = next(store.read(kinds=["bind_failed"]))
    assert "volume did not attach" in failed.data["reason"]


class FlakyStore(EventStore):
    """A real store whose appends fail while `down` is set, as when the database is unreachable."""

    down = False

    def append_stored(self, records: list[EventRecord]):  # type: ignore[no-untyped-def,override]
        if self.down and any(r.kind == "attempt_started" for r in records):
            raise EventStoreError("database is down (test)")
        return super().append_stored(records)


def test_no_pod_is_bound_while_its_decision_cannot_be_logged(db_url: str) -> None:
    store = FlakyStore.connect(db_url)
    cluster = SimulatedCluster([node("a")], [pod("p")])
    scheduler = Scheduler(
        store, cluster, [default_profile()], in_tree_registry(), SchedulerOptions()
    )
    scheduler.start()
    store.down = True
    scheduler.schedule_one()
    scheduler._flush()
    assert not bound_nodes(cluster), "bound although the decision was not durable"
    assert not scheduler.ready
    assert scheduler.cache.is_assumed(pod("p").uid), "the decision stays pending, not lost"
    store.down = False
    scheduler.run(until_idle=True)
    assert scheduler.ready
    scheduler.stop()
    assert bound_nodes(cluster) == {"default/p": "a"}
    kinds = [e.kind for e in store.read_pod("default", "p")]
    assert kinds.count("attempt_started") == 1 and kinds.count("bound") == 1
    store.close()


def test_projections_survive_a_restart_and_each_process_observes_what_it_lists_once(
    store: EventStore,
) -> None:
    nodes = [node("a"), node("b")]
    first = run_scheduler(store, SimulatedCluster(nodes, [pod(f"p{i}") for i in range(4)]))
    assert len(first.projections.first_placements) == 4
    assert rebuild(store) == first.projections
    observed_nodes = len(list(store.read(kinds=["node_observed"])))
    assert observed_nodes == 2
    # Same pods by name, new uids (recreated), same nodes: a new process lists them all;
    # the nodes are as the log last recorded them, so only `listed` names them again
    # (first placements carry over).
    again = [pod(f"p{i}", uid=f"second-{i}") for i in range(4)]
    second = run_scheduler(store, SimulatedCluster(nodes, again))
    assert len(list(store.read(kinds=["node_observed"]))) == observed_nodes
    assert len(list(store.read(kinds=["pod_observed"]))) == 8
    *_, listed = (e for e in store.read(kinds=["maintenance"]) if e.data["action"] == "listed")
    assert listed.data["nodes"] == ["a", "b"]
    assert sorted(listed.data["pods"]) == [f"second-{i}" for i in range(4)]
    assert second.projections.first_placements == first.projections.first_placements
    assert rebuild(store) == second.projections


def test_gated_pod_waits_until_its_gates_are_removed(store: EventStore) -> None:
    gated = replace(pod("gated"), scheduling_gates=("example.com/quota",))
    cluster = SimulatedCluster([node("a")], [gated])
    scheduler = Scheduler(
        store, cluster, [default_profile()], in_tree_registry(), SchedulerOptions()
    )
    scheduler.start()
    scheduler.run(until_idle=True)
    assert not bound_nodes(cluster)
    queued = next(store.read(kinds=["queued"]))
    assert queued.data["queue"] == "gated"
    cluster.update_pod(replace(gated, scheduling_gates=()))
    scheduler.run(until_idle=True)
    scheduler.stop()
    assert bound_nodes(cluster) == {"default/gated": "a"}
    # Its entry into the queue, once ungated, is in the log between the observation
    # without gates and its attempt.
    kinds = [(e.kind, e.data.get("from")) for e in store.read_pod("default", "gated")]
    moved = kinds.index(("requeued", "gated"))
    assert kinds[moved - 1][0] == "pod_observed"
    assert kinds[moved + 1][0] == "attempt_started"
    (requeued,) = store.read(kinds=["requeued"])
    assert requeued.data == {"from": "gated", "to": "active", "event": "PodUpdate"}


def test_events_appended_by_another_writer_are_folded_not_skipped(store: EventStore) -> None:
    """A `sticky forget` written by another process while this one runs stays forgotten."""
    cluster = SimulatedCluster([node("n1")], [pod("a", cpu="100m")])
    scheduler = started_scheduler(store, cluster)
    scheduler.run(until_idle=True)
    assert "default/a" in scheduler.projections.first_placements
    store.append(
        [
            EventRecord(
                "maintenance",
                data={"action": "sticky_forget", "identity": "default/a"},
            )
        ]
    )
    cluster.add_pod(pod("b", cpu="100m"))
    scheduler.run(until_idle=True)
    scheduler.stop()
    assert "default/a" not in scheduler.projections.first_placements
    assert "default/b" in scheduler.projections.first_placements
    assert "default/a" not in rebuild(store).first_placements


def test_abandoning_appends_the_decisions_made_and_binds_none_of_them(store: EventStore) -> None:
    """The lease is lost (Scheduler.abandon): a decision made but not yet appended is
    appended, its binding cycle never starts (the next leader settles the open
    reservation), and the scheduler is not ready."""
    cluster = SimulatedCluster([node("a")], [pod("p")])
    scheduler = Scheduler(store, cluster, [default_profile()], in_tree_registry())
    scheduler.start()
    while not scheduler.schedule_one():  # the pod arrives through the inbox
        scheduler._drain_inbox()
    assert [e.kind for e in store.read(kinds=["reserved"])] == []  # not appended yet
    scheduler.abandon()
    assert not scheduler.ready
    assert [e.name for e in store.read(kinds=["reserved", "permitted"])] == ["p", "p"]
    assert list(store.read(kinds=["bound"])) == []
    assert scheduler.bindings == 0
    assert {p.name: p.node_name for p in cluster.list_pods()} == {"p": ""}
