"""Dynamic provisioning in a running scheduler on the simulated cluster (VolumeBinding, v1.28).

A WaitForFirstConsumer claim that no available volume matches, of a class
with a provisioner, is provisioned on a node the class's allowedTopologies
admit: Reserve assumes the claim with the node selected (the `reserved`
event's `volumes` says so and the view's fold keeps it, so a second pod
sharing the claim goes to the same node), PreBind writes the
`volume.kubernetes.io/selected-node` annotation and waits until the
simulated provisioner and PV controller have bound the claim. A provisioner
that gives up (removes the annotation) fails the binding cycle at once and
Unreserve forgets the assumption. Replay decides every attempt again the
same, and rebuilds the live views.
"""

from __future__ import annotations

from typing import Any

from eventsched.audit.replay import replay
from eventsched.cluster import SimulatedCluster
from eventsched.events import EventStore
from eventsched.model import Pod
from eventsched.plugins import in_tree_registry
from eventsched.view import ClusterView
from tests.plugins.storage import claim, csi_driver, storage_capacity, storage_class
from tests.scheduler.test_volume_scheduling import (
    ZONE,
    finish_bindings,
    pod_using,
    replayed_views,
    start,
    stepped,
    zonal_node,
)

ZONAL = storage_class("zonal", provisioner="csi.example.com", topologies=[{ZONE: ["z1"]}])


def prefers(name: str, claim_name: str, node_name: str) -> Pod:
    """A pod using the claim that prefers `node_name` (preferred node affinity, weight 100)."""
    term = {
        "matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node_name]}
        ]
    }
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {
                "schedulerName": "eventsched",
                "affinity": {
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 100, "preference": term}
                        ]
                    }
                },
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}],
            },
        }
    )


def test_a_claim_is_provisioned_on_a_node_its_class_admits(store: EventStore) -> None:
    """Node b has more room, but the class's allowedTopologies admit zone z1 only."""
    cluster = SimulatedCluster(
        [zonal_node("a", "z1", cpu="2"), zonal_node("b", "z2")],
        [pod_using("dyn", "scratch")],
        objects=[ZONAL, claim("scratch", "zonal", storage="5Gi")],
    )
    views: dict[int, dict[str, Any]] = {}
    scheduler = start(store, cluster, views)
    scheduler.stop()
    assert cluster.get_pod("default/dyn").node_name == "a"  # type: ignore[union-attr]
    scratch = cluster.read_claim("default", "scratch")
    assert scratch.is_bound and scratch.selected_node == "a"
    provisioned = cluster.read_volume(scratch.volume_name)
    assert provisioned.name == f"pvc-{scratch.uid}" and provisioned.phase == "Bound"
    assert provisioned.storage == 5 * 1024**3 and provisioned.storage_class == "zonal"

    (reserved,) = [e for e in store.read(kinds=["reserved"])]
    assert reserved.data["volumes"] == [
        {
            "claimRef": {"namespace": "default", "name": "scratch", "uid": scratch.uid},
            "selectedNode": "a",
        }
    ]
    assert not list(store.read(kinds=["bind_failed"]))
    held = [v for v in views.values() if v["assumedVolumes"]]
    assert held, "no durable view held the assumed claim"
    for state in held:
        assert ClusterView.from_state(state).to_state() == state
    assert views[max(views)]["assumedVolumes"] == []

    report = replay(store, in_tree_registry())
    assert report.ok and report.reproduced == report.attempts >= 1, report.to_dict()
    replayed = replayed_views(store, set(views))
    for position, live in views.items():
        assert replayed[position] == live, f"views differ at log position {position}"


def test_the_assumed_claim_sends_a_second_pod_to_the_same_node(store: EventStore) -> None:
    """No provisioner yet: the first pod's reservation assumes the claim selected for b;
    the second pod, which prefers a, is decided before any volume exists and goes to b
    too (the selected-node fast path). Once the provisioner runs, both are bound."""
    cluster = SimulatedCluster(
        [zonal_node("a", "z1"), zonal_node("b", "z1")],
        [prefers("one", "shared", "b"), prefers("two", "shared", "a")],
        objects=[ZONAL, claim("shared", "zonal")],
    )
    cluster.set_provisioner(False)
    scheduler = stepped(store, cluster, timeout=30)
    assert scheduler.schedule_one()
    scheduler._flush()
    assumed = scheduler.view.table.objects.storage.claim("default", "shared")
    assert assumed is not None and assumed.selected_node == "b"
    assert scheduler.schedule_one()
    scheduler._flush()
    reserved = {e.name: e.node for e in store.read(kinds=["reserved"])}
    assert reserved == {"one": "b", "two": "b"}

    cluster.set_provisioner(True)
    scheduler.run(until_idle=True)
    scheduler.stop()
    placed = {p.name: p.node_name for p in cluster.list_pods()}
    assert placed == {"one": "b", "two": "b"}
    assert cluster.read_claim("default", "shared").is_bound
    assert not list(store.read(kinds=["bind_failed"]))
    report = replay(store, in_tree_registry())
    assert report.ok and report.reproduced == report.attempts >= 2, report.to_dict()


def test_a_provisioner_that_gives_up_fails_the_binding_and_unreserves(store: EventStore) -> None:
    cluster = SimulatedCluster(
        [zonal_node("a", "z1")],
        [pod_using("dyn", "scratch")],
        objects=[ZONAL, claim("scratch", "zonal")],
    )
    cluster.set_provisioner(True, fails=True)
    scheduler = stepped(store, cluster, timeout=30)
    assert scheduler.schedule_one()
    finish_bindings(scheduler)
    (failed,) = list(store.read(kinds=["bind_failed"]))
    message = (
        'running PreBind plugin "VolumeBinding": '
        'binding volumes: provisioning failed for PVC "scratch"'
    )
    assert failed.data["reason"] == message
    # The pod's FailedScheduling says PreBind's error as it is, as kube-scheduler v1.28's
    # does (RunBindPlugins wraps a failed Bind's, RunPreBindPlugins PreBind's already);
    # tests/kube checks it against the real binary.
    assert [e.message for e in cluster.events if e.reason == "FailedScheduling"] == [message]
    kinds = [e.kind for e in store.read(kinds=["reserved", "unreserved"])]
    assert kinds == ["reserved", "unreserved"]
    assert scheduler.view.table.objects.storage.assumed_claims == {}
    assert cluster.read_claim("default", "scratch").selected_node == ""

    cluster.set_provisioner(True)
    scheduler.run(until_idle=True)
    scheduler.stop()
    assert cluster.get_pod("default/dyn").node_name == "a"  # type: ignore[union-attr]
    assert cluster.read_claim("default", "scratch").is_bound
    report = replay(store, in_tree_registry())
    assert report.ok and report.reproduced == report.attempts, report.to_dict()


def test_storage_capacity_is_observed_and_its_update_moves_the_pod(store: EventStore) -> None:
    """The driver opts into capacity tracking and zone z1 has too little room: the pod
    waits ("did not have enough free storage"); the CSIStorageCapacity's update moves it
    (CSIStorageCapacityUpdate, registered as upstream) and it is placed. Both objects are
    logged as object_observed and replay rebuilds the same views."""
    small = storage_capacity("cap-z1", "zonal", {ZONE: "z1"}, capacity="1Gi")
    cluster = SimulatedCluster(
        [zonal_node("a", "z1"), zonal_node("b", "z2")],
        [pod_using("dyn", "scratch")],
        objects=[
            ZONAL,
            csi_driver("csi.example.com"),
            small,
            claim("scratch", "zonal", storage="5Gi"),
        ],
    )
    views: dict[int, dict[str, Any]] = {}
    scheduler = start(store, cluster, views)
    (failed,) = [e.data["message"] for e in store.read(kinds=["unschedulable"])]
    assert failed.startswith(
        "0/2 nodes are available: 1 node(s) did not have enough free storage, "
        "1 node(s) didn't find available persistent volumes to bind."
    ), failed
    observed = {
        e.data["kind"]: e.data
        for e in store.read(kinds=["object_observed"])
        if e.data["kind"] in ("CSIDriver", "CSIStorageCapacity")
    }
    assert observed["CSIDriver"] == {
        "kind": "CSIDriver",
        "name": "csi.example.com",
        "storageCapacity": True,
    }
    assert observed["CSIStorageCapacity"] == {
        "kind": "CSIStorageCapacity",
        "namespace": "kube-system",
        "name": "cap-z1",
        "storageClassName": "zonal",
        "nodeTopology": {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z1"]}]},
        "capacity": 1024**3,
    }

    cluster.put_object(storage_capacity("cap-z1", "zonal", {ZONE: "z1"}, capacity="100Gi"))
    scheduler.run(until_idle=True)
    scheduler.stop()
    assert cluster.get_pod("default/dyn").node_name == "a"  # type: ignore[union-attr]
    moved = [e.data["event"] for e in store.read(kinds=["requeued"]) if e.name == "dyn"]
    assert "CSIStorageCapacityUpdate" in moved
    replayed = replayed_views(store, set(views))
    for position, live in views.items():
        assert replayed[position] == live, f"views differ at log position {position}"
    report = replay(store, in_tree_registry())
    assert report.ok and report.reproduced == report.attempts, report.to_dict()
