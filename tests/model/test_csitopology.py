"""An in-tree PersistentVolume's node affinity translated to CSI, after csi-translation-lib's
in_tree_volume_test.go (TestTranslateTopologyFromInTreeToCSI) and binder_test.go's
TestCheckBindingsWithCSIMigration / TestFindPodVolumesWithCSIMigration, v1.28."""

from __future__ import annotations

from typing import Any

import pytest

from eventsched.model.csitopology import (
    BETA_REGION,
    BETA_ZONE,
    REGION,
    ZONE,
    Untranslatable,
    affinity_on,
    migrated_plugin,
    translated_affinity,
)
from eventsched.model.volumeclass import MIGRATED_PLUGINS_ANNOTATION, CSINode
from eventsched.model.volumes import PersistentVolume
from tests.plugins.storage import volume

EBS = {"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}}
GCE = {"gcePersistentDisk": {"pdName": "pd-1"}}
EBS_KEY = "topology.ebs.csi.aws.com/zone"
GCE_KEY = "topology.gke.io/zone"


def csi_node(annotation: str | None) -> CSINode:
    meta: dict[str, Any] = {"name": "node-1"}
    if annotation is not None:
        meta["annotations"] = {MIGRATED_PLUGINS_ANNOTATION: annotation}
    return CSINode.from_manifest({"kind": "CSINode", "metadata": meta, "spec": {"drivers": []}})


def expressions(terms: Any) -> list[list[tuple[str, list[str]]]]:
    return [[(e["key"], e["values"]) for e in t.get("matchExpressions", [])] for t in terms]


def test_csi_node_keeps_the_migrated_plugins_annotation() -> None:
    node = csi_node("kubernetes.io/aws-ebs,kubernetes.io/gce-pd")
    assert node.migrated_plugins == ("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd")
    assert CSINode.from_record(node.to_record()) == node
    assert "migratedPlugins" not in csi_node(None).to_record()  # older records unchanged


@pytest.mark.parametrize(
    ("affinity", "labels", "expected"),
    [
        # The GA zone key in the affinity becomes the driver's key.
        ({ZONE: ["us-east-1a"]}, {}, [[(EBS_KEY, ["us-east-1a"])]]),
        # The beta zone key too; a beta region key becomes the GA one.
        (
            {BETA_ZONE: ["us-east-1a"], BETA_REGION: ["us-east-1"]},
            {},
            [[(EBS_KEY, ["us-east-1a"]), (REGION, ["us-east-1"])]],
        ),
        # No zone in the affinity: the PV's zone label is added to every term.
        (
            {"kubernetes.io/hostname": ["node-1"]},
            {ZONE: "us-east-1a__us-east-1b"},
            [[("kubernetes.io/hostname", ["node-1"]), (EBS_KEY, ["us-east-1a", "us-east-1b"])]],
        ),
        # No affinity at all: one term is made for the label.
        (None, {BETA_ZONE: "us-east-1c"}, [[(EBS_KEY, ["us-east-1c"])]]),
        # Neither: nothing changes.
        (None, {}, None),
    ],
)
def test_translate_topology(
    affinity: dict[str, list[str]] | None, labels: dict[str, str], expected: Any
) -> None:
    pv = volume("pv-1", affinity=affinity, labels=labels, source=EBS)
    terms = translated_affinity(pv)
    assert (None if terms is None else expressions(terms)) == expected


def test_translated_only_where_the_csi_node_lists_the_plugin() -> None:
    """tryTranslatePVToCSI: a migratable plugin whose migration is on, named by the
    CSINode's annotation; anything else is checked as written."""
    pv = volume("pv-1", affinity={ZONE: ["us-east-1a"]}, source=EBS)
    assert migrated_plugin(pv) == "kubernetes.io/aws-ebs"
    for node in (None, csi_node(None), csi_node("kubernetes.io/gce-pd")):
        assert affinity_on(pv, node) == pv.node_affinity
    assert expressions(affinity_on(pv, csi_node("kubernetes.io/aws-ebs"))) == [
        [(EBS_KEY, ["us-east-1a"])]
    ]


@pytest.mark.parametrize(
    "source",
    [
        {"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"}},
        {"local": {"path": "/mnt"}},
        {"portworxVolume": {"volumeID": "px-1"}},  # CSIMigrationPortworx is off in v1.28
        {"azureFile": {"secretName": "s", "shareName": "x"}},  # not in isCSIMigrationOnForPlugin
    ],
)
def test_not_translated(source: dict[str, Any]) -> None:
    pv = volume("pv-1", affinity={ZONE: ["z"]}, source=source)
    assert migrated_plugin(pv) is None
    assert affinity_on(pv, csi_node("kubernetes.io/portworx-volume,kubernetes.io/azure-file")) == (
        pv.node_affinity
    )


def test_azure_disk_keeps_its_topology() -> None:
    """The Azure Disk translator rewrites the source only."""
    pv = volume(
        "pv-1",
        affinity={ZONE: ["eastus-1"]},
        source={"azureDisk": {"diskName": "d", "diskURI": "u"}},
    )
    assert affinity_on(pv, csi_node("kubernetes.io/azure-disk")) == pv.node_affinity


def test_gce_and_cinder_keys() -> None:
    gce = volume("pv-1", labels={ZONE: "us-central1-a"}, source=GCE)
    assert expressions(translated_affinity(gce)) == [[(GCE_KEY, ["us-central1-a"])]]
    cinder = volume("pv-2", affinity={ZONE: ["nova"]}, source={"cinder": {"volumeID": "c"}})
    assert expressions(translated_affinity(cinder)) == [
        [("topology.cinder.csi.openstack.org/zone", ["nova"])]
    ]


@pytest.mark.parametrize(
    ("pv", "message"),
    [
        (
            volume("pv-1", source={"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/bad"}}),
            "failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume "
            "(aws://us-east-1a/bad)",
        ),
        (
            volume("pv-1", labels={ZONE: "us-central1-a__europe-west1-b"}, source=GCE),
            "failed to get region from zones: multiple or no regions gotten from zones, got: "
            "map[europe-west1:{} us-central1:{}]",
        ),
        (
            volume("pv-1", labels={BETA_ZONE: "a__b"}, source=GCE),
            "failed to get region from zones: zone in unexpected format, expected: "
            "{locale}-{region}-{zone}, got: a",
        ),
    ],
)
def test_untranslatable(pv: PersistentVolume, message: str) -> None:
    with pytest.raises(Untranslatable) as caught:
        translated_affinity(pv)
    assert str(caught.value) == message
