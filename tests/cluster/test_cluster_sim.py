"""SimulatedCluster: the Cluster protocol in memory, answering as the API server would."""

from __future__ import annotations

import random
import threading
from collections import Counter

import pytest

from eventsched.cluster import BindOutcome, ClusterChange, SimulatedCluster, generate_cluster
from eventsched.model import Node, Pod


def node(name: str) -> Node:
    return Node(name=name, allocatable={"cpu": 4000, "memory": 2**34, "pods": 110}, uid=name)


def pod(name: str, namespace: str = "default") -> Pod:
    return Pod(uid=f"uid-{namespace}-{name}", namespace=namespace, name=name)


class Recorder:
    """A callback that keeps every change, as the scheduler's observer would see them."""

    def __init__(self) -> None:
        self.changes: list[ClusterChange] = []
        self.lock = threading.Lock()

    def __call__(self, change: ClusterChange) -> None:
        with self.lock:
            self.changes.append(change)

    def kinds(self) -> list[tuple[str, str]]:
        return [(c.type, getattr(c.obj, "key", getattr(c.obj, "name", ""))) for c in self.changes]


@pytest.fixture
def cluster() -> SimulatedCluster:
    return SimulatedCluster([node("n1"), node("n2")], [pod("a"), pod("b"), pod("c", "shop")])


@pytest.fixture
def started(cluster: SimulatedCluster) -> tuple[SimulatedCluster, Recorder]:
    recorder = Recorder()
    cluster.start(recorder)
    recorder.changes.clear()
    return cluster, recorder


def test_start_delivers_nodes_then_pods_synchronously(cluster: SimulatedCluster) -> None:
    recorder = Recorder()
    assert not cluster.wait_synced(timeout=0)
    cluster.start(recorder)
    assert recorder.kinds() == [
        ("ADDED", "n1"),
        ("ADDED", "n2"),
        ("ADDED", "default/a"),
        ("ADDED", "default/b"),
        ("ADDED", "shop/c"),
    ]
    assert cluster.wait_synced()
    assert cluster.wait_synced(timeout=0)
    with pytest.raises(RuntimeError):
        cluster.start(recorder)


def test_bind_delivers_the_bound_pod(started: tuple[SimulatedCluster, Recorder]) -> None:
    cluster, recorder = started
    outcome = cluster.bind(pod("a"), "n1")
    assert outcome == BindOutcome(ok=True, code=201, reason="", final=False)
    [change] = recorder.changes
    assert change.type == "MODIFIED"
    assert isinstance(change.obj, Pod)
    assert (change.obj.key, change.obj.node_name) == ("default/a", "n1")
    current = cluster.get_pod("default/a")
    assert current is not None and current.node_name == "n1"
    assert cluster.bindings == [("default/a", "n1")]
    assert cluster.conditions["default/a"]["status"] == "True"


def test_second_bind_conflicts(started: tuple[SimulatedCluster, Recorder]) -> None:
    cluster, recorder = started
    assert cluster.bind(pod("a"), "n1").ok
    outcome = cluster.bind(pod("a"), "n2")
    assert outcome == BindOutcome(
        ok=False,
        code=409,
        reason='Operation cannot be fulfilled on pods/binding "a": '
        'pod a is already assigned to node "n1"',
        final=True,
    )
    assert len(recorder.changes) == 1
    assert cluster.bindings == [("default/a", "n1")]


def test_bind_of_a_deleted_pod(started: tuple[SimulatedCluster, Recorder]) -> None:
    cluster, recorder = started
    deleted = cluster.delete_pod("default/a")
    assert recorder.kinds() == [("DELETED", "default/a")]
    assert recorder.changes[0].obj == deleted
    assert cluster.bind(pod("a"), "n1") == BindOutcome(
        ok=False, code=404, reason='pods "a" not found', final=True
    )


def test_bind_of_a_recreated_pod_conflicts(started: tuple[SimulatedCluster, Recorder]) -> None:
    cluster, _ = started
    old = pod("a")
    cluster.delete_pod(old)
    cluster.add_pod(Pod(uid="new-uid", namespace="default", name="a"))
    outcome = cluster.bind(old, "n1")
    assert (outcome.ok, outcome.code, outcome.final) == (False, 409, True)
    assert "does not match the UID in record (new-uid)" in outcome.reason


def test_bind_to_an_unknown_node_is_accepted_as_by_the_api(
    started: tuple[SimulatedCluster, Recorder],
) -> None:
    cluster, _ = started
    assert cluster.bind(pod("a"), "no-such-node").ok
    current = cluster.get_pod("default/a")
    assert current is not None and current.node_name == "no-such-node"


def test_injected_failures(started: tuple[SimulatedCluster, Recorder]) -> None:
    cluster, recorder = started
    cluster.fail_next_binds(500, count=2, reason="etcdserver: request timed out")
    cluster.fail_next_binds(409)
    first, second = cluster.bind(pod("a"), "n1"), cluster.bind(pod("a"), "n1")
    assert (
        first
        == second
        == BindOutcome(ok=False, code=500, reason="etcdserver: request timed out", final=False)
    )
    third = cluster.bind(pod("a"), "n1")
    assert (third.ok, third.code, third.final) == (False, 409, True) and third.reason
    assert cluster.pending_failures == 0
    assert recorder.changes == []
    assert cluster.bind(pod("a"), "n1").ok
    assert cluster.bind_calls == 4
    cluster.fail_next_binds(404)
    assert cluster.bind(pod("b"), "n1").final


def test_events_and_conditions_are_recorded(started: tuple[SimulatedCluster, Recorder]) -> None:
    cluster, recorder = started
    message = "0/2 nodes are available: 2 Insufficient cpu."
    cluster.emit_event(pod("a"), "Warning", "FailedScheduling", "Scheduling", message)
    cluster.set_unschedulable(pod("a"), message)
    [event] = cluster.events
    assert (event.type, event.reason, event.action, event.message) == (
        "Warning",
        "FailedScheduling",
        "Scheduling",
        message,
    )
    assert (event.pod_key, event.pod_uid, event.reporting_controller) == (
        "default/a",
        "uid-default-a",
        "eventsched",
    )
    condition = cluster.conditions["default/a"]
    assert {k: condition[k] for k in ("type", "status", "reason", "message")} == {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": message,
    }
    # Nothing the scheduler sees changed, so nothing is delivered...
    assert recorder.changes == []
    # ...until the nominated node changes.
    cluster.set_unschedulable(pod("a"), message, nominated_node="n2")
    [change] = recorder.changes
    assert isinstance(change.obj, Pod) and change.obj.nominated_node_name == "n2"
    events, conditions, bindings = cluster.snapshot_records()
    assert (len(events), set(conditions), bindings) == (1, {"default/a"}, [])


def test_mutations_deliver_changes(started: tuple[SimulatedCluster, Recorder]) -> None:
    cluster, recorder = started
    cluster.add_node(node("n3"))
    cluster.update_node(Node(name="n3", unschedulable=True))
    cluster.remove_node("n3")
    created = cluster.add_pod(Pod(uid="", namespace="shop", name="d"))
    cluster.update_pod(Pod(uid=created.uid, namespace="shop", name="d", priority=5))
    cluster.delete_pod("shop/d")
    assert recorder.kinds() == [
        ("ADDED", "n3"),
        ("MODIFIED", "n3"),
        ("DELETED", "n3"),
        ("ADDED", "shop/d"),
        ("MODIFIED", "shop/d"),
        ("DELETED", "shop/d"),
    ]
    assert created.uid  # given by the "API server"
    with pytest.raises(ValueError):
        cluster.add_node(node("n1"))
    with pytest.raises(KeyError):
        cluster.remove_node("n3")
    with pytest.raises(KeyError):
        cluster.delete_pod("shop/d")
    assert [n.name for n in cluster.list_nodes()] == ["n1", "n2"]


def test_stop_ends_delivery(started: tuple[SimulatedCluster, Recorder]) -> None:
    cluster, recorder = started
    cluster.stop()
    assert cluster.bind(pod("a"), "n1").ok
    cluster.add_node(node("n3"))
    assert recorder.changes == []


def test_a_callback_may_change_the_cluster(cluster: SimulatedCluster) -> None:
    """Changes made from inside the callback are delivered after the current one, in order."""
    seen: list[tuple[str, str, str]] = []

    def on_change(change: ClusterChange) -> None:
        obj = change.obj
        seen.append((change.type, getattr(obj, "key", obj.name), getattr(obj, "node_name", "")))
        if change.type == "ADDED" and isinstance(obj, Pod) and obj.name == "a":
            assert cluster.bind(obj, "n2").ok  # as an eager binder would

    cluster.start(on_change)
    assert seen == [
        ("ADDED", "n1", ""),
        ("ADDED", "n2", ""),
        ("ADDED", "default/a", ""),
        ("ADDED", "default/b", ""),
        ("ADDED", "shop/c", ""),
        ("MODIFIED", "default/a", "n2"),
    ]


def test_a_failing_callback_does_not_stop_delivery(cluster: SimulatedCluster) -> None:
    seen: list[str] = []

    def on_change(change: ClusterChange) -> None:
        seen.append(change.type)
        raise RuntimeError("observer bug")

    cluster.start(on_change)
    assert len(seen) == 5 and cluster.wait_synced(timeout=0)


def test_concurrent_binds_bind_each_pod_once() -> None:
    """8 binders race over the same pods: each pod is bound exactly once, and seen so once."""
    loaded = generate_cluster(nodes=20, pods=400, seed=1)
    cluster = SimulatedCluster.from_loaded(loaded)
    recorder = Recorder()
    active = Counter[int]()
    overlap = threading.Event()

    def on_change(change: ClusterChange) -> None:
        ident = threading.get_ident()
        with recorder.lock:
            active[ident] += 1
            if sum(active.values()) > 1:
                overlap.set()
        recorder(change)
        with recorder.lock:
            active[ident] -= 1

    cluster.start(on_change)
    recorder.changes.clear()
    outcomes: list[tuple[str, BindOutcome]] = []
    outcomes_lock = threading.Lock()
    barrier = threading.Barrier(8)
    names = [n.name for n in loaded.nodes]

    def binder(seed: int) -> None:
        rng = random.Random(seed)
        order = list(loaded.pods)
        rng.shuffle(order)
        barrier.wait()
        for p in order:
            result = cluster.bind(p, rng.choice(names))
            with outcomes_lock:
                outcomes.append((p.key, result))

    threads = [threading.Thread(target=binder, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(outcomes) == 8 * 400
    ok = Counter(key for key, result in outcomes if result.ok)
    assert set(ok.values()) == {1} and len(ok) == 400
    assert {r.code for _, r in outcomes if not r.ok} == {409}
    assert len(cluster.bindings) == 400
    modified = Counter(c.obj.key for c in recorder.changes if isinstance(c.obj, Pod))
    assert set(modified.values()) == {1} and len(modified) == 400
    assert not overlap.is_set()  # the callback never ran concurrently with itself
    bound = {key: node for key, node in cluster.bindings}
    assert all(p.node_name == bound[p.key] for p in cluster.list_pods())
    assert all(
        isinstance(c.obj, Pod) and c.obj.node_name == bound[c.obj.key] for c in recorder.changes
    )
