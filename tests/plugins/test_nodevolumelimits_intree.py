"""EBSLimits, GCEPDLimits, AzureDiskLimits, CinderLimits, after upstream's non_csi_test.go.

Upstream's fixtures (getFakePVCLister, getFakePVLister, getFakeCSIStorageClassLister,
getNodeWithPodAndVolumeLimits with limit source "node"): claims `some<F>Vol` bound to an
AWS EBS volume `<f>Vol`, `someNon<F>Vol` bound to a volume of no counted type,
`pvcWithDeletedPV`/`anotherPVCWithDeletedPV` bound to volumes that do not exist,
`unboundPVC`/`anotherUnboundPVC` unbound, all of class `<F>` (provisioner: the in-tree
plugin in TestEBSLimits, none in TestGCEPDLimits/TestAzureDiskLimits); two unbound claims
of classes that do not exist. The node reports `maxVols` in its allocatable
`attachable-volumes-<type>` and has no CSINode. Upstream's pods are all in-line EBS, so
TestGCEPDLimits and TestAzureDiskLimits count nothing: those tables are ported as they
are, and TestEBSLimits is also run with every type's own volumes (`typed`).
"""

from __future__ import annotations

from typing import Any

import pytest

from eventsched.framework import ASSIGNED_POD_DELETE, NODE_ADD, Code, CycleState, Status
from eventsched.model import Node, Pod
from eventsched.model.volumes import PersistentVolume
from eventsched.plugins.nodevolumelimits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED
from eventsched.plugins.nodevolumelimits.intree import (
    AZURE_DISK_TYPE,
    CINDER_TYPE,
    EBS,
    GCE_PD_TYPE,
    VolumeType,
    max_ebs_volumes,
)
from tests.plugins.conftest import make_node, plugin, run_filter
from tests.plugins.storage import claim, csi_node, pvc_volume, storage_class, table_of, volume

EXCEEDED = Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
TYPES = (EBS, GCE_PD_TYPE, AZURE_DISK_TYPE, CINDER_TYPE)
#: Upstream's filter type names (`ebsVolumeFilterType`, ...), which name its fixtures.
FILTER_NAME = {EBS: "EBS", GCE_PD_TYPE: "GCE", AZURE_DISK_TYPE: "AzureDisk", CINDER_TYPE: "Cinder"}
ID_FIELD = {EBS: "volumeID", GCE_PD_TYPE: "pdName", AZURE_DISK_TYPE: "diskName"}


def source_of(kind: VolumeType, volume_id: str) -> dict[str, Any]:
    """An in-line (or PV) source of the type naming `volume_id`."""
    if kind is AZURE_DISK_TYPE:
        uri = f"/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/disks/{volume_id}"
        return {kind.source: {"diskName": volume_id, "diskURI": uri}}
    return {kind.source: {ID_FIELD.get(kind, "volumeID"): volume_id}}


def make(name: str, *volumes: dict[str, Any], namespace: str = "default", uid: str = "") -> Pod:
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}"},
            "spec": {"containers": [{"name": "c"}], "volumes": list(volumes)},
        }
    )


def inline(kind: VolumeType, volume_id: str) -> dict[str, Any]:
    return {"name": f"v-{volume_id}", **source_of(kind, volume_id)}


def pods(kind: VolumeType, f: str) -> dict[str, Pod]:
    """Upstream's pods (`oneVolPod`, ...), their in-line volumes of type `kind`."""
    host = {"name": "host", "hostPath": {"path": "/tmp"}}
    return {
        "oneVolPod": make("one-vol", inline(kind, "ovp")),
        "oneVolPodAgain": make("one-vol-again", inline(kind, "ovp")),
        "twoVolPod": make("two-vol", inline(kind, "tvp1"), inline(kind, "tvp2")),
        "splitVolsPod": make("split-vols", host, inline(kind, "svp")),
        "nonApplicablePod": make("non-applicable", host),
        "emptyPod": make("empty"),
        "deletedPVCPod": make("deleted-pvc", pvc_volume("deletedPVC")),
        "twoDeletedPVCPod": make(
            "two-deleted-pvc", pvc_volume("deletedPVC"), pvc_volume("anotherDeletedPVC")
        ),
        "deletedPVPod": make("deleted-pv", pvc_volume("pvcWithDeletedPV")),
        "deletedPVPod2": make("deleted-pv-2", pvc_volume("pvcWithDeletedPV")),
        "anotherDeletedPVPod": make("another-deleted-pv", pvc_volume("anotherPVCWithDeletedPV")),
        "unboundPVCPod": make("unbound-pvc", pvc_volume("unboundPVC")),
        "unboundPVCPod2": make("unbound-pvc-2", pvc_volume("unboundPVC")),
        "anotherUnboundPVCPod": make("another-unbound-pvc", pvc_volume("anotherUnboundPVC")),
        "onePVCPod": make("one-pvc", pvc_volume(f"some{f}Vol")),
        "onePVCPodAgain": make("one-pvc-again", pvc_volume(f"some{f}Vol")),
        "splitPVCPod": make("split-pvc", pvc_volume(f"someNon{f}Vol"), pvc_volume(f"some{f}Vol")),
        "unboundPVCWithInvalidSCPod": make("invalid-sc", pvc_volume("unboundPVCWithInvalidSCPod")),
        "unboundPVCWithDefaultSCPod": make("default-sc", pvc_volume("unboundPVCWithDefaultSCPod")),
    }


def fixtures(kind: VolumeType, f: str, provisioner: str) -> list[Any]:
    """getFakePVCLister, getFakePVLister (volumes of type `kind`), the class lister."""
    objects: list[Any] = [storage_class(f, "Immediate", provisioner)]
    objects.append(volume(f"some{f}Vol", source=source_of(kind, f"{f.lower()}Vol")))
    objects.append(volume(f"someNon{f}Vol", source={"hostPath": {"path": "/tmp"}}))
    for name in (f"some{f}Vol", f"someNon{f}Vol", "pvcWithDeletedPV", "anotherPVCWithDeletedPV"):
        objects.append(claim(name, f, bound_to=name))
    objects += [claim("unboundPVC", f), claim("anotherUnboundPVC", f)]
    objects.append(claim("unboundPVCWithDefaultSCPod", "standard-sc"))
    objects.append(claim("unboundPVCWithInvalidSCPod", "invalid-sc"))
    return objects


def node_with_limit(kind: VolumeType, max_vols: int, name: str = "node") -> Node:
    """getNodeWithPodAndVolumeLimits("node", ...): the limit in node allocatable."""
    return make_node(name, **{kind.limit_key: str(max_vols)})


def run(kind: VolumeType, new: Pod, existing: list[Pod], node: Node, objects: list[Any]) -> Any:
    table = table_of([node], objects, placed=[(p, node.name) for p in existing])
    return run_filter(kind.plugin, new, table)[0]


# (test, new pod, existing pods, maxVols, exceeds) from TestEBSLimits.
EBS_CASES = [
    ("fits when node capacity >= new pod's EBS volumes", "oneVolPod", ["twoVolPod", "oneVolPodAgain"], 4, False),
    ("doesn't fit when node capacity < new pod's EBS volumes", "twoVolPod", ["oneVolPod"], 2, True),
    ("new pod's count ignores non-EBS volumes", "splitVolsPod", ["twoVolPod"], 3, False),
    ("existing pods' counts ignore non-EBS volumes", "twoVolPod", ["splitVolsPod", "nonApplicablePod", "emptyPod"], 3, False),
    ("new pod's count considers PVCs backed by EBS volumes", "onePVCPod", ["splitVolsPod", "nonApplicablePod", "emptyPod"], 3, False),
    ("new pod's count ignores PVCs not backed by EBS volumes", "splitPVCPod", ["splitVolsPod", "oneVolPod"], 3, False),
    ("existing pods' counts considers PVCs backed by EBS volumes", "twoVolPod", ["oneVolPod", "onePVCPod"], 3, True),
    ("already-mounted EBS volumes are always ok to allow", "twoVolPod", ["oneVolPod", "twoVolPod", "onePVCPod"], 4, False),
    ("the same EBS volumes are not counted multiple times", "splitVolsPod", ["oneVolPod", "oneVolPodAgain", "onePVCPod"], 3, False),
    ("missing PVC is not counted towards the PV limit (1)", "onePVCPod", ["oneVolPod", "deletedPVCPod"], 1, True),
    ("missing PVC is not counted towards the PV limit (2)", "onePVCPod", ["oneVolPod", "deletedPVCPod"], 2, False),
    ("two missing PVCs are not counted towards the PV limit twice", "onePVCPod", ["oneVolPod", "twoDeletedPVCPod"], 2, False),
    ("unbound PVC with invalid SC is not counted towards the PV limit", "unboundPVCWithInvalidSCPod", ["oneVolPod"], 1, False),
    ("unbound PVC from different provisioner is not counted towards the PV limit", "unboundPVCWithDefaultSCPod", ["oneVolPod"], 1, False),
    ("pod with missing PV is counted towards the PV limit (2)", "onePVCPod", ["oneVolPod", "deletedPVPod"], 2, True),
    ("pod with missing PV is counted towards the PV limit (3)", "onePVCPod", ["oneVolPod", "deletedPVPod"], 3, False),
    ("two pods missing the same PV are counted towards the PV limit only once", "deletedPVPod2", ["oneVolPod", "deletedPVPod"], 2, False),
    ("two pods missing different PVs are counted towards the PV limit twice", "anotherDeletedPVPod", ["oneVolPod", "deletedPVPod"], 2, True),
    ("pod with unbound PVC is counted towards the PV limit (2)", "onePVCPod", ["oneVolPod", "unboundPVCPod"], 2, True),
    ("pod with unbound PVC is counted towards the PV limit (3)", "onePVCPod", ["oneVolPod", "unboundPVCPod"], 3, False),
    ("the same unbound PVC in multiple pods is counted towards the PV limit only once", "unboundPVCPod2", ["oneVolPod", "unboundPVCPod"], 2, False),
    ("two different unbound PVCs are counted towards the PV limit as two volumes", "anotherUnboundPVCPod", ["oneVolPod", "unboundPVCPod"], 2, True),
]  # fmt: skip


@pytest.mark.parametrize(("test", "new", "existing", "max_vols", "exceeds"), EBS_CASES)
def test_ebs_limits(test: str, new: str, existing: list[str], max_vols: int, exceeds: bool) -> None:
    """TestEBSLimits, case by case."""
    made = pods(EBS, "EBS")
    objects = fixtures(EBS, "EBS", EBS.provisioner)
    got = run(EBS, made[new], [made[p] for p in existing], node_with_limit(EBS, max_vols), objects)
    assert got == (EXCEEDED if exceeds else None)


@pytest.mark.parametrize(
    "kind", [GCE_PD_TYPE, AZURE_DISK_TYPE, CINDER_TYPE], ids=lambda k: k.plugin
)
@pytest.mark.parametrize(("test", "new", "existing", "max_vols", "exceeds"), EBS_CASES)
def test_ebs_table_typed(
    kind: VolumeType, test: str, new: str, existing: list[str], max_vols: int, exceeds: bool
) -> None:
    """TestEBSLimits' table for the other types, each with its own volumes and provisioner
    (upstream's one implementation, `newNonCSILimits`, parameterized by filter type)."""
    f = FILTER_NAME[kind]
    made = pods(kind, f)
    objects = fixtures(kind, f, kind.provisioner)
    got = run(
        kind, made[new], [made[p] for p in existing], node_with_limit(kind, max_vols), objects
    )
    assert got == (EXCEEDED if exceeds else None)


# (test, new pod, existing pods, maxVols) of TestGCEPDLimits and TestAzureDiskLimits: the
# pods' volumes are EBS, the class has no provisioner: nothing counts, every case fits.
OTHER_CASES = [
    ("fits when node capacity >= new pod's volumes", "oneVolPod", ["twoVolPod", "oneVolPodAgain"], 4),
    ("fit when node capacity < new pod's volumes", "twoVolPod", ["oneVolPod"], 2),
    ("new pod's count ignores non-typed volumes", "splitVolsPod", ["twoVolPod"], 3),
    ("existing pods' counts ignore non-typed volumes", "twoVolPod", ["splitVolsPod", "nonApplicablePod", "emptyPod"], 3),
    ("new pod's count considers PVCs backed by typed volumes", "onePVCPod", ["splitVolsPod", "nonApplicablePod", "emptyPod"], 3),
    ("new pod's count ignores PVCs not backed by typed volumes", "splitPVCPod", ["splitVolsPod", "oneVolPod"], 3),
    ("existing pods' counts considers PVCs backed by typed volumes", "twoVolPod", ["oneVolPod", "onePVCPod"], 3),
    ("already-mounted volumes are always ok to allow", "twoVolPod", ["oneVolPod", "twoVolPod", "onePVCPod"], 4),
    ("the same volumes are not counted multiple times", "splitVolsPod", ["oneVolPod", "oneVolPodAgain", "onePVCPod"], 3),
    ("pod with missing PVC is counted towards the PV limit (2)", "onePVCPod", ["oneVolPod", "deletedPVCPod"], 2),
    ("pod with missing PVC is counted towards the PV limit (3)", "onePVCPod", ["oneVolPod", "deletedPVCPod"], 3),
    ("pod with missing two PVCs is counted towards the PV limit twice", "onePVCPod", ["oneVolPod", "twoDeletedPVCPod"], 3),
    ("pod with missing PV is counted towards the PV limit (2)", "onePVCPod", ["oneVolPod", "deletedPVPod"], 2),
    ("pod with missing PV is counted towards the PV limit (3)", "onePVCPod", ["oneVolPod", "deletedPVPod"], 3),
    ("two pods missing the same PV are counted towards the PV limit only once", "deletedPVPod2", ["oneVolPod", "deletedPVPod"], 2),
    ("two pods missing different PVs are counted towards the PV limit twice", "anotherDeletedPVPod", ["oneVolPod", "deletedPVPod"], 2),
    ("pod with unbound PVC is counted towards the PV limit (2)", "onePVCPod", ["oneVolPod", "unboundPVCPod"], 2),
    ("pod with unbound PVC is counted towards the PV limit (3)", "onePVCPod", ["oneVolPod", "unboundPVCPod"], 3),
    ("the same unbound PVC in multiple pods is counted towards the PV limit only once", "unboundPVCPod2", ["oneVolPod", "unboundPVCPod"], 2),
    ("two different unbound PVCs are counted towards the PV limit as two volumes", "anotherUnboundPVCPod", ["oneVolPod", "unboundPVCPod"], 2),
]  # fmt: skip


@pytest.mark.parametrize("kind", [GCE_PD_TYPE, AZURE_DISK_TYPE], ids=lambda k: k.plugin)
@pytest.mark.parametrize(("test", "new", "existing", "max_vols"), OTHER_CASES)
def test_gce_pd_and_azure_disk_limits(
    kind: VolumeType, test: str, new: str, existing: list[str], max_vols: int
) -> None:
    """TestGCEPDLimits and TestAzureDiskLimits as upstream wrote them (EBS volumes, a class
    without provisioner): the filter counts none of them."""
    f = FILTER_NAME[kind]
    made = pods(EBS, f)
    objects = fixtures(EBS, f, "")
    got = run(
        kind, made[new], [made[p] for p in existing], node_with_limit(kind, max_vols), objects
    )
    assert got is None


EPHEMERAL_POD = make(
    "abc", {"name": "xyz", "ephemeral": {"volumeClaimTemplate": {}}}, namespace="test", uid="12345"
)


def ephemeral_claim(owned: bool) -> Any:
    """`ephemeralClaim` (bound to a volume "missing", class GCE) or `conflictingClaim`."""
    return claim(
        "abc-xyz", "GCE", bound_to="missing", namespace="test", owner_uid="12345" if owned else ""
    )


EPHEMERAL_CASES = [
    ("volume missing", [], 0,
     Status.as_error('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found')),
    ("volume not owned", [ephemeral_claim(False)], 0,
     Status.as_error("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)")),
    ("volume unbound, allowed", [ephemeral_claim(True)], 1, None),
    ("volume unbound, exceeds limit", [ephemeral_claim(True)], 0, EXCEEDED),
]  # fmt: skip


@pytest.mark.parametrize(("test", "claims", "max_vols", "expected"), EPHEMERAL_CASES)
def test_ephemeral_limits(
    test: str, claims: list[Any], max_vols: int, expected: Status | None
) -> None:
    """TestEphemeralLimits (GCE PD filter, class GCE provisioned by kubernetes.io/gce-pd; the
    claim's volume is missing, so it counts by its class). v1.28: a missing claim is an Error."""
    objects = [storage_class("GCE", "Immediate", GCE_PD_TYPE.provisioner), *claims]
    node = node_with_limit(GCE_PD_TYPE, max_vols)
    assert run(GCE_PD_TYPE, EPHEMERAL_POD, [], node, objects) == expected


# -- defaults, overrides, migration -----------------------------------------------------------


@pytest.mark.parametrize(
    ("instance_type", "expected"),
    [("", 39), ("m4.large", 39), ("m5.large", 25), ("c5d.xlarge", 25), ("r5.2xlarge", 25),
     ("t3.micro", 25), ("t3a.nano", 25), ("z1d.large", 25), ("a1.m5", 39), ("x1e.t3", 25)],
)  # fmt: skip
def test_get_max_ebs_volume(instance_type: str, expected: int) -> None:
    """getMaxEBSVolume: `^[cmr]5.*|t3|z1d` searched anywhere (Go's MatchString)."""
    assert max_ebs_volumes(instance_type) == expected


def pod_with_n(kind: VolumeType, name: str, n: int, start: int = 0) -> Pod:
    return make(name, *(inline(kind, f"{name}-{i}") for i in range(start, start + n)))


@pytest.mark.parametrize(
    ("kind", "labels", "default"),
    [
        (EBS, {}, 39),
        (EBS, {"node.kubernetes.io/instance-type": "m5.large"}, 25),
        (EBS, {"beta.kubernetes.io/instance-type": "t3.small"}, 25),
        (EBS, {"node.kubernetes.io/instance-type": "m4.large"}, 39),
        (GCE_PD_TYPE, {"node.kubernetes.io/instance-type": "m5.large"}, 16),
        (AZURE_DISK_TYPE, {}, 16),
        (CINDER_TYPE, {}, 256),
    ],
)
def test_default_limit_without_allocatable(
    kind: VolumeType, labels: dict[str, str], default: int
) -> None:
    """getMaxVolumeFunc: the type's default when the node reports no limit; exactly the
    default fits, one more does not (the existing pod's volumes count too)."""
    node = make_node("n", labels=labels)
    existing = pod_with_n(kind, "old", default - 1)
    assert run(kind, pod_with_n(kind, "new", 1), [existing], node, []) is None
    assert run(kind, pod_with_n(kind, "new", 2), [existing], node, []) == EXCEEDED


def test_allocatable_overrides_default_even_when_larger_or_zero() -> None:
    """volumeLimits(nodeInfo)[volumeLimitKey] replaces the default, whatever its value."""
    big = make_node("n", **{EBS.limit_key: "50"}, labels={"node.kubernetes.io/instance-type": "m5"})
    assert run(EBS, pod_with_n(EBS, "new", 45), [], big, []) is None
    zero = make_node("n", **{EBS.limit_key: "0"})
    assert run(EBS, pod_with_n(EBS, "new", 1), [], zero, []) == EXCEEDED
    # Another type's key is not this type's limit.
    other = make_node("n", **{GCE_PD_TYPE.limit_key: "0"})
    assert run(EBS, pod_with_n(EBS, "new", 1), [], other, []) is None


def test_a_node_with_a_csinode_defers_to_node_volume_limits() -> None:
    """isCSIMigrationOn: EBS, GCE PD, Azure Disk and Cinder are migrated wherever the node has
    a CSINode object, even one without drivers: the in-tree filter steps aside."""
    for kind in TYPES:
        node = make_node("n", **{kind.limit_key: "1"})
        new = pod_with_n(kind, "new", 3)
        assert run(kind, new, [], node, []) == EXCEEDED
        assert run(kind, new, [], node, [csi_node("n")]) is None


def test_pv_volume_ids_are_the_sources_own() -> None:
    """FilterPersistentVolume: the untranslated ID (an AWS `aws://zone/vol` ID stays whole,
    an Azure disk counts by diskName, not its URI), and a PV's ID equal to an in-line
    volume's is the same volume."""
    pv = volume("pv", source={"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}})
    assert pv.volume_id == "aws://us-east-1a/vol-1"
    assert PersistentVolume.from_record(pv.to_record()) == pv
    azure = volume("az", source=source_of(AZURE_DISK_TYPE, "disk-1"))
    assert azure.volume_id == "disk-1"
    gce = volume("pd", source=source_of(GCE_PD_TYPE, "pd-1"))
    objects = [gce, claim("c", bound_to="pd")]
    node = node_with_limit(GCE_PD_TYPE, 1)
    same = make("new", inline(GCE_PD_TYPE, "pd-1"))
    assert run(GCE_PD_TYPE, same, [make("old", pvc_volume("c"))], node, objects) is None
    other = make("new", inline(GCE_PD_TYPE, "pd-2"))
    assert run(GCE_PD_TYPE, other, [make("old", pvc_volume("c"))], node, objects) == EXCEEDED


def test_pre_filter_skips_pods_without_such_volumes() -> None:
    """PreFilter: Skip unless a volume of the type, a claim or an ephemeral volume."""
    table = table_of([make_node("n")])
    p = plugin("EBSLimits")
    for skipped in (
        make("cfg", {"name": "cm", "configMap": {"name": "x"}}),
        make("gce", inline(GCE_PD_TYPE, "x")),
    ):
        _, status = p.pre_filter(CycleState(), skipped, table)
        assert status is not None and status.code == Code.SKIP
    for counted in (make("ebs", inline(EBS, "x")), make("pvc", pvc_volume("c")), EPHEMERAL_POD):
        assert p.pre_filter(CycleState(), counted, table) == (None, None)
    assert tuple(p.events_to_register()) == (NODE_ADD, ASSIGNED_POD_DELETE)


def test_placed_pod_errors_only_where_counted() -> None:
    """An existing pod whose ephemeral claim is not its own: an Error on its node, unless the
    node has a CSINode (upstream returns before reading the existing pods); a new pod without
    volumes of the type never reads them."""
    placed = [
        (make(f"stray{i}", {"name": "e", "ephemeral": {"volumeClaimTemplate": {}}}), node)
        for i, node in enumerate("ab")
    ]
    objects = [claim("stray0-e", "x"), claim("stray1-e", "x"), csi_node("b")]
    table = table_of([make_node("a"), make_node("b")], objects, placed)
    new = make("new", inline(EBS, "v"))
    got = run_filter("EBSLimits", new, table)
    assert got[0] is not None and got[0].code == Code.ERROR
    assert "pod is not owner" in got[0].message
    assert got[1] is None
    assert run_filter("EBSLimits", make("none", inline(CINDER_TYPE, "c")), table) == [None, None]


def test_many_nodes_in_one_filter() -> None:
    """The batch form: per-node limits (default, allocatable, Nitro), per-node placed volumes,
    nodes with a CSINode passing, in one call."""
    nitro = {"node.kubernetes.io/instance-type": "c5.large"}
    nodes = [
        make_node("n0", **{EBS.limit_key: "3"}),
        make_node("n1", **{EBS.limit_key: "3"}),
        make_node("n2", labels=nitro),
        make_node("n3"),
        make_node("n4", **{EBS.limit_key: "1"}),
        make_node("n5", **{EBS.limit_key: "2"}),
    ]
    objects = [
        csi_node("n4"),
        storage_class("ebs", "Immediate", EBS.provisioner),
        claim("unbound", "ebs"),
        volume("pv-0", source=source_of(EBS, "shared-0")),
        claim("bound", bound_to="pv-0"),
    ]
    placed = [
        (pod_with_n(EBS, "a", 2), "n0"),
        (pod_with_n(EBS, "b", 1), "n1"),
        (pod_with_n(EBS, "c", 23), "n2"),
        (pod_with_n(EBS, "c2", 23), "n3"),
        (pod_with_n(EBS, "d", 5), "n4"),
        (make("e", pvc_volume("bound")), "n5"),
    ]
    table = table_of(nodes, objects, placed)
    new = make("new", inline(EBS, "shared-0"), pvc_volume("unbound"))
    # n0: 2 + 2 > 3; n1: 1 + 2 = 3; n2: 23 + 2 = 25 (Nitro); n3: 25 <= 39;
    # n4: CSINode; n5: shared-0 already there, 1 + 1 = 2.
    assert run_filter("EBSLimits", new, table) == [EXCEEDED, None, None, None, None, None]
    third = make("new3", *new.volumes, inline(EBS, "x"))
    assert run_filter("EBSLimits", third, table) == [
        EXCEEDED,
        EXCEEDED,
        EXCEEDED,
        None,
        None,
        EXCEEDED,
    ]
