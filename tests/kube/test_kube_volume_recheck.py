"""VolumeBinding's node affinity checks against an API server (the emulator and, with
EVENTSCHED_KUBE_BIN, a real kube-apiserver v1.28).

- A node relabelled while PreBind waits for the PV controller: PreBind's next poll reads
  the node again and fails as kube-scheduler's `checkBindings` does (`bind_failed` with
  upstream's message, then `unreserved`); the pod waits while no node admits the volume,
  and is bound once the label is back and the test's PV controller binds the claim.
- An in-tree AWS EBS volume bound to the pod's claim, on nodes whose CSINode names
  `kubernetes.io/aws-ebs` in `storage.alpha.kubernetes.io/migrated-plugins`: its zone is
  checked on the CSI driver's key, so only the node labelled with it is feasible.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client

from eventsched.events import EventStore
from tests.kube.pvcontroller import PVController
from tests.kube.realserver import KubeServer
from tests.kube.test_kube_scheduler import node, node_of, running
from tests.kube.test_kube_volume_binding import claim, local_class, pinned_volume, pod_with_claim

ZONE = "topology.kubernetes.io/zone"
EBS_ZONE = "topology.ebs.csi.aws.com/zone"
MIGRATED = "storage.alpha.kubernetes.io/migrated-plugins"


def labelled(name: str, **labels: str) -> dict[str, Any]:
    manifest = node(name)
    manifest["metadata"]["labels"].update(labels)
    return manifest


def zonal_volume(name: str, zone: str, source: dict[str, Any]) -> dict[str, Any]:
    return pinned_volume(name, ZONE, zone, source)


def claim_ref(kube_server: KubeServer, volume: str) -> dict[str, Any] | None:
    found = kube_server.get("persistentvolumes", volume)
    return None if found is None else found["spec"].get("claimRef")


def test_a_node_relabelled_while_pre_bind_waits_fails_the_binding(
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore
) -> None:
    kube_server.create(node("node-a"))
    kube_server.create(labelled("node-b", **{ZONE: "z1"}))
    kube_server.create(local_class())
    kube_server.create(zonal_volume("pv-z1", "z1", {"local": {"path": "/mnt/pv-z1"}}))
    # What the PV controller, not running yet, would do: the volume is Available.
    kube_server.patch("persistentvolumes", "pv-z1", {"status": {"phase": "Available"}})
    kube_server.create(claim("data"))
    kube_server.create(pod_with_claim("web", "data"))
    with running(store, api_client):
        # PreBind wrote the claimRef and polls for a PV controller that is not running yet.
        kube_server.wait_for(lambda: claim_ref(kube_server, "pv-z1"), timeout=20)
        kube_server.patch("nodes", "node-b", {"metadata": {"labels": {ZONE: "z2"}}})
        (failed,) = kube_server.wait_for(lambda: list(store.read(kinds=["bind_failed"])), 20)
        assert failed.node == "node-b" and failed.plugin == "VolumeBinding"
        assert failed.data["reason"] == (
            'running PreBind plugin "VolumeBinding": binding volumes: pv "pv-z1" node '
            'affinity doesn\'t match node "node-b": no matching NodeSelectorTerms'
        )
        kube_server.wait_for(lambda: list(store.read(kinds=["unreserved"])), timeout=20)
        # Tried again against the new label: no node admits the volume now.
        kube_server.wait_for(
            lambda: [e for e in store.read(kinds=["unschedulable"]) if e.name == "web"], 20
        )
        assert node_of(kube_server, "web") == ""
        with PVController(kube_server) as controller:
            kube_server.patch("nodes", "node-b", {"metadata": {"labels": {ZONE: "z1"}}})
            kube_server.wait_for(lambda: node_of(kube_server, "web") == "node-b", timeout=30)
    assert controller.bound == [("default/data", "pv-z1")]
    assert len(list(store.read(kinds=["bind_failed"]))) == 1


def test_an_in_tree_volume_is_checked_on_the_csi_zone_key_where_migrated(
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore
) -> None:
    kube_server.create(labelled("node-a", **{ZONE: "us-east-1a"}))
    kube_server.create(labelled("node-b", **{ZONE: "us-east-1a", EBS_ZONE: "us-east-1a"}))
    for name in ("node-a", "node-b"):
        kube_server.create(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "CSINode",
                "metadata": {"name": name, "annotations": {MIGRATED: "kubernetes.io/aws-ebs"}},
                "spec": {"drivers": []},
            }
        )
    kube_server.create(local_class())
    ebs = {"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-0123"}}
    volume = zonal_volume("pv-ebs", "us-east-1a", ebs)
    volume["spec"]["claimRef"] = {"namespace": "default", "name": "data"}
    kube_server.create(volume)
    bound = claim("data")
    bound["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    bound["spec"]["volumeName"] = "pv-ebs"
    kube_server.create(bound)
    kube_server.create(pod_with_claim("web", "data"))
    with running(store, api_client):
        kube_server.wait_for(lambda: node_of(kube_server, "web") == "node-b", timeout=20)
    observed = [
        e.data
        for e in store.read(kinds=["object_observed"])
        if e.data["kind"] == "CSINode" and e.data["name"] == "node-a"
    ]
    assert observed and observed[-1]["migratedPlugins"] == ["kubernetes.io/aws-ebs"]
    assert not list(store.read(kinds=["bind_failed"]))
