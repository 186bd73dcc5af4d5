"""VolumeBinding's node affinity checks in a running scheduler on the simulated cluster (v1.28).

A node relabelled while PreBind waits for the PV controller fails the binding cycle
as kube-scheduler's `checkBindings` does: `bind_failed` carries upstream's message,
Unreserve follows, and the pod is tried again against the node's new labels. A bound
in-tree volume goes only where its CSI zone label matches on nodes whose CSINode lists
the plugin as migrated; the CSINode's annotation is logged with it. Replay decides every
attempt again the same.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from eventsched.audit.replay import replay
from eventsched.cluster import SimulatedCluster
from eventsched.events import EventStore
from eventsched.model.volumeclass import MIGRATED_PLUGINS_ANNOTATION
from eventsched.model.volumes import CSINode
from eventsched.plugins import in_tree_registry
from tests.plugins.storage import claim, storage_class, volume
from tests.scheduler.test_volume_scheduling import (
    ZONE,
    finish_bindings,
    pod_using,
    start,
    stepped,
    zonal_node,
)

WAIT = storage_class("wait-sc")


def test_a_node_relabelled_during_pre_bind_fails_the_binding(store: EventStore) -> None:
    cluster = SimulatedCluster(
        [zonal_node("a", "z1")],
        [pod_using("web", "data")],
        objects=[
            WAIT,
            claim("data", "wait-sc"),
            volume("pv-z1", "wait-sc", affinity={ZONE: ["z1"]}),
        ],
    )
    cluster.set_pv_controller(False)
    scheduler = stepped(store, cluster, timeout=30)
    assert scheduler.schedule_one()
    scheduler._flush()  # the binding cycle starts: PreBind writes the claimRef and polls
    cluster.update_node(zonal_node("a", "z2"))
    finish_bindings(scheduler)
    (failed,) = list(store.read(kinds=["bind_failed"]))
    assert failed.plugin == "VolumeBinding"
    assert failed.data["reason"] == (
        'running PreBind plugin "VolumeBinding": binding volumes: pv "pv-z1" node affinity '
        'doesn\'t match node "a": no matching NodeSelectorTerms'
    )
    assert [e.kind for e in store.read(kinds=["reserved", "unreserved"])] == [
        "reserved",
        "unreserved",
    ]
    assert scheduler.view.table.objects.storage.assumed == {}

    scheduler.run(until_idle=True)
    scheduler.stop()
    assert cluster.get_pod("default/web").node_name == ""  # type: ignore[union-attr]
    attempts = [e for e in store.read(kinds=["attempt_started"]) if e.name == "web"]
    assert len(attempts) >= 2
    report = replay(store, in_tree_registry())
    assert report.ok and report.reproduced == report.attempts, report.to_dict()


def test_a_bound_in_tree_volume_goes_where_its_csi_zone_label_matches(
    store: EventStore,
) -> None:
    ebs_zone = "topology.ebs.csi.aws.com/zone"
    plain = zonal_node("b", "z1")
    labelled = replace(plain, labels={**plain.labels, ebs_zone: "z1"})
    annotations = {MIGRATED_PLUGINS_ANNOTATION: "kubernetes.io/aws-ebs"}
    csi_nodes = [
        CSINode.from_manifest(
            {"kind": "CSINode", "metadata": {"name": n, "annotations": annotations}, "spec": {}}
        )
        for n in ("a", "b")
    ]
    in_tree = volume(
        "pv-ebs",
        "wait-sc",
        affinity={ZONE: ["z1"]},
        source={"awsElasticBlockStore": {"volumeID": "vol-1"}},
        claim_ref=("default", "data"),
        phase="Bound",
    )
    cluster = SimulatedCluster(
        [zonal_node("a", "z1", cpu="8"), labelled],
        [pod_using("web", "data")],
        objects=[WAIT, claim("data", "wait-sc", bound_to="pv-ebs"), in_tree, *csi_nodes],
    )
    views: dict[int, dict[str, Any]] = {}
    scheduler = start(store, cluster, views)
    scheduler.stop()
    assert cluster.get_pod("default/web").node_name == "b"  # type: ignore[union-attr]
    observed = [
        e.data
        for e in store.read(kinds=["object_observed"])
        if e.data["kind"] == "CSINode" and e.data["name"] == "a"
    ]
    assert observed[-1]["migratedPlugins"] == ["kubernetes.io/aws-ebs"]
    report = replay(store, in_tree_registry())
    assert report.ok and report.reproduced == report.attempts >= 1, report.to_dict()
