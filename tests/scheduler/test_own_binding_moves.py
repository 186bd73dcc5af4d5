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
