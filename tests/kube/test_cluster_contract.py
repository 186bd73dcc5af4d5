"""One contract for every cluster adapter, as tests/events holds one for every database.

The scheduler talks to a cluster only through `eventsched.scheduler.ports.Cluster`.
The same tests run against the simulated cluster and against the Kubernetes
adapter (`KubeCluster`, the official client) on the in-test API server and,
when its binaries are present (EVENTSCHED_KUBE_BIN), a real kube-apiserver:
list, watch, bind, a bind that conflicts, a bind of a pod that is gone,
Events, the PodScheduled condition, deletion, VolumeBinding's volume
requests (a volume pre-bound to its claim, which a PV controller then binds:
the simulated cluster's own, tests/kube/pvcontroller.py on a server), and
the objects plugins read (namespaces, workloads, storage objects,
PodDisruptionBudgets) listed, watched and deleted. Every wait is for a
positive signal (the change arriving), never a sleep.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any, Protocol
from uuid import uuid4

import pytest

from eventsched.cluster import SimulatedCluster
from eventsched.cluster.kube import KubeCluster
from eventsched.model import Node, Pod
from eventsched.model.changes import ApiError, ClusterChange
from eventsched.model.disruption import PodDisruptionBudget
from eventsched.model.objects import Namespace, Workload, object_from_manifest
from eventsched.model.selectors import LabelSelector
from eventsched.model.volumes import (
    ClaimRef,
    CSIDriverLimit,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    TopologyRequirement,
)
from eventsched.scheduler.ports import Cluster
from tests.conftest import KUBE_SERVERS, _emulator
from tests.kube.pvcontroller import BOUND_BY_CONTROLLER, PVController
from tests.kube.realserver import KubeServer
from tests.kube.test_kube_scheduler import node as node_manifest
from tests.kube.test_kube_scheduler import pod as pod_manifest
from tests.waiting import wait_for


class Driver(Protocol):
    """Acts on the cluster as users and other controllers would, and reads it back."""

    cluster: Cluster

    def add_node(self, name: str) -> None: ...
    def add_pod(self, name: str, node_name: str = "") -> None: ...
    def add_object(self, manifest: dict[str, Any]) -> None: ...
    def update_object(self, manifest: dict[str, Any]) -> None: ...
    def delete_object(self, manifest: dict[str, Any]) -> None: ...
    def delete_pod(self, name: str) -> None: ...
    def bind_elsewhere(self, name: str, node_name: str) -> None: ...
    def node_of(self, name: str) -> str: ...
    def events_about(self, name: str) -> list[tuple[str, str, str]]: ...
    def related_of_events(self, name: str) -> list[tuple[str, str]]: ...
    def nominated_node_of(self, name: str) -> str: ...
    def scheduled_condition(self, name: str) -> dict[str, str] | None: ...
    def pv_controller(self) -> AbstractContextManager[object]: ...
    def volume_annotations(self, name: str) -> dict[str, str] | None: ...


class SimDriver:
    def __init__(self) -> None:
        self.sim = SimulatedCluster()
        self.cluster: Cluster = self.sim

    def add_node(self, name: str) -> None:
        self.sim.add_node(Node.from_manifest(node_manifest(name)))

    def add_pod(self, name: str, node_name: str = "") -> None:
        self.sim.add_pod(Pod.from_manifest(pod_manifest(name, cpu="1", node_name=node_name)))

    def add_object(self, manifest: dict[str, Any]) -> None:
        self.sim.put_object(object_from_manifest(manifest))

    def update_object(self, manifest: dict[str, Any]) -> None:
        self.sim.put_object(object_from_manifest(manifest))

    def delete_object(self, manifest: dict[str, Any]) -> None:
        self.sim.delete_object(object_from_manifest(manifest).key)

    def delete_pod(self, name: str) -> None:
        self.sim.delete_pod(f"default/{name}")

    def bind_elsewhere(self, name: str, node_name: str) -> None:
        current = self.sim.get_pod(f"default/{name}")
        assert current is not None
        self.sim.update_pod(replace(current, node_name=node_name))

    def node_of(self, name: str) -> str:
        current = self.sim.get_pod(f"default/{name}")
        return current.node_name if current is not None else ""

    def events_about(self, name: str) -> list[tuple[str, str, str]]:
        return [
            (e.type, e.reason, e.message) for e in self.sim.events if e.pod_key == f"default/{name}"
        ]

    def related_of_events(self, name: str) -> list[tuple[str, str]]:
        """(reason, related pod's name) of each Event about the pod."""
        return [
            (e.reason, e.related_key.partition("/")[2])
            for e in self.sim.events
            if e.pod_key == f"default/{name}"
        ]

    def nominated_node_of(self, name: str) -> str:
        current = self.sim.get_pod(f"default/{name}")
        return current.nominated_node_name if current is not None else ""

    def scheduled_condition(self, name: str) -> dict[str, str] | None:
        return self.sim.conditions.get(f"default/{name}")

    def pv_controller(self) -> AbstractContextManager[object]:
        return contextlib.nullcontext()  # the simulated cluster runs its own

    def volume_annotations(self, name: str) -> dict[str, str] | None:
        return None  # the model keeps no annotations


#: The servers' kind names (tests/kube/apiserver.py) of the kinds tests delete.
PLURALS = {"PodDisruptionBudget": "poddisruptionbudgets"}


class KubeDriver:
    def __init__(self, server: KubeServer) -> None:
        self.server = server
        self.cluster: Cluster = KubeCluster(server.client(), ["eventsched"])

    def add_node(self, name: str) -> None:
        self.server.create(node_manifest(name))

    def add_pod(self, name: str, node_name: str = "") -> None:
        self.server.create(pod_manifest(name, cpu="1", node_name=node_name))

    def add_object(self, manifest: dict[str, Any]) -> None:
        self.server.create(manifest)

    def update_object(self, manifest: dict[str, Any]) -> None:
        self.server.update(manifest)

    def delete_object(self, manifest: dict[str, Any]) -> None:
        meta = manifest["metadata"]
        self.server.delete(PLURALS[manifest["kind"]], meta["name"], meta.get("namespace"))

    def delete_pod(self, name: str) -> None:
        self.server.delete("pods", name, "default")

    def bind_elsewhere(self, name: str, node_name: str) -> None:
        self.server.bind(name, node_name)

    def node_of(self, name: str) -> str:
        found = self.server.get("pods", name, "default")
        return ((found or {}).get("spec") or {}).get("nodeName") or ""

    def events_about(self, name: str) -> list[tuple[str, str, str]]:
        return [
            (e["type"], e["reason"], e.get("note", ""))
            for e in self.server.list("events")
            if e["regarding"]["name"] == name
        ]

    def related_of_events(self, name: str) -> list[tuple[str, str]]:
        return [
            (e["reason"], (e.get("related") or {}).get("name", ""))
            for e in self.server.list("events")
            if e["regarding"]["name"] == name
        ]

    def nominated_node_of(self, name: str) -> str:
        found = self.server.get("pods", name, "default") or {}
        return (found.get("status") or {}).get("nominatedNodeName") or ""

    def scheduled_condition(self, name: str) -> dict[str, str] | None:
        found = self.server.get("pods", name, "default") or {}
        for condition in (found.get("status") or {}).get("conditions") or []:
            if condition.get("type") == "PodScheduled":
                return dict(condition)
        return None

    def pv_controller(self) -> AbstractContextManager[object]:
        return PVController(self.server)

    def volume_annotations(self, name: str) -> dict[str, str] | None:
        found = self.server.get("persistentvolumes", name) or {}
        return dict(found.get("metadata", {}).get("annotations") or {})


@pytest.fixture(params=["simulated", *KUBE_SERVERS])
def driver(request: pytest.FixtureRequest) -> Iterator[Driver]:
    """The simulated cluster, the Kubernetes adapter on the in-test API server, and (with
    EVENTSCHED_KUBE_BIN) the Kubernetes adapter on a real kube-apiserver."""
    if request.param == "simulated":
        yield SimDriver()
    elif request.param == "real":
        server = request.getfixturevalue("real_apiserver")
        server.reset()
        yield KubeDriver(server)
    else:
        yield from (KubeDriver(server) for server in _emulator())


class Seen:
    """Every change the adapter delivered, in order, from whichever thread."""

    def __init__(self) -> None:
        self.changes: list[ClusterChange] = []
        self._lock = threading.Lock()

    def __call__(self, change: ClusterChange) -> None:
        with self._lock:
            self.changes.append(change)

    def pods(self, name: str, change: str | None = None) -> list[Pod]:
        with self._lock:
            return [
                c.obj
                for c in self.changes
                if isinstance(c.obj, Pod)
                and c.obj.name == name
                and (change is None or c.type == change)
            ]

    def latest(self, name: str) -> Pod | None:
        found = self.pods(name)
        return found[-1] if found else None


@pytest.fixture
def started(driver: Driver) -> Iterator[tuple[Driver, Seen]]:
    driver.add_node("node-a")
    driver.add_node("node-b")
    driver.add_pod("pending")
    driver.add_pod("running", node_name="node-a")
    seen = Seen()
    driver.cluster.start(seen)
    try:
        assert driver.cluster.wait_synced(30), "the initial lists never completed"
        yield driver, seen
    finally:
        driver.cluster.stop()


def test_list_delivers_every_node_and_pod_before_synced(started: tuple[Driver, Seen]) -> None:
    _, seen = started
    listed = {(c.type, type(c.obj).__name__, c.obj.name) for c in seen.changes}
    assert {
        ("ADDED", "Node", "node-a"),
        ("ADDED", "Node", "node-b"),
        ("ADDED", "Pod", "pending"),
        ("ADDED", "Pod", "running"),
    } <= listed
    running = seen.latest("running")
    assert running is not None and running.node_name == "node-a"
    pending = seen.latest("pending")
    assert pending is not None and not pending.node_name and pending.uid


def replica_set(name: str, **match_labels: str) -> dict[str, Any]:
    labels = dict(match_labels)
    template = {
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": 0, "selector": {"matchLabels": labels}, "template": template},
    }


def test_namespaces_and_workloads_are_listed_and_watched(driver: Driver) -> None:
    """What inter-pod affinity's namespaceSelector and default spreading read comes through
    the same protocol: a labelled Namespace, a ReplicaSet's and a Service's selectors."""
    team = f"team-{uuid4().hex[:6]}"
    driver.add_object(
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": team, "labels": {"tier": "gold"}},
        }
    )
    driver.add_object(replica_set("web-1", app="web"))
    seen = Seen()
    driver.cluster.start(seen)
    try:
        assert driver.cluster.wait_synced(30), "the initial lists never completed"
        objects = {
            c.obj.key: c.obj for c in seen.changes if isinstance(c.obj, Namespace | Workload)
        }
        assert objects[f"Namespace/{team}"].labels == {
            "tier": "gold",
            "kubernetes.io/metadata.name": team,  # as the API server labels every namespace
        }
        assert objects["ReplicaSet/default/web-1"] == Workload(
            "ReplicaSet",
            "default",
            "web-1",
            LabelSelector.parse({"matchLabels": {"app": "web"}}, "", ""),
        )
        driver.add_object(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
            }
        )
        service = wait_for(
            "the Service",
            lambda: [
                c.obj
                for c in seen.changes
                if isinstance(c.obj, Workload) and c.obj.kind == "Service" and c.obj.name == "web"
            ],
        )
        assert service[0].selector is not None and service[0].selector.matches({"app": "web"})
    finally:
        driver.cluster.stop()


ZONE = "topology.kubernetes.io/zone"
GIB = 2**30


def storage_manifests(tag: str) -> list[dict[str, Any]]:
    """A WaitForFirstConsumer class, a CSI volume of it pinned to a zone, a claim, a CSINode."""
    zone_term = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z1"]}]}
    return [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": f"wait-{tag}"},
            "provisioner": "csi.example.com",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowedTopologies": [{"matchLabelExpressions": [{"key": ZONE, "values": ["z1"]}]}],
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"pv-{tag}", "labels": {ZONE: "z1"}},
            "spec": {
                "capacity": {"storage": "10Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": f"wait-{tag}",
                "csi": {"driver": "csi.example.com", "volumeHandle": f"vol-{tag}"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [zone_term]}},
            },
        },
        claim_manifest(tag),
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": f"node-{tag}"},
            "spec": {
                "drivers": [
                    {
                        "name": "csi.example.com",
                        "nodeID": f"node-{tag}",
                        "allocatable": {"count": 3},
                    }
                ]
            },
        },
    ]


def claim_manifest(tag: str, selected_node: str = "") -> dict[str, Any]:
    annotations = {"volume.kubernetes.io/selected-node": selected_node} if selected_node else {}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": f"data-{tag}", "namespace": "default", "annotations": annotations},
        "spec": {
            "accessModes": ["ReadWriteOncePod"],
            "storageClassName": f"wait-{tag}",
            "resources": {"requests": {"storage": "5Gi"}},
        },
    }


def test_storage_objects_are_listed_and_watched(driver: Driver) -> None:
    """What the volume plugins read comes through the same protocol: a StorageClass, a
    PersistentVolume, a PersistentVolumeClaim and a CSINode listed, then the claim's
    selected-node annotation watched, read as the plugins read them."""
    tag = uuid4().hex[:6]
    for manifest in storage_manifests(tag):
        driver.add_object(manifest)
    seen = Seen()
    driver.cluster.start(seen)
    try:
        assert driver.cluster.wait_synced(30), "the initial lists never completed"
        objects = {c.obj.key: c.obj for c in seen.changes if not isinstance(c.obj, Node | Pod)}
        assert objects[f"StorageClass/wait-{tag}"] == StorageClass(
            f"wait-{tag}",
            "csi.example.com",
            "WaitForFirstConsumer",
            ((TopologyRequirement(ZONE, ("z1",)),),),
        )
        volume = objects[f"PersistentVolume/pv-{tag}"]
        assert isinstance(volume, PersistentVolume)
        assert (volume.labels, volume.storage, volume.access_modes, volume.storage_class) == (
            {ZONE: "z1"},
            10 * GIB,
            ("ReadWriteOnce",),
            f"wait-{tag}",
        )
        assert (volume.source, volume.driver, volume.handle, volume.claim_ref) == (
            "csi",
            "csi.example.com",
            f"vol-{tag}",
            None,
        )
        assert volume.node_affinity == (
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z1"]}]},
        )
        assert (volume.volume_mode, volume.phase) == ("Filesystem", "Pending")
        claim = objects[f"PersistentVolumeClaim/default/data-{tag}"]
        assert isinstance(claim, PersistentVolumeClaim)
        assert (claim.storage_class, claim.access_modes, claim.storage) == (
            f"wait-{tag}",
            ("ReadWriteOncePod",),
            5 * GIB,
        )
        assert (claim.volume_name, claim.phase, claim.selected_node, claim.is_bound) == (
            "",
            "Pending",
            "",
            False,
        )
        assert objects[f"CSINode/node-{tag}"] == CSINode(
            f"node-{tag}", (CSIDriverLimit("csi.example.com", 3),)
        )
        driver.update_object(claim_manifest(tag, selected_node="node-a"))
        updated = wait_for(
            "the claim's selected node",
            lambda: [
                c.obj
                for c in seen.changes
                if isinstance(c.obj, PersistentVolumeClaim)
                and c.type == "MODIFIED"
                and c.obj.selected_node == "node-a"
            ],
        )
        assert updated[0].name == f"data-{tag}"
    finally:
        driver.cluster.stop()


def disruption_budget(
    name: str, selector: dict[str, Any] | None, status: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A policy/v1 PodDisruptionBudget; a server drops `status` on create (its subresource)."""
    spec: dict[str, Any] = {"minAvailable": 1}
    if selector is not None:
        spec["selector"] = selector
    manifest: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }
    if status is not None:
        manifest["status"] = status
    return manifest


def budgets_seen(seen: Seen, change: str) -> list[PodDisruptionBudget]:
    return [
        c.obj for c in seen.changes if isinstance(c.obj, PodDisruptionBudget) and c.type == change
    ]


def test_disruption_budgets_are_listed_watched_and_deleted(driver: Driver) -> None:
    """What DefaultPreemption reads of a PodDisruptionBudget comes through the same
    protocol: listed without a status (no disruption controller has run: none allowed),
    with a nil and an empty selector kept apart; the status the disruption controller
    writes (disruptionsAllowed, disruptedPods) watched; the deletion delivered."""
    tag = uuid4().hex[:6]
    web = disruption_budget(f"web-{tag}", {"matchLabels": {"app": "web"}})
    driver.add_object(web)
    driver.add_object(disruption_budget(f"nil-{tag}", None))
    driver.add_object(disruption_budget(f"all-{tag}", {}))
    seen = Seen()
    driver.cluster.start(seen)
    try:
        assert driver.cluster.wait_synced(30), "the initial lists never completed"
        listed = {b.name: b for b in budgets_seen(seen, "ADDED")}
        assert listed[f"web-{tag}"] == PodDisruptionBudget(
            "default", f"web-{tag}", LabelSelector.parse({"matchLabels": {"app": "web"}}, "", "")
        )
        assert listed[f"nil-{tag}"].selector is None
        assert listed[f"all-{tag}"].selector == LabelSelector()
        status = {
            "disruptionsAllowed": 1,
            "currentHealthy": 3,
            "desiredHealthy": 2,
            "expectedPods": 3,
            "disruptedPods": {"web-0": "2026-01-01T00:00:00Z"},
        }
        driver.update_object({**web, "status": status})
        changed = wait_for(
            "the budget's status",
            lambda: [b for b in budgets_seen(seen, "MODIFIED") if b.disruptions_allowed == 1],
        )
        assert (changed[-1].name, changed[-1].disrupted_pods) == (f"web-{tag}", {"web-0"})
        driver.delete_object(web)
        deleted = wait_for("the budget's deletion", lambda: budgets_seen(seen, "DELETED"))
        assert [b.key for b in deleted] == [f"PodDisruptionBudget/default/web-{tag}"]
    finally:
        driver.cluster.stop()


def test_a_volume_pre_bound_to_its_claim_is_bound_and_watched(driver: Driver) -> None:
    """VolumeBinding's PreBind through the protocol: the volume's claimRef written (with the
    claim's UID and, on a server, the bound-by-controller annotation), the PV controller
    binds the claim, reads show it and the watch delivers both changes. A volume another
    claim holds is refused (409), a volume that does not exist is not found (404)."""
    tag = uuid4().hex[:6]
    for manifest in storage_manifests(tag):
        driver.add_object(manifest)
    seen = Seen()
    driver.cluster.start(seen)
    try:
        assert driver.cluster.wait_synced(30), "the initial lists never completed"
        pvc = driver.cluster.read_claim("default", f"data-{tag}")
        assert pvc.uid and not pvc.is_bound
        with driver.pv_controller():
            driver.cluster.bind_volume(f"pv-{tag}", pvc)
            # Bound, then its status (two writes, as the PV controller makes them).
            bound = wait_for(
                "the claim bound",
                lambda: (
                    (c := driver.cluster.read_claim("default", f"data-{tag}")).is_bound
                    and c.phase == "Bound"
                    and c
                ),
                timeout=15,
            )
        assert bound.volume_name == f"pv-{tag}"
        volume = driver.cluster.read_volume(f"pv-{tag}")
        assert volume.claim_ref == ClaimRef("default", f"data-{tag}", pvc.uid)
        assert volume.phase == "Bound"
        annotations = driver.volume_annotations(f"pv-{tag}")
        assert annotations is None or annotations[BOUND_BY_CONTROLLER] == "yes"
        wait_for(
            "the volume's claimRef watched",
            lambda: [
                c
                for c in seen.changes
                if isinstance(c.obj, PersistentVolume)
                and c.type == "MODIFIED"
                and c.obj.claim_ref == volume.claim_ref
            ],
        )
        wait_for(
            "the claim's binding watched",
            lambda: [
                c
                for c in seen.changes
                if isinstance(c.obj, PersistentVolumeClaim)
                and c.type == "MODIFIED"
                and c.obj.is_bound
            ],
        )
        with pytest.raises(ApiError) as refused:
            driver.cluster.bind_volume(f"pv-{tag}", replace(pvc, name="other", uid="uid-other"))
        assert refused.value.code == 409
        with pytest.raises(ApiError) as missing:
            driver.cluster.read_volume(f"no-such-{tag}")
        assert missing.value.code == 404
        with pytest.raises(ApiError) as missing:
            driver.cluster.read_claim("default", f"no-such-{tag}")
        assert missing.value.code == 404
    finally:
        driver.cluster.stop()


def test_relist_delivers_every_object_again_then_the_watch_goes_on(
    started: tuple[Driver, Seen],
) -> None:
    """What the scheduler resynchronises from after its log lost its tail: every pod and
    node again (a pod bound since, on its node), synced only once they are delivered."""
    driver, seen = started
    pending = seen.latest("pending")
    assert pending is not None and driver.cluster.bind(pending, "node-b").ok
    wait_for("the bound pod", lambda: (p := seen.latest("pending")) and p.node_name == "node-b")
    before = len(seen.changes)
    driver.cluster.relist()
    assert driver.cluster.wait_synced(30), "the new lists never completed"
    again = {(type(c.obj).__name__, c.obj.name) for c in seen.changes[before:]}
    assert {("Node", "node-a"), ("Node", "node-b"), ("Pod", "pending"), ("Pod", "running")} <= again
    relisted = [c.obj for c in seen.changes[before:] if c.obj.name == "pending"]
    assert isinstance(relisted[-1], Pod) and relisted[-1].node_name == "node-b"
    driver.add_pod("after-relist")
    wait_for("a pod created after the relist", lambda: seen.pods("after-relist", "ADDED"))


def test_watch_delivers_a_new_pod_and_its_deletion(started: tuple[Driver, Seen]) -> None:
    driver, seen = started
    driver.add_pod("late")
    added = wait_for("the new pod", lambda: seen.pods("late", "ADDED"))
    assert added[0].scheduler_name == "eventsched"
    driver.delete_pod("late")
    wait_for("the deletion", lambda: seen.pods("late", "DELETED"))


def test_bind_assigns_the_pod_and_the_watch_shows_it(started: tuple[Driver, Seen]) -> None:
    driver, seen = started
    pending = seen.latest("pending")
    assert pending is not None
    outcome = driver.cluster.bind(pending, "node-b")
    assert outcome.ok, outcome
    assert driver.node_of("pending") == "node-b"
    wait_for("the bound pod", lambda: (p := seen.latest("pending")) and p.node_name == "node-b")


def test_bind_of_a_pod_bound_by_another_is_a_final_conflict(started: tuple[Driver, Seen]) -> None:
    driver, seen = started
    pending = seen.latest("pending")
    assert pending is not None
    driver.bind_elsewhere("pending", "node-a")
    outcome = driver.cluster.bind(pending, "node-b")
    assert not outcome.ok and outcome.code == 409 and outcome.final, outcome
    assert driver.node_of("pending") == "node-a"


def test_bind_of_a_deleted_pod_is_a_final_not_found(started: tuple[Driver, Seen]) -> None:
    driver, seen = started
    pending = seen.latest("pending")
    assert pending is not None
    driver.delete_pod("pending")
    wait_for("the deletion", lambda: seen.pods("pending", "DELETED"))
    outcome = driver.cluster.bind(pending, "node-b")
    assert not outcome.ok and outcome.code == 404 and outcome.final, outcome


def test_events_are_written_about_the_pod(started: tuple[Driver, Seen]) -> None:
    driver, seen = started
    pending = seen.latest("pending")
    assert pending is not None
    message = "0/2 nodes are available: 2 Insufficient cpu."
    driver.cluster.emit_event(pending, "Warning", "FailedScheduling", "Scheduling", message)
    assert wait_for("the Event", lambda: driver.events_about("pending"), timeout=15) == [
        ("Warning", "FailedScheduling", message)
    ]


def test_unschedulable_sets_the_pod_scheduled_condition(started: tuple[Driver, Seen]) -> None:
    driver, seen = started
    pending = seen.latest("pending")
    assert pending is not None
    message = "0/2 nodes are available: 2 Insufficient cpu."
    driver.cluster.set_unschedulable(pending, message)
    condition = wait_for("the condition", lambda: driver.scheduled_condition("pending"))
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False",
        "Unschedulable",
        message,
    )
    driver.cluster.set_unschedulable(pending, "plugin X failed", reason="SchedulerError")
    condition = wait_for(
        "the updated condition",
        lambda: (
            (c := driver.scheduled_condition("pending")) and c["reason"] == "SchedulerError" and c
        ),
    )
    assert condition["message"] == "plugin X failed"


def test_preempt_marks_the_victim_a_disruption_target_and_deletes_it(
    started: tuple[Driver, Seen],
) -> None:
    """kube-scheduler v1.28's PreemptPod: the DisruptionTarget condition, then DELETE."""
    driver, seen = started
    victim, preemptor = seen.latest("running"), seen.latest("pending")
    assert victim is not None and preemptor is not None
    driver.cluster.preempt(victim, preemptor)
    wait_for(
        "the victim marked PreemptionByScheduler",
        lambda: [p for p in seen.pods("running") if p.disruption_target == "PreemptionByScheduler"],
    )
    # Gone, or (a real API server without kubelets) terminating until a kubelet confirms.
    wait_for(
        "the victim's deletion",
        lambda: seen.pods("running", "DELETED") or [p for p in seen.pods("running") if p.deleting],
    )
    driver.cluster.preempt(victim, preemptor)  # again: a victim deleted or terminating is no error
    gone = replace(victim, name="never-there", uid="0")
    driver.cluster.preempt(gone, preemptor)  # 404 on the status patch: nothing to preempt
    assert driver.node_of("pending") == ""


def test_an_event_names_its_related_pod(started: tuple[Driver, Seen]) -> None:
    """A victim's Preempted Event, as upstream's Eventf(victim, preemptor, ...) writes it."""
    driver, seen = started
    victim, preemptor = seen.latest("running"), seen.latest("pending")
    assert victim is not None and preemptor is not None
    message = "Preempted by a pod on node node-a"
    driver.cluster.emit_event(victim, "Normal", "Preempted", "Preempting", message, preemptor)
    assert wait_for("the Event", lambda: driver.events_about("running"), timeout=15) == [
        ("Normal", "Preempted", message)
    ]
    assert driver.related_of_events("running") == [("Preempted", "pending")]


def nominated(seen: Seen, name: str, node: str) -> Pod:
    """The pod as the watch showed it once its nomination was `node`."""
    return wait_for(
        f"{name} observed nominated to {node!r}",
        lambda: next(
            (p for p in reversed(seen.pods(name, "MODIFIED")) if p.nominated_node_name == node),
            None,
        ),
    )


def test_unschedulable_nominates_leaves_and_clears_the_nominated_node(
    started: tuple[Driver, Seen],
) -> None:
    """kube-scheduler v1.28's updatePod: the nomination goes in the condition's patch when
    given (ModeOverride) and different from the pod's; None leaves it; "" clears it."""
    driver, seen = started
    pending = seen.latest("pending")
    assert pending is not None
    driver.cluster.set_unschedulable(pending, "preempting", "node-a")
    pending = nominated(seen, "pending", "node-a")
    driver.cluster.set_unschedulable(pending, "still waiting")  # None: the nomination stays
    wait_for(
        "the new message",
        lambda: (c := driver.scheduled_condition("pending")) and c["message"] == "still waiting",
    )
    assert driver.nominated_node_of("pending") == "node-a"
    driver.cluster.set_unschedulable(pending, "no longer", "")
    nominated(seen, "pending", "")
    assert driver.nominated_node_of("pending") == ""
    condition = driver.scheduled_condition("pending")
    assert condition is not None and condition["message"] == "no longer"


def test_clear_nomination_empties_the_nominated_node(started: tuple[Driver, Seen]) -> None:
    """util.ClearNominatedNodeName for a lower-priority pod nominated to the chosen node."""
    driver, seen = started
    pending = seen.latest("pending")
    assert pending is not None
    driver.cluster.set_unschedulable(pending, "preempting", "node-b")
    pending = nominated(seen, "pending", "node-b")
    driver.cluster.clear_nomination(pending)
    cleared = nominated(seen, "pending", "")
    assert driver.nominated_node_of("pending") == ""
    assert driver.scheduled_condition("pending") is not None  # the condition is not touched
    driver.cluster.clear_nomination(cleared)  # none in the scheduler's copy: nothing to do
    driver.cluster.clear_nomination(pending)  # the cluster's pod has none: nothing changes
    assert driver.nominated_node_of("pending") == ""
    driver.delete_pod("pending")
    wait_for("the deletion", lambda: seen.pods("pending", "DELETED"))
    driver.cluster.clear_nomination(pending)  # gone: no error


def test_a_nomination_cleared_at_once_stays_cleared(started: tuple[Driver, Seen]) -> None:
    """A pod nominated and, before the watch shows it, cleared by a later preemption:
    the clear reaches the cluster after the nominating patch, so the pod ends with none."""
    driver, seen = started
    pending = seen.latest("pending")
    assert pending is not None and not pending.nominated_node_name
    driver.cluster.set_unschedulable(pending, "preempting", "node-b")
    driver.cluster.clear_nomination(replace(pending, nominated_node_name="node-b"))
    wait_for(
        "the nominating patch's condition",
        lambda: (c := driver.scheduled_condition("pending")) and c["message"] == "preempting",
    )
    nominated(seen, "pending", "")
    assert driver.nominated_node_of("pending") == ""
