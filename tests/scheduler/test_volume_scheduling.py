"""The volume plugins in a running scheduler: observed storage objects, refusals, requeues, replay.

A profile with kube-scheduler's default volume plugins (VolumeRestrictions,
NodeVolumeLimits, VolumeBinding, VolumeZone at their v1.28 extension points)
on a simulated cluster: a pod with a bound zonal volume goes to its zone; a
pod whose claim would need dynamic provisioning stays pending, and the
`unschedulable` event, the FailedScheduling Event and the PodScheduled
condition say what it waits for; a pod whose claim does not exist yet is
moved by the claim's arrival (PersistentVolumeClaimAdd) and placed. The view
the live scheduler decides on is, after every append, the view replay
rebuilds from the log (storage objects included).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from eventsched.audit.base import from_base
from eventsched.audit.replay import Replayer
from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import EventStore
from eventsched.framework import PluginRef, Profile
from eventsched.model import Node, Pod
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.plugins.storage import claim, storage_class, volume

ZONE = "topology.kubernetes.io/zone"
VOLUME_PLUGINS = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone")


def volume_profile() -> Profile:
    """The default profile with the volume plugins where v1.28's default plugins have them:
    after NodeResourcesFit at PreFilter and Filter, VolumeBinding at Reserve and PreBind."""
    base = default_profile()
    plugins = dict(base.plugins)
    for point in ("preFilter", "filter"):
        refs = list(plugins[point])
        at = [r.name for r in refs].index("NodeResourcesFit") + 1
        refs[at:at] = [PluginRef(name) for name in VOLUME_PLUGINS]
        plugins[point] = tuple(refs)
    plugins["reserve"] = (PluginRef("VolumeBinding"),)
    plugins["preBind"] = (PluginRef("VolumeBinding"),)
    return replace(base, plugins=plugins)


def zonal_node(name: str, zone: str) -> Node:
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, ZONE: zone}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
    )


def pod_using(name: str, claim_name: str) -> Pod:
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {
                "schedulerName": "eventsched",
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}],
            },
        }
    )


def start(
    store: EventStore, cluster: SimulatedCluster, views: dict[int, dict[str, Any]]
) -> Scheduler:
    scheduler = Scheduler(
        store,
        cluster,
        [volume_profile()],
        in_tree_registry(),
        SchedulerOptions(initial_backoff=0.05, max_backoff=0.1),
    )
    scheduler.on_durable = lambda position: views.__setitem__(position, scheduler.view.to_state())
    scheduler.start()
    scheduler.run(until_idle=True)
    return scheduler


def replayed_views(store: EventStore, positions: set[int]) -> dict[int, dict[str, Any]]:
    replayer = Replayer(in_tree_registry(), *from_base(store))
    found = {}
    for event in store.read():
        replayer.fold(event)
        if event.position in positions:
            found[event.position] = replayer.view.to_state()
    return found


PROVISIONING = (
    "waiting for a PersistentVolume for claim default/scratch: dynamic provisioning "
    "(provisioner csi.example.com) is not supported by eventsched"
)


def test_volumes_place_refuse_and_requeue_pods(store: EventStore) -> None:
    zonal = {"affinity": {ZONE: ["z1"]}, "labels": {ZONE: "z1"}}
    cluster = SimulatedCluster(
        [zonal_node("a", "z1"), zonal_node("b", "z2")],
        [pod_using("web", "data"), pod_using("dyn", "scratch"), pod_using("late", "later")],
        objects=[
            storage_class("wait"),
            storage_class("fast", provisioner="csi.example.com"),
            volume("pv-1", "wait", phase="Bound", claim_ref=("default", "data"), **zonal),
            claim("data", "wait", bound_to="pv-1"),
            claim("scratch", "fast"),
        ],
    )
    views: dict[int, dict[str, Any]] = {}
    scheduler = start(store, cluster, views)
    placed = {p.name: p.node_name for p in cluster.list_pods()}
    assert placed == {"web": "a", "dyn": "", "late": ""}
    failed = {e.name: e.data["message"] for e in store.read(kinds=["unschedulable"])}
    assert failed["dyn"] == f"0/2 nodes are available: 2 {PROVISIONING}."
    assert failed["late"] == ('0/2 nodes are available: persistentvolumeclaim "later" not found.')
    assert cluster.conditions["default/dyn"]["message"] == failed["dyn"]
    assert any(
        e.reason == "FailedScheduling" and e.message == failed["dyn"] for e in cluster.events
    )

    # The claim arrives, bound to a volume in zone z2: its addition moves the pod.
    cluster.put_object(
        volume("pv-2", "wait", phase="Bound", affinity={ZONE: ["z2"]}, labels={ZONE: "z2"})
    )
    cluster.put_object(claim("later", "wait", bound_to="pv-2"))
    scheduler.run(until_idle=True)
    scheduler.stop()
    placed = {p.name: p.node_name for p in cluster.list_pods()}
    assert placed == {"web": "a", "dyn": "", "late": "b"}
    moved = [e.data["event"] for e in store.read(kinds=["requeued"]) if e.name == "late"]
    assert "PersistentVolumeClaimAdd" in moved
    kinds = {o["kind"] for o in views[max(views)]["objects"]}
    assert kinds == {"StorageClass", "PersistentVolume", "PersistentVolumeClaim"}

    replayed = replayed_views(store, set(views))
    for position, live in views.items():
        assert replayed[position] == live, f"views differ at log position {position}"
