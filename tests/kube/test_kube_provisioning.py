"""Dynamic provisioning end to end on an API server (VolumeBinding, kube-scheduler v1.28).

The scheduler runs on the Kubernetes adapter against the emulator and, with
EVENTSCHED_KUBE_BIN, a real kube-apiserver v1.28, which runs no controllers:
the test plays the external provisioner (tests/kube/provisioner.py) and the
PV controller (tests/kube/pvcontroller.py), and, for a StatefulSet, the
StatefulSet controller. Covered: CSIStorageCapacity per zone (the pod goes
where a segment has room; none has: upstream's "did not have enough free
storage"), a class whose allowedTopologies exclude a zone, a provisioner
that fails once (the binding fails with upstream's message, Unreserve, the
retry provisions), a crash between Reserve and the claim's binding (the log
holds the assumption; the next scheduler provisions nothing twice), and a
StatefulSet placed as the real kube-scheduler places it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubernetes import client

from eventsched.events import EventStore
from tests.crash.harness import SchedulerProcess
from tests.kube.claimwatch import ClaimWatch
from tests.kube.provisioner import DRIVER_ERROR, SELECTED_NODE, Provisioner
from tests.kube.pvcontroller import PVController
from tests.kube.realserver import KubeServer, RealApiServer
from tests.kube.statefulset import REPLICAS, play_stateful_set_controller
from tests.kube.test_kube_scheduler import condition_of, events_about, node, node_of, running
from tests.kube.test_kube_volume_binding import DRIVER, claim, pod_with_claim
from tests.kube.upstream import UPSTREAM, kube_scheduler

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
UNRESOLVABLE = "Preemption is not helpful for scheduling.."


def zonal_node(name: str, zone: str, cpu: str = "4") -> dict[str, Any]:
    manifest = node(name, cpu)
    manifest["metadata"]["labels"][ZONE] = zone
    return manifest


def provisioning_class(name: str = "fast", zones: list[str] | None = None) -> dict[str, Any]:
    """A WaitForFirstConsumer class of the CSI driver; `zones`: its allowedTopologies."""
    manifest: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": DRIVER,
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    if zones is not None:
        manifest["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": ZONE, "values": zones}]}
        ]
    return manifest


def csi_driver(storage_capacity: bool) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": DRIVER},
        "spec": {"storageCapacity": storage_capacity},
    }


def capacity(name: str, zone: str, size: str, class_name: str = "fast") -> dict[str, Any]:
    """A CSIStorageCapacity of the class for one zone, as the driver's external-provisioner
    publishes it (in its own namespace)."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name, "namespace": "kube-system"},
        "storageClassName": class_name,
        "nodeTopology": {"matchLabels": {ZONE: zone}},
        "capacity": size,
    }


def claim_of(name: str, size: str = "5Gi", class_name: str = "fast") -> dict[str, Any]:
    manifest = claim(name)
    manifest["spec"]["storageClassName"] = class_name
    manifest["spec"]["resources"]["requests"]["storage"] = size
    return manifest


def selected(server: KubeServer, name: str) -> str:
    found = server.get("persistentvolumeclaims", name, "default") or {}
    return ((found.get("metadata") or {}).get("annotations") or {}).get(SELECTED_NODE, "")


def volume_of(server: KubeServer, name: str) -> str:
    found = server.get("persistentvolumeclaims", name, "default") or {}
    return (found.get("spec") or {}).get("volumeName") or ""


def unschedulable_message(store: EventStore, name: str) -> str:
    found = [e.data["message"] for e in store.read(kinds=["unschedulable"]) if e.name == name]
    return found[-1] if found else ""


def test_the_pod_goes_to_the_zone_whose_storage_capacity_has_room(
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore
) -> None:
    """The driver tracks capacity: z1 has 1Gi, z2 100Gi, z3 none published. A 5Gi claim is
    provisioned in z2; a 200Gi one fits nowhere ("did not have enough free storage") until
    z3 publishes room, and then goes there."""
    kube_server.create(zonal_node("node-a", "z1", cpu="16"))
    kube_server.create(zonal_node("node-b", "z2"))
    kube_server.create(zonal_node("node-c", "z3"))
    kube_server.create(csi_driver(storage_capacity=True))
    kube_server.create(provisioning_class())
    kube_server.create(capacity("cap-z1", "z1", "1Gi"))
    kube_server.create(capacity("cap-z2", "z2", "100Gi"))
    kube_server.create(claim_of("small"))
    kube_server.create(claim_of("large", size="200Gi"))
    kube_server.create(pod_with_claim("web", "small"))
    kube_server.create(pod_with_claim("big", "large"))
    with (
        Provisioner(kube_server, DRIVER) as provisioner,
        PVController(kube_server),
        running(store, api_client),
    ):
        kube_server.wait_for(lambda: node_of(kube_server, "web") == "node-b", timeout=20)
        message = kube_server.wait_for(lambda: unschedulable_message(store, "big"), timeout=20)
        assert message == (
            "0/3 nodes are available: 3 node(s) did not have enough free storage. "
            f"preemption: 0/3 nodes are available: 3 {UNRESOLVABLE}"
        )
        cond = kube_server.wait_for(lambda: condition_of(kube_server, "big", "PodScheduled"))
        assert (cond["reason"], cond["message"]) == ("Unschedulable", message)
        assert selected(kube_server, "large") == ""

        kube_server.create(capacity("cap-z3", "z3", "500Gi"))
        kube_server.wait_for(lambda: node_of(kube_server, "big") == "node-c", timeout=20)
    assert [(c, n) for c, n, _ in provisioner.provisioned] == [
        ("default/small", "node-b"),
        ("default/large", "node-c"),
    ]
    assert selected(kube_server, "small") == "node-b" and volume_of(kube_server, "small")
    assert selected(kube_server, "large") == "node-c" and volume_of(kube_server, "large")
    observed = {
        (e.data["kind"], e.data["name"])
        for e in store.read(kinds=["object_observed"])
        if e.data["kind"] in ("CSIDriver", "CSIStorageCapacity")
    }
    assert {("CSIDriver", DRIVER), ("CSIStorageCapacity", "cap-z3")} <= observed
    moved = [e.data["event"] for e in store.read(kinds=["requeued"]) if e.name == "big"]
    assert "CSIStorageCapacityAdd" in moved
    assert not list(store.read(kinds=["bind_failed"]))


def test_a_zone_the_class_does_not_allow_gets_no_volume(
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore
) -> None:
    """allowedTopologies admit z1 only: the pod goes to the small node of z1, not the large
    one of z2; a pod held to z2 is unschedulable. The driver does not track capacity, so
    the empty CSIStorageCapacity of z1 does not count (WaitForFirstConsumer without it)."""
    kube_server.create(zonal_node("node-a", "z1"))
    kube_server.create(zonal_node("node-b", "z2", cpu="32"))
    kube_server.create(csi_driver(storage_capacity=False))
    kube_server.create(provisioning_class(zones=["z1"]))
    kube_server.create(capacity("cap-z1", "z1", "0"))
    kube_server.create(claim_of("data"))
    kube_server.create(claim_of("held"))
    kube_server.create(pod_with_claim("web", "data"))
    held = pod_with_claim("held", "held")
    held["spec"]["nodeSelector"] = {ZONE: "z2"}
    kube_server.create(held)
    with (
        Provisioner(kube_server, DRIVER) as provisioner,
        PVController(kube_server),
        running(store, api_client),
    ):
        kube_server.wait_for(lambda: volume_of(kube_server, "data"), timeout=20)
        kube_server.wait_for(lambda: node_of(kube_server, "web") == "node-a", timeout=20)
        message = kube_server.wait_for(lambda: unschedulable_message(store, "held"), timeout=20)
    assert message == (
        "0/2 nodes are available: 1 node(s) didn't find available persistent volumes to bind, "
        "1 node(s) didn't match Pod's node affinity/selector. "
        f"preemption: 0/2 nodes are available: 2 {UNRESOLVABLE}"
    )
    assert [(c, n) for c, n, _ in provisioner.provisioned] == [("default/data", "node-a")]
    assert selected(kube_server, "held") == ""
    (reserved,) = [e for e in store.read(kinds=["reserved"])]
    assert (reserved.name, reserved.node) == ("web", "node-a")


def failed_scheduling_notes(server: KubeServer, name: str) -> list[str]:
    return [e["note"] for e in events_about(server, name) if e["reason"] == "FailedScheduling"]


def test_a_provisioner_that_fails_fails_the_binding_then_the_retry_provisions(
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore, tmp_path: Path
) -> None:
    """The provisioner's first attempt fails (ProvisioningFailed, the selected node
    removed): PreBind fails with upstream's message, shown on the pod, Unreserve gives
    the claim back; the next attempt provisions and the pod is bound. On the real
    server, kube-scheduler v1.28 then goes through the same and says the same."""

    def setup(scheduler: str) -> str:
        kube_server.create(node("node-a"))
        kube_server.create(provisioning_class())
        created = kube_server.create(claim_of("scratch"))
        manifest = pod_with_claim("web", "scratch")
        manifest["spec"]["schedulerName"] = scheduler
        kube_server.create(manifest)
        return str(created["metadata"]["uid"])

    uid = setup("eventsched")
    with Provisioner(kube_server, DRIVER) as provisioner, PVController(kube_server):
        provisioner.fail(1)
        with running(store, api_client):
            kube_server.wait_for(lambda: node_of(kube_server, "web") == "node-a", timeout=30)
    expected = (
        'running PreBind plugin "VolumeBinding": '
        'binding volumes: provisioning failed for PVC "scratch"'
    )
    assert provisioner.failed == [("default/scratch", "node-a")]
    assert [(c, n) for c, n, _ in provisioner.provisioned] == [("default/scratch", "node-a")]
    (failed,) = list(store.read(kinds=["bind_failed"]))
    assert failed.data["reason"] == expected
    kinds = [e.kind for e in store.read_pod("default", "web")]
    assert kinds.index("reserved") < kinds.index("bind_failed") < kinds.index("unreserved")
    assert kinds.count("reserved") == 2 and kinds[-1] == "bound"
    (note,) = failed_scheduling_notes(kube_server, "web")
    provisioning_failed = [
        e
        for e in kube_server.list("core_events")
        if e["involvedObject"].get("uid") == uid and e["reason"] == "ProvisioningFailed"
    ]
    assert [e["message"] for e in provisioning_failed] == [
        f'failed to provision volume with StorageClass "fast": {DRIVER_ERROR}'
    ]
    assert selected(kube_server, "scratch") == "node-a"
    assert volume_of(kube_server, "scratch") == f"pvc-{uid}"

    if not isinstance(kube_server, RealApiServer):
        return
    kube_server.reset()
    setup(UPSTREAM)
    with (
        kube_scheduler(kube_server, tmp_path),
        Provisioner(kube_server, DRIVER) as upstream,
        PVController(kube_server),
    ):
        upstream.fail(1)
        kube_server.wait_for(lambda: node_of(kube_server, "web") == "node-a", timeout=60)
    assert upstream.failed == provisioner.failed
    assert failed_scheduling_notes(kube_server, "web") == [expected]
    assert note == expected


# -- a crash between Reserve and the claim's binding ----------------------------------------


def run_config(path: Path) -> Path:
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "leaderElection: {leaderElect: false}\n"
        "profiles:\n"
        "  - schedulerName: eventsched\n"
    )
    return path


def test_a_crash_while_prebind_waits_provisions_nothing_twice(
    kube_server: KubeServer,
    api_client: client.ApiClient,
    store: EventStore,
    db_url: str,
    tmp_path: Path,
) -> None:
    """`eventsched run` selects node-b for the claim (node-a is cordoned) and waits for a
    paused provisioner; it is killed (SIGKILL). The log holds the reservation and the
    claim it assumed. node-a is uncordoned, larger; a new process on the same log closes
    the reservation, sends the pod to the claim's selected node (node-b) again without
    writing the annotation again, and the provisioner, resumed, provisions once."""
    cordoned = node("node-a", cpu="32")
    cordoned["spec"] = {"unschedulable": True}
    kube_server.create(cordoned)
    kube_server.create(node("node-b"))
    kube_server.create(provisioning_class())
    created = kube_server.create(claim_of("data"))
    kube_server.create(pod_with_claim("web", "data"))
    uid = created["metadata"]["uid"]
    kubeconfig = kube_server.kubeconfig(tmp_path / "kubeconfig")
    config = run_config(tmp_path / "config.yaml")

    def process(n: int) -> SchedulerProcess:
        return SchedulerProcess(db_url, kubeconfig, config, tmp_path / f"eventsched-{n}.log")

    first, second = process(1), process(2)
    with (
        ClaimWatch(api_client, "data") as claim_watch,
        Provisioner(kube_server, DRIVER) as provisioner,
        PVController(kube_server),
    ):
        provisioner.paused.set()
        try:
            first.start().wait_ready()
            kube_server.wait_for(lambda: selected(kube_server, "data") == "node-b", timeout=30)
            kube_server.wait_for(lambda: list(store.read(kinds=["reserved"])), timeout=30)
            first.kill()

            (reserved,) = store.read(kinds=["reserved"])
            assert (reserved.name, reserved.node) == ("web", "node-b")
            assert reserved.data["volumes"] == [
                {
                    "claimRef": {"namespace": "default", "name": "data", "uid": uid},
                    "selectedNode": "node-b",
                }
            ]
            assert not list(store.read(kinds=["unreserved", "bound", "bind_failed"]))
            assert volume_of(kube_server, "data") == "" and node_of(kube_server, "web") == ""

            kube_server.patch("nodes", "node-a", {"spec": {"unschedulable": False}})
            second.start().wait_ready()
            provisioner.paused.clear()
            kube_server.wait_for(lambda: node_of(kube_server, "web") == "node-b", timeout=30)
            kube_server.wait_for(lambda: list(store.read(kinds=["bound"])), timeout=30)
            assert second.terminate() == 0
        finally:
            first.ensure_dead()
            second.ensure_dead()
    assert provisioner.provisioned == [("default/data", "node-b", f"pvc-{uid}")]
    assert claim_watch.writes("node-b") == 1, claim_watch.selected
    assert volume_of(kube_server, "data") == f"pvc-{uid}"
    kinds = [(e.kind, e.node, e.data.get("reconciled")) for e in store.read_pod("default", "web")]
    reservations = [k for k in kinds if k[0] in ("reserved", "unreserved", "bound")]
    assert reservations == [
        ("reserved", "node-b", None),
        ("unreserved", "node-b", True),
        ("reserved", "node-b", None),
        ("bound", "node-b", None),
    ], kinds
    assert not list(store.read(kinds=["bind_failed"]))


# -- a StatefulSet, beside the real kube-scheduler ---------------------------------------------


def sized_node(name: str, zone: str, cpus: int) -> dict[str, Any]:
    manifest = zonal_node(name, zone, cpu=str(cpus))
    manifest["status"]["allocatable"]["memory"] = f"{2 * cpus}Gi"
    return manifest


def claims_of_the_set(server: KubeServer) -> dict[str, tuple[str, bool]]:
    """claim -> (selected node, bound)."""
    return {
        f"data-web-{n}": (
            selected(server, f"data-web-{n}"),
            bool(volume_of(server, f"data-web-{n}")),
        )
        for n in range(REPLICAS)
    }


STS_NODES = [("node-a", "z1", 16), ("node-b", "z1", 8), ("node-c", "z2", 4), ("node-d", "z3", 32)]


def storage_for_the_set(server: KubeServer) -> None:
    """Zones z1 and z2 allowed by the class, z3 not (its node is the largest); every zone
    publishes room."""
    for name, zone, cpus in STS_NODES:
        server.create(sized_node(name, zone, cpus))
    server.create(csi_driver(storage_capacity=True))
    server.create(provisioning_class(zones=["z1", "z2"]))
    for zone in ("z1", "z2", "z3"):
        server.create(capacity(f"cap-{zone}", zone, "100Gi"))


def bound_claims_of_the_set(server: KubeServer) -> dict[str, tuple[str, bool]]:
    """claim -> (selected node, bound), once every claim of the set is bound."""
    claims = claims_of_the_set(server)
    return claims if all(bound for _, bound in claims.values()) else {}


def test_a_stateful_set_is_placed_as_kube_scheduler_places_it(
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore, tmp_path: Path
) -> None:
    """eventsched places web-0..2, each claim selected for its pod's node, provisioned and
    bound; on the real server, kube-scheduler v1.28 then places the same set the same way."""
    storage_for_the_set(kube_server)
    with Provisioner(kube_server, DRIVER), PVController(kube_server), running(store, api_client):
        placed = play_stateful_set_controller(kube_server, "eventsched")
        claims = kube_server.wait_for(lambda: bound_claims_of_the_set(kube_server), timeout=30)
    # One per node (anti-affinity), never z3's (the class excludes it) though it is the
    # largest; web-0 on the largest of the rest; after it, the default zone spreading
    # decides (kube-scheduler below).
    assert placed["web-0"] == "node-a"
    assert sorted(placed.values()) == ["node-a", "node-b", "node-c"]
    assert claims == {f"data-{pod}": (node_name, True) for pod, node_name in placed.items()}
    assert not list(store.read(kinds=["bind_failed"]))

    if not isinstance(kube_server, RealApiServer):
        return
    kube_server.reset()
    storage_for_the_set(kube_server)
    with (
        kube_scheduler(kube_server, tmp_path),
        Provisioner(kube_server, DRIVER),
        PVController(kube_server),
    ):
        upstream = play_stateful_set_controller(kube_server, UPSTREAM)
        upstream_claims = kube_server.wait_for(
            lambda: bound_claims_of_the_set(kube_server), timeout=30
        )
    assert upstream == placed
    assert upstream_claims == claims
