"""The storage objects the volume plugins read: parsing, records, keys, and their helpers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from eventsched.model import ManifestError, NodeTable
from eventsched.model.csimigration import ebs_volume_id, gce_pd_handle
from eventsched.model.objects import ClusterObjects, object_from_record, record_key
from eventsched.model.podvolumes import pod_claims
from eventsched.model.volumematching import match_claims
from eventsched.model.volumes import (
    CSIDriverLimit,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from eventsched.model.volumetopology import (
    NodeSelector,
    local_node_names,
    topology_mask,
    zone_values,
)
from tests.plugins.conftest import make_node
from tests.plugins.storage import claim, csi_node, pod_with, storage_class, volume

ZONE = "topology.kubernetes.io/zone"


def test_claim_is_read_as_volumebinding_reads_it() -> None:
    """GetPersistentVolumeClaimClass prefers the beta annotation; bind-completed, the
    selected node, the controller's UID and the request in bytes are kept."""
    found = PersistentVolumeClaim.from_manifest(
        {
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": "data",
                "namespace": "team",
                "uid": "u1",
                "annotations": {
                    "volume.beta.kubernetes.io/storage-class": "beta",
                    "pv.kubernetes.io/bind-completed": "yes",
                    "volume.kubernetes.io/selected-node": "n1",
                    "kubectl.kubernetes.io/last-applied-configuration": "{...}",
                },
                "ownerReferences": [
                    {"kind": "Pod", "name": "p", "uid": "pod-uid", "controller": True}
                ],
            },
            "spec": {
                "storageClassName": "ga",
                "volumeName": "pv-1",
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                "selector": {"matchLabels": {"tier": "fast"}},
            },
            "status": {"phase": "Bound"},
        }
    )
    assert (found.storage_class, found.storage, found.selected_node) == ("beta", 2**30, "n1")
    assert found.is_bound and found.owner_uid == "pod-uid" and found.volume_mode == "Filesystem"
    assert found.selector is not None and found.selector.matches({"tier": "fast"})
    assert PersistentVolumeClaim.from_record(found.to_record()) == found


@pytest.mark.parametrize(
    "obj",
    [
        claim("c", "sc", bound_to="pv", deleting=True, selector={"matchLabels": {"a": "b"}}),
        claim("plain"),
        volume(
            "pv",
            "sc",
            labels={ZONE: "z1"},
            affinity={ZONE: ["z1"]},
            claim_ref=("default", "c"),
            deleting=True,
        ),
        volume("gce", source={"gcePersistentDisk": {"pdName": "d"}}, labels={ZONE: "us-a-1"}),
        volume("bare", source={"hostPath": {"path": "/x"}}, phase="Pending"),
        storage_class("wait", provisioner="p", topologies=[{ZONE: ["z1", "z2"]}]),
        storage_class("imm", "Immediate"),
        csi_node("n1", ebs_csi_aws_com=3, other_example=None),
    ],
    ids=lambda o: o.key,
)
def test_records_round_trip(obj: Any) -> None:
    """What object_observed logs rebuilds the same object (replay's fold)."""
    record = obj.to_record()
    assert object_from_record(record) == obj
    assert record_key(record) == obj.key


def test_keys_and_the_collection() -> None:
    """Cluster-scoped kinds are KIND/NAME, claims KIND/NS/NAME; ClusterObjects holds them."""
    objects = ClusterObjects()
    items = [claim("c", "sc"), volume("pv"), storage_class("sc"), csi_node("n1", d=1)]
    assert [o.key for o in items] == [
        "PersistentVolumeClaim/default/c",
        "PersistentVolume/pv",
        "StorageClass/sc",
        "CSINode/n1",
    ]
    generation = objects.storage.generation
    for obj in items:
        objects.upsert(obj)
    assert len(objects) == 4 and all(objects.has(o) for o in items)
    assert objects.storage.generation > generation
    assert objects.storage.claim("default", "c") == items[0]
    objects.remove(items[1])
    assert not objects.has(items[1]) and objects.storage.volumes_of_class("") == []
    objects.clear()
    assert len(objects) == 0


def test_storage_class_defaults_to_immediate_as_the_api_server() -> None:
    found = StorageClass.from_manifest({"kind": "StorageClass", "metadata": {"name": "s"}})
    assert (found.binding_mode, found.provisioner, found.allowed_topologies) == (
        "Immediate",
        "",
        (),
    )


def test_malformed_objects_name_the_field() -> None:
    with pytest.raises(ManifestError, match=r"spec\.resources\.requests\.storage"):
        claim("c", storage="lots")
    with pytest.raises(ManifestError, match=r"spec\.accessModes"):
        PersistentVolume.from_manifest(
            {"kind": "PersistentVolume", "metadata": {"name": "v"}, "spec": {"accessModes": "RWO"}}
        )
    with pytest.raises(ManifestError, match=r"spec.drivers\[0\].allocatable.count"):
        CSINode.from_manifest(
            {
                "kind": "CSINode",
                "metadata": {"name": "n"},
                "spec": {"drivers": [{"name": "d", "allocatable": {"count": "3"}}]},
            }
        )
    assert CSINode.from_manifest(
        {"kind": "CSINode", "metadata": {"name": "n"}, "spec": {"drivers": [{"name": "d"}]}}
    ).drivers == (CSIDriverLimit("d", None),)


def test_in_tree_volume_handles() -> None:
    """csi-translation-lib's handles: GCE PD zonal, regional, unspecified; EBS IDs."""
    assert gce_pd_handle("d", {ZONE: "us-central1-a"}) == (
        "projects/UNSPECIFIED/zones/us-central1-a/disks/d"
    )
    assert gce_pd_handle("d", {ZONE: "us-central1-a__us-central1-b"}) == (
        "projects/UNSPECIFIED/regions/us-central1/disks/d"
    )
    assert gce_pd_handle("d", {ZONE: "a__b"}) == ""  # not {locale}-{region}-{zone}
    assert gce_pd_handle("d", {}) == "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d"
    assert ebs_volume_id("aws://us-east-1a/vol-123") == "vol-123"
    assert ebs_volume_id("vol-123") == "vol-123"
    assert ebs_volume_id("aws://us-east-1a/not-a-volume") is None


def nodes(*labels: dict[str, str]) -> NodeTable:
    return NodeTable([make_node(f"n{i}", labels=lab) for i, lab in enumerate(labels)])


def terms(*expressions: dict[str, Any], fields: list[dict[str, Any]] | None = None) -> Any:
    term: dict[str, Any] = {"matchExpressions": list(expressions)}
    if fields is not None:
        term["matchFields"] = fields
    return [term]


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (terms(expr(ZONE, "In", "z1")), [True, False, False]),
        (terms(expr(ZONE, "NotIn", "z1")), [False, True, True]),
        (terms(expr(ZONE, "Exists")), [True, True, False]),
        (terms(expr(ZONE, "DoesNotExist")), [False, False, True]),
        (terms(expr("rank", "Gt", "5")), [True, False, False]),
        (terms(expr("rank", "Lt", "5")), [False, True, False]),
        (terms(expr(ZONE, "In")), [False, False, False]),  # invalid: In without values
        (terms(expr(ZONE, "Gt", "x")), [False, False, False]),  # invalid: not an integer
        ([{}], [False, False, False]),  # an empty term matches no node
        # matchFields against the nameless node CheckNodeAffinity builds: "" everywhere
        (terms(fields=[expr("metadata.name", "In", "n0")]), [False, False, False]),
        (terms(fields=[expr("metadata.name", "NotIn", "n0")]), [True, True, True]),
        ([*terms(expr(ZONE, "In", "z1")), *terms(expr(ZONE, "In", "z2"))], [True, True, False]),
    ],
)
def test_pv_node_affinity(raw: Any, expected: list[bool]) -> None:
    """volume.CheckNodeAffinity semantics, over every row at once."""
    table = nodes({ZONE: "z1", "rank": "9"}, {ZONE: "z2", "rank": "1"}, {"rank": "x"})
    assert NodeSelector.compile(raw).mask(table).tolist() == expected


def test_allowed_topologies() -> None:
    """MatchTopologySelectorTerms: none allows all, an empty term allows none."""
    table = nodes({ZONE: "z1"}, {ZONE: "z2"})
    sc = storage_class("s", topologies=[{ZONE: ["z2"]}])
    assert topology_mask(sc.allowed_topologies, table).tolist() == [False, True]
    assert topology_mask((), table).tolist() == [True, True]
    assert topology_mask(((),), table).tolist() == [False, False]


def test_zone_values_and_local_node_names() -> None:
    assert zone_values("a__b") == frozenset({"a", "b"})
    assert zone_values(" a ") == frozenset({"a"})
    assert zone_values("a____b") is None
    hostname = "kubernetes.io/hostname"
    assert local_node_names(terms(expr(hostname, "In", "a", "b"), expr(hostname, "In", "b"))) == {
        "b"
    }
    assert local_node_names(terms(expr(ZONE, "In", "z"))) == frozenset()
    assert local_node_names(None) == frozenset()


def test_pod_claims_name_ephemeral_claims_after_the_pod() -> None:
    pod = pod_with(
        "web",
        {"name": "data", "persistentVolumeClaim": {"claimName": "c"}},
        {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}},
        {"name": "disk", "gcePersistentDisk": {"pdName": "d"}},
    )
    assert [(c.claim, c.ephemeral) for c in pod_claims(pod)] == [
        ("c", False),
        ("web-scratch", True),
    ]
    assert [c.claim for c in pod_claims(pod, ephemeral=False)] == ["c"]


def test_matching_takes_the_smallest_volume_and_never_one_twice() -> None:
    """findMatchingVolumes: claims by size; each the smallest fitting volume, by name among
    equals; one taken by an earlier claim is not offered again on that node."""
    objects = ClusterObjects()
    for obj in (
        volume("big", "sc", capacity="10Gi"),
        volume("small-b", "sc", capacity="2Gi"),
        volume("small-a", "sc", capacity="2Gi"),
    ):
        objects.upsert(obj)
    claims = [claim("large", "sc", storage="5Gi"), claim("tiny", "sc", storage="1Gi")]
    rows = np.arange(1)
    found = match_claims(claims, objects.storage, rows, lambda v: np.ones(1, dtype=bool))
    chosen = {
        c.name: found.volumes[p[0]].name for c, p in zip(found.claims, found.chosen, strict=True)
    }
    assert [c.name for c in found.claims] == ["tiny", "large"]
    assert chosen == {"tiny": "small-a", "large": "big"}
    three = [*claims, claim("third", "sc", storage="1Gi")]
    found = match_claims(three, objects.storage, rows, lambda v: np.ones(1, dtype=bool))
    assert [c.name for c in found.matched(0)] == ["tiny", "third", "large"]
    four = [*three, claim("fourth", "sc", storage="1Gi")]
    found = match_claims(four, objects.storage, rows, lambda v: np.ones(1, dtype=bool))
    # Three 1Gi claims go first and take every volume: the 5Gi claim is left without.
    assert [c.name for c in found.unmatched(0)] == ["large"]
