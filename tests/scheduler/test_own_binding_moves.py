"""A pod the scheduler bound itself wakes the pods waiting for it, as kube-scheduler's
assigned-pod informer does when it first sees that pod bound (`addPodToCache` ->
`AssignedPodAdded`): found by the generated preemption scenario gen/4106."""

from __future__ import annotations

from typing import Any

from eventsched.cluster import SimulatedCluster
from eventsched.events import EventStore
from eventsched.model import Pod
from tests.scheduler.helpers import node, started_scheduler

HOSTNAME = "kubernetes.io/hostname"


def _pod(name: str, labels: dict[str, str], **spec: Any) -> Pod:
    return Pod.from_manifest(
        {
            "metadata": {
                "name": name,
                "namespace": "default",
                "uid": f"uid-{name}",
                "labels": labels,
            },
            "spec": {
                "schedulerName": "eventsched",
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}],
                **spec,
            },
        }
    )


def test_a_pod_waiting_for_pod_affinity_moves_when_the_scheduler_binds_its_peer(
    store: EventStore,
) -> None:
    follower = _pod(
        "follower",
        {"app": "follower"},
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "leader"}}, "topologyKey": HOSTNAME}
                ]
            }
        },
    )
    cluster = SimulatedCluster([node("node-0"), node("node-1")], [])
    scheduler = started_scheduler(store, cluster)
    cluster.add_pod(follower)
    scheduler.run(until_idle=True)
    assert not cluster.get_pod(follower.key).node_name  # type: ignore[union-attr]
    cluster.add_pod(_pod("leader", {"app": "leader"}))
    scheduler.run(until_idle=True)
    scheduler.stop()
    leader_node = cluster.get_pod("default/leader").node_name  # type: ignore[union-attr]
    assert leader_node
    assert cluster.get_pod(follower.key).node_name == leader_node  # type: ignore[union-attr]
    moves = [e.data for e in store.read_pod("default", "follower") if e.kind == "requeued"]
    assert moves and moves[0]["event"] == "AssignedPodAdd", moves


# kube-scheduler v1.28's `AssignedPodAdded` moves only the unschedulable pods with a required
# pod-affinity term the new pod matches (`getUnschedulablePodsWithMatchingAffinityTerm`), not
# every pod whose plugins registered Pod events (a pod rejected for anti-affinity or spread
# waits for a deletion or the flush).


def _term(key: str, app: str) -> dict[str, Any]:
    return {
        key: {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOSTNAME}
            ]
        }
    }


def _moves(store: EventStore, name: str) -> list[str]:
    return [e.data["event"] for e in store.read_pod("default", name) if e.kind == "requeued"]


def test_an_assigned_pod_moves_only_the_pods_whose_required_affinity_it_matches(
    store: EventStore,
) -> None:
    # node-0 holds a web pod: loner (anti-affinity to web) and follower (affinity to leader)
    # are both rejected by InterPodAffinity, which registers every Pod event.
    web = _pod("web", {"app": "web"}, nodeName="node-0")
    loner = _pod("loner", {}, affinity=_term("podAntiAffinity", "web"))
    follower = _pod("follower", {}, affinity=_term("podAffinity", "leader"))
    cluster = SimulatedCluster([node("node-0")], [web, loner, follower])
    scheduler = started_scheduler(store, cluster)
    scheduler.run(until_idle=True)
    assert _moves(store, "loner") == _moves(store, "follower") == []
    cluster.add_pod(_pod("leader", {"app": "leader"}))
    scheduler.run(until_idle=True)
    scheduler.stop()
    assert cluster.get_pod("default/leader").node_name == "node-0"  # type: ignore[union-attr]
    # The leader, bound by this scheduler, moved the follower, which then joined it...
    assert _moves(store, "follower")[0] == "AssignedPodAdd"
    assert cluster.get_pod("default/follower").node_name == "node-0"  # type: ignore[union-attr]
    # ...and not the loner, which has no affinity term the leader matches.
    assert _moves(store, "loner") == []
    assert not cluster.get_pod("default/loner").node_name  # type: ignore[union-attr]
