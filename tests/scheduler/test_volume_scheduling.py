"""The volume plugins in a running scheduler: observed storage objects, refusals, requeues, replay.

A profile with kube-scheduler's default volume plugins (VolumeRestrictions,
NodeVolumeLimits, VolumeBinding, VolumeZone at their v1.28 extension points)
on a simulated cluster: a pod with a bound zonal volume goes to its zone; a
pod whose claim needs dynamic provisioning is placed and its claim bound to
the volume the simulated provisioner made (test_volume_provisioning.py has
the details); a pod whose claim does not exist yet stays pending, its
`unschedulable` event, FailedScheduling Event and PodScheduled condition
saying why, until the claim's arrival (PersistentVolumeClaimAdd) moves it.
WaitForFirstConsumer claims are bound to available local volumes: Reserve
assumes a volume so the next pod of the run takes the other one, PreBind
writes the claimRef and the simulated PV controller binds the claim; a
binding that times out is undone and tried again. The view the live
scheduler decides on is, after every append, the view replay rebuilds from
the log (storage objects and assumed volumes included), and replay decides
every attempt again the same.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from eventsched.audit.base import from_base
from eventsched.audit.replay import replay
from eventsched.audit.replayer import Replayer
from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import EventStore
from eventsched.framework import PluginRef, Profile
from eventsched.model import Node, Pod
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from eventsched.view import ClusterView
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


def zonal_node(name: str, zone: str, cpu: str = "4") -> Node:
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, ZONE: zone}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
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


def stepped(
    store: EventStore,
    cluster: SimulatedCluster,
    timeout: int,
    views: dict[int, dict[str, Any]] | None = None,
) -> Scheduler:
    """A started scheduler with VolumeBinding's bindTimeoutSeconds, for a test to step
    (`schedule_one`); `views` collects the view after every durable append."""
    profile = volume_profile()
    args = {**profile.plugin_args, "VolumeBinding": {"bindTimeoutSeconds": timeout}}
    scheduler = Scheduler(
        store,
        cluster,
        [replace(profile, plugin_args=args)],
        in_tree_registry(),
        SchedulerOptions(initial_backoff=0.05, max_backoff=0.1),
    )
    if views is not None:
        kept = views
        scheduler.on_durable = lambda position: kept.__setitem__(
            position, scheduler.view.to_state()
        )
    scheduler.start()
    return scheduler


def finish_bindings(scheduler: Scheduler) -> None:
    """Append the attempt, then wait for its binding cycles and append what they did."""
    scheduler._flush()
    while scheduler.bindings:
        scheduler._wait_for_inbox()
    scheduler._flush()


def replayed_views(store: EventStore, positions: set[int]) -> dict[int, dict[str, Any]]:
    replayer = Replayer(in_tree_registry(), *from_base(store))
    found = {}
    for event in store.read():
        replayer.fold(event)
        if event.position in positions:
            found[event.position] = replayer.view.to_state()
    return found


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
    assert placed["web"] == "a" and placed["dyn"] in ("a", "b") and placed["late"] == ""
    scratch = cluster.read_claim("default", "scratch")
    assert scratch.is_bound and scratch.volume_name == f"pvc-{scratch.uid}"
    assert scratch.selected_node == placed["dyn"]
    failed = {e.name: e.data["message"] for e in store.read(kinds=["unschedulable"])}
    assert failed["late"] == (
        '0/2 nodes are available: persistentvolumeclaim "later" not found. '
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.."
    )
    assert cluster.conditions["default/late"]["message"] == failed["late"]
    assert any(
        e.reason == "FailedScheduling" and e.message == failed["late"] for e in cluster.events
    )

    # The claim arrives, bound to a volume in zone z2: its addition moves the pod.
    cluster.put_object(
        volume("pv-2", "wait", phase="Bound", affinity={ZONE: ["z2"]}, labels={ZONE: "z2"})
    )
    cluster.put_object(claim("later", "wait", bound_to="pv-2"))
    scheduler.run(until_idle=True)
    scheduler.stop()
    placed = {p.name: p.node_name for p in cluster.list_pods()}
    assert placed["web"] == "a" and placed["late"] == "b"
    moved = [e.data["event"] for e in store.read(kinds=["requeued"]) if e.name == "late"]
    assert "PersistentVolumeClaimAdd" in moved
    kinds = {o["kind"] for o in views[max(views)]["objects"]}
    assert kinds == {"StorageClass", "PersistentVolume", "PersistentVolumeClaim"}

    replayed = replayed_views(store, set(views))
    for position, live in views.items():
        assert replayed[position] == live, f"views differ at log position {position}"


def local_volume(name: str, node_name: str) -> Any:
    return volume(name, "local", capacity="10Gi", affinity={"kubernetes.io/hostname": [node_name]})


def bound_claims(cluster: SimulatedCluster, *names: str) -> dict[str, str]:
    """Claim -> the volume the (simulated) PV controller bound it to, '' when unbound."""
    found = {}
    for name in names:
        got = cluster.read_claim("default", name)
        found[name] = got.volume_name if got.is_bound else ""
    return found


def test_wait_for_first_consumer_claims_are_bound_to_local_volumes(store: EventStore) -> None:
    """Two pods, two claims, one local volume on each node that fits either claim; both
    pods prefer node b (more room). The first pod's reservation assumes b's volume, so the
    second pod, decided in the same group before any binding was written, takes a's. A
    third claim finds no volume left."""
    cluster = SimulatedCluster(
        [zonal_node("a", "z1", cpu="2"), zonal_node("b", "z2")],
        [
            pod_using("one", "data-1"),
            pod_using("two", "data-2"),
            pod_using("three", "data-3"),
        ],
        objects=[
            storage_class("local", provisioner="kubernetes.io/no-provisioner"),
            local_volume("pv-a", "a"),
            local_volume("pv-b", "b"),
            *(claim(f"data-{i}", "local", storage="5Gi") for i in (1, 2, 3)),
        ],
    )
    views: dict[int, dict[str, Any]] = {}
    scheduler = start(store, cluster, views)
    scheduler.stop()
    placed = {p.name: p.node_name for p in cluster.list_pods()}
    assert placed == {"one": "b", "two": "a", "three": ""}
    assert not list(store.read(kinds=["bind_failed"]))
    # Each claim is bound to the volume on its pod's node.
    assert bound_claims(cluster, "data-1", "data-2", "data-3") == {
        "data-1": f"pv-{placed['one']}",
        "data-2": f"pv-{placed['two']}",
        "data-3": "",
    }
    for name in ("pv-a", "pv-b"):
        pv = cluster.read_volume(name)
        assert pv.phase == "Bound" and pv.claim_ref is not None and pv.claim_ref.uid

    reserved = {e.name: e.data.get("volumes") for e in store.read(kinds=["reserved"])}
    uid = cluster.read_claim("default", "data-1").uid
    assert reserved["one"] == [
        {
            "name": f"pv-{placed['one']}",
            "claimRef": {"namespace": "default", "name": "data-1", "uid": uid},
        }
    ]
    failed = {e.name: e.data["message"] for e in store.read(kinds=["unschedulable"])}
    assert failed["three"] == (
        "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.."
    )
    assert cluster.conditions["default/three"]["message"] == failed["three"]
    # The PV controller's updates were observed: the assumptions gave way to them. Before,
    # a durable view held them, and a pruned log's base keeps them.
    assert views[max(views)].get("assumedVolumes") == []
    held = [v for v in views.values() if v["assumedVolumes"]]
    assert held, "no durable view held an assumed volume"
    for state in held:
        assert ClusterView.from_state(state).to_state() == state
    observed = [
        e.data
        for e in store.read(kinds=["object_observed"])
        if e.data["kind"] == "PersistentVolume" and e.data.get("claimRef")
    ]
    assert {d["name"] for d in observed} == {"pv-a", "pv-b"}

    report = replay(store, in_tree_registry())
    assert report.ok and report.reproduced == report.attempts >= 3, report.to_dict()
    replayed = replayed_views(store, set(views))
    for position, live in views.items():
        assert replayed[position] == live, f"views differ at log position {position}"


def test_a_binding_that_times_out_is_undone_and_tried_again(store: EventStore) -> None:
    """No PV controller binds the claim: PreBind gives up after bindTimeoutSeconds, the
    binding cycle fails with upstream's message, Unreserve gives the volume back (it keeps
    the claimRef PreBind wrote: no rollback, as upstream). Once the controller runs, the
    claim is bound and the pod placed."""
    cluster = SimulatedCluster(
        [zonal_node("a", "z1"), zonal_node("b", "z2")],
        [pod_using("web", "data")],
        objects=[
            storage_class("local", provisioner="kubernetes.io/no-provisioner"),
            local_volume("pv-b", "b"),
            claim("data", "local", storage="5Gi"),
        ],
    )
    cluster.set_pv_controller(False)
    views: dict[int, dict[str, Any]] = {}
    scheduler = stepped(store, cluster, timeout=1, views=views)
    # One attempt and its binding cycle, stepped: retried, it would time out again and again.
    assert scheduler.schedule_one()
    finish_bindings(scheduler)
    (failed,) = list(store.read(kinds=["bind_failed"]))
    # As kube-scheduler's RunPreBindPlugins wraps a PreBind plugin's error.
    assert failed.data["reason"] == (
        'running PreBind plugin "VolumeBinding": '
        "binding volumes: timed out waiting for the condition"
    )
    kinds = [e.kind for e in store.read(kinds=["reserved", "unreserved"])]
    assert kinds == ["reserved", "unreserved"]
    assert scheduler.view.table.objects.storage.assumed == {}
    assert cluster.get_pod("default/web").node_name == ""  # type: ignore[union-attr]
    written = cluster.read_volume("pv-b").claim_ref
    assert written is not None and written.name == "data"

    cluster.set_pv_controller(True)
    scheduler.run(until_idle=True)
    scheduler.stop()
    assert cluster.get_pod("default/web").node_name == "b"  # type: ignore[union-attr]
    assert bound_claims(cluster, "data") == {"data": "pv-b"}
    report = replay(store, in_tree_registry())
    assert report.ok and report.reproduced == report.attempts, report.to_dict()
    replayed = replayed_views(store, set(views))
    for position, live in views.items():
        assert replayed[position] == live, f"views differ at log position {position}"
