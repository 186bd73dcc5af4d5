"""VolumeBinding against an API server: a WaitForFirstConsumer claim bound to a local volume,
and one provisioned for the pod's node.

The scheduler runs on the Kubernetes adapter (the official client's configuration,
plain JSON requests) against the emulator and, with EVENTSCHED_KUBE_BIN, a real
kube-apiserver v1.28. The test plays kube-controller-manager's PV controller in a thread
(tests/kube/pvcontroller.py): PreBind writes the volume's claimRef, the controller binds
the claim, PreBind sees it bound and the pod is bound to the volume's node. For a claim
to provision, PreBind writes its selected-node annotation and the test also plays the
external provisioner (tests/kube/provisioner.py), which creates the volume.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client

from eventsched.cluster.kube import REQUIRED_ACCESS
from eventsched.events import EventStore
from tests.kube.provisioner import SELECTED_NODE, Provisioner
from tests.kube.pvcontroller import BIND_COMPLETED, BOUND_BY_CONTROLLER, PVController
from tests.kube.realserver import EmulatedApiServer, KubeServer
from tests.kube.test_kube_scheduler import node, node_of, pod, running

HOSTNAME = "kubernetes.io/hostname"


def local_class() -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "local-wait"},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
    }


def local_volume(name: str, node_name: str) -> dict[str, Any]:
    return pinned_volume(name, HOSTNAME, node_name, {"local": {"path": f"/mnt/{name}"}})


def pinned_volume(name: str, key: str, value: str, source: dict[str, Any]) -> dict[str, Any]:
    """A volume of the local-wait class whose node affinity is `key In [value]`."""
    term = {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "local-wait",
            **source,
            "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
        },
    }


def claim(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "local-wait",
            "resources": {"requests": {"storage": "5Gi"}},
        },
    }


def pod_with_claim(name: str, claim_name: str) -> dict[str, Any]:
    manifest = pod(name)
    manifest["spec"]["volumes"] = [
        {"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}
    ]
    return manifest


def test_a_wait_for_first_consumer_claim_is_bound_to_the_local_volume_of_the_pods_node(
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore
) -> None:
    kube_server.create(node("node-a"))
    kube_server.create(node("node-b"))
    kube_server.create(local_class())
    kube_server.create(local_volume("pv-b", "node-b"))
    created = kube_server.create(claim("data"))
    kube_server.create(pod_with_claim("web", "data"))
    with PVController(kube_server) as controller, running(store, api_client):
        kube_server.wait_for(lambda: node_of(kube_server, "web") == "node-b", timeout=20)
    assert controller.bound == [("default/data", "pv-b")]

    volume = kube_server.get("persistentvolumes", "pv-b")
    assert volume is not None
    ref = volume["spec"]["claimRef"]
    assert (ref["kind"], ref["namespace"], ref["name"], ref["uid"]) == (
        "PersistentVolumeClaim",
        "default",
        "data",
        created["metadata"]["uid"],
    )
    assert volume["metadata"]["annotations"][BOUND_BY_CONTROLLER] == "yes"
    bound = kube_server.get("persistentvolumeclaims", "data", "default")
    assert bound is not None and bound["spec"]["volumeName"] == "pv-b"
    assert BIND_COMPLETED in bound["metadata"]["annotations"]

    (reserved,) = [e for e in store.read(kinds=["reserved"]) if e.name == "web"]
    assert reserved.node == "node-b"
    assert reserved.data["volumes"] == [
        {
            "name": "pv-b",
            "claimRef": {"namespace": "default", "name": "data", "uid": created["metadata"]["uid"]},
        }
    ]
    kinds = [e.kind for e in store.read_pod("default", "web")]
    # PreBind bound the volume (above); a `bound` says so, with no `prebound` before it.
    assert kinds.index("reserved") < kinds.index("bound")
    assert "prebound" not in kinds
    assert not list(store.read(kinds=["bind_failed"]))

    if isinstance(kube_server, EmulatedApiServer):
        # Nothing outside the RBAC rules deploy/ grants (on a real server: test_rbac_real.py).
        granted = {(a.api_group, a.resource, v) for a in REQUIRED_ACCESS for v in a.verbs}
        used = kube_server.access_used()
        assert ("", "persistentvolumes", "update") in used
        assert ("", "persistentvolumeclaims", "get") in used
        assert used <= granted


DRIVER = "csi.example.com"


def provisioned_class() -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "fast"},
        "provisioner": DRIVER,
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowedTopologies": [{"matchLabelExpressions": [{"key": HOSTNAME, "values": ["node-b"]}]}],
    }


def test_a_claim_is_provisioned_for_the_pods_node(
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore
) -> None:
    """No volume matches; the class's provisioner may provision on node-b only. PreBind
    writes the claim's selected-node annotation; the test's provisioner creates the volume
    and its PV controller binds the claim; PreBind sees it bound and the pod is bound."""
    kube_server.create(node("node-a"))
    kube_server.create(node("node-b"))
    kube_server.create(provisioned_class())
    created = kube_server.create(
        {**claim("scratch"), "spec": {**claim("scratch")["spec"], "storageClassName": "fast"}}
    )
    kube_server.create(pod_with_claim("web", "scratch"))
    uid = created["metadata"]["uid"]
    with (
        Provisioner(kube_server, DRIVER) as provisioner,
        PVController(kube_server) as controller,
        running(store, api_client),
    ):
        kube_server.wait_for(lambda: node_of(kube_server, "web") == "node-b", timeout=20)
    assert provisioner.provisioned == [("default/scratch", "node-b", f"pvc-{uid}")]
    assert controller.bound == [("default/scratch", f"pvc-{uid}")]
    bound = kube_server.get("persistentvolumeclaims", "scratch", "default")
    assert bound is not None and bound["spec"]["volumeName"] == f"pvc-{uid}"
    assert bound["metadata"]["annotations"][SELECTED_NODE] == "node-b"

    (reserved,) = [e for e in store.read(kinds=["reserved"]) if e.name == "web"]
    assert reserved.node == "node-b"
    assert reserved.data["volumes"] == [
        {
            "claimRef": {"namespace": "default", "name": "scratch", "uid": uid},
            "selectedNode": "node-b",
        }
    ]
    assert not list(store.read(kinds=["bind_failed"]))
    if isinstance(kube_server, EmulatedApiServer):
        granted = {(a.api_group, a.resource, v) for a in REQUIRED_ACCESS for v in a.verbs}
        used = kube_server.access_used()
        assert ("", "persistentvolumeclaims", "update") in used
        assert used <= granted
