"""Which unschedulable pods an assigned pod moves: kube-scheduler v1.28's `AssignedPodAdded`
moves only those with a required pod-affinity term the new pod matches
(`getUnschedulablePodsWithMatchingAffinityTerm`), not every pod whose plugins registered
Pod events (a pod rejected for anti-affinity or spread waits for a deletion or the flush)."""

from __future__ import annotations

from typing import Any

from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import EventStore
from eventsched.model import Pod
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.scheduler.helpers import node

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
    scheduler = Scheduler(
        store,
        cluster,
        [default_profile()],
        in_tree_registry(),
        SchedulerOptions(initial_backoff=0.05, max_backoff=0.1),
    )
    scheduler.start()
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
