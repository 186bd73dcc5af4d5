"""VolumeBinding with in-tree volumes migrated to CSI, and PreBind's node affinity re-check,
after upstream's binder_test.go (TestFindPodVolumesWithCSIMigration,
TestCheckBindingsWithCSIMigration, TestCheckBindings' node affinity cases), v1.28.

Filter checks a bound in-tree volume's node affinity translated to its CSI driver's zone
key on a node whose CSINode lists the plugin in `storage.alpha.kubernetes.io/migrated-plugins`;
PreBind reads the node and its CSINode again at every poll, so a volume whose node affinity
stopped matching after Reserve fails the binding cycle.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eventsched.cluster import SimulatedCluster
from eventsched.framework import Code, Status
from eventsched.model.volumeclass import MIGRATED_PLUGINS_ANNOTATION
from eventsched.model.volumes import CSINode, PersistentVolume
from eventsched.plugins.volumebinding import ERR_REASON_NODE_CONFLICT
from tests.plugins.storage import (
    HOSTNAME,
    claim,
    node,
    pod_with,
    pvc_volume,
    storage_class,
    table_of,
    volume,
)
from tests.plugins.test_volumebinding_binder import WAIT, Attempt, table_for

ZONE = "topology.kubernetes.io/zone"
EBS_ZONE = "topology.ebs.csi.aws.com/zone"
AWS_EBS = "kubernetes.io/aws-ebs"
EBS = {"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}}


def migrated(name: str, plugins: str = AWS_EBS) -> CSINode:
    meta: dict[str, Any] = {"name": name, "annotations": {MIGRATED_PLUGINS_ANNOTATION: plugins}}
    return CSINode.from_manifest({"kind": "CSINode", "metadata": meta, "spec": {"drivers": []}})


def ebs(name: str, zone: str = "us-east-1a", **fields: Any) -> PersistentVolume:
    return volume(name, "wait-sc", affinity={ZONE: [zone]}, source=EBS, **fields)


def test_filter_translates_a_bound_in_tree_volume_where_it_is_migrated() -> None:
    """TestFindPodVolumesWithCSIMigration: a migrated node needs the CSI zone label; a
    node whose CSINode does not list the plugin, or that has none, is checked on the
    in-tree zone key."""
    nodes = [
        node("csi-unlabelled", **{ZONE: "us-east-1a"}),
        node("csi-labelled", **{ZONE: "us-east-1a", EBS_ZONE: "us-east-1a"}),
        node("csi-other-zone", **{ZONE: "us-east-1a", EBS_ZONE: "us-east-1b"}),
        node("other-plugin", **{ZONE: "us-east-1a"}),
        node("no-csinode", **{ZONE: "us-east-1a"}),
    ]
    objects = [
        WAIT,
        claim("pvc-1", "wait-sc", bound_to="pv-1"),
        ebs("pv-1", claim_ref=("default", "pvc-1")),
        migrated("csi-unlabelled"),
        migrated("csi-labelled"),
        migrated("csi-other-zone"),
        migrated("other-plugin", "kubernetes.io/gce-pd"),
    ]
    table = table_of(nodes, objects)
    attempt = Attempt(
        SimulatedCluster(nodes, objects=objects), pod_with("p", pvc_volume("pvc-1")), table
    )
    conflict = Status.unresolvable(ERR_REASON_NODE_CONFLICT)
    assert attempt.filter() == [conflict, None, conflict, None, None]


def test_filter_error_where_the_translation_fails() -> None:
    """checkBoundClaims returns tryTranslatePVToCSI's error: the Filter's Error, on the
    migrated nodes only."""
    bad = volume(
        "pv-1",
        "wait-sc",
        source={"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/bad"}},
        claim_ref=("default", "pvc-1"),
    )
    nodes = [node("migrated"), node("plain")]
    objects = [WAIT, claim("pvc-1", "wait-sc", bound_to="pv-1"), bad, migrated("migrated")]
    table = table_of(nodes, objects)
    attempt = Attempt(
        SimulatedCluster(nodes, objects=objects), pod_with("p", pvc_volume("pvc-1")), table
    )
    first, second = attempt.filter()
    assert first is not None and first.code == Code.ERROR
    assert first.message == (
        "could not translate pv: failed to translate Kubernetes ID to EBS Volume ID "
        "Invalid format for AWS volume (aws://us-east-1a/bad)"
    )
    assert second is None
    assert np.array_equal(attempt.plugin._masks.migrated(table, AWS_EBS), [True, False])


def test_pre_bind_fails_when_the_node_no_longer_matches() -> None:
    """TestCheckBindings/binding-node-affinity-mismatch (in effect): the node relabelled
    after Reserve; PreBind's poll finds the pre-bound volume's affinity unmet."""
    cluster = SimulatedCluster(
        [node("node-1", **{ZONE: "z1"})],
        objects=[
            WAIT,
            claim("pvc-1", "wait-sc"),
            volume("pv-1", "wait-sc", affinity={ZONE: ["z1"]}),
        ],
    )
    cluster.set_pv_controller(False)
    attempt = Attempt(cluster, pod_with("p", pvc_volume("pvc-1")), table_for(cluster))
    assert attempt.filter() == [None]
    attempt.reserve("node-1")
    cluster.update_node(node("node-1", **{ZONE: "z2"}))
    status = attempt.pre_bind("node-1")
    assert status is not None and status.code == Code.ERROR
    assert status.message == (
        'binding volumes: pv "pv-1" node affinity doesn\'t match node "node-1": '
        "no matching NodeSelectorTerms"
    )
    # Upstream writes no rollback: the volume keeps its claimRef.
    assert cluster.read_volume("pv-1").claim_ref is not None


def test_pre_bind_translates_once_the_csi_node_lists_the_plugin() -> None:
    """TestCheckBindingsWithCSIMigration: the CSINode's annotation appears after Reserve and
    the node has no CSI zone label: the translated affinity fails."""
    cluster = SimulatedCluster(
        [node("node-1", **{ZONE: "us-east-1a"})],
        objects=[WAIT, claim("pvc-1", "wait-sc"), ebs("pv-1")],
    )
    cluster.set_pv_controller(False)
    attempt = Attempt(cluster, pod_with("p", pvc_volume("pvc-1")), table_for(cluster))
    assert attempt.filter() == [None]
    attempt.reserve("node-1")
    cluster.put_object(migrated("node-1"))
    status = attempt.pre_bind("node-1")
    assert status is not None and status.message == (
        'binding volumes: pv "pv-1" node affinity doesn\'t match node "node-1": '
        "no matching NodeSelectorTerms"
    )


def test_pre_bind_passes_a_translated_volume_on_a_labelled_node() -> None:
    cluster = SimulatedCluster(
        [node("node-1", **{ZONE: "us-east-1a", EBS_ZONE: "us-east-1a"})],
        objects=[WAIT, claim("pvc-1", "wait-sc"), ebs("pv-1"), migrated("node-1")],
    )
    attempt = Attempt(cluster, pod_with("p", pvc_volume("pvc-1")), table_for(cluster))
    assert attempt.filter() == [None]
    attempt.reserve("node-1")
    assert attempt.pre_bind("node-1") is None
    assert cluster.read_claim("default", "pvc-1").is_bound


def test_pre_bind_checks_the_provisioned_volume() -> None:
    """checkBindings on a claim to provision: once bound, its volume's node affinity is
    checked too (the simulated provisioner pins it to the selected node's hostname)."""
    fast = storage_class("fast", provisioner="csi.example.com")
    cluster = SimulatedCluster([node("node-1")], objects=[fast, claim("pvc-p", "fast")])
    cluster.set_provisioner(False)
    table = table_of(cluster.list_nodes(), [fast, cluster.read_claim("default", "pvc-p")])
    attempt = Attempt(cluster, pod_with("p", pvc_volume("pvc-p")), table)
    assert attempt.filter() == [None]
    attempt.reserve("node-1")
    cluster.update_node(node("node-1", **{HOSTNAME: "renamed"}))
    cluster.set_provisioner(True)
    status = attempt.pre_bind("node-1")
    provisioned = cluster.read_claim("default", "pvc-p").volume_name
    assert status is not None and status.message == (
        f'binding volumes: pv "{provisioned}" node affinity doesn\'t match node "node-1": '
        "no matching NodeSelectorTerms"
    )
