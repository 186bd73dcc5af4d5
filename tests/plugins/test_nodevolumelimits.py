"""NodeVolumeLimits (CSI), after upstream's csi_test.go TestCSILimits, with v1.28's statuses.

The fixtures are upstream's: for each driver, claims `csi-<driver>-<j>` bound to
volumes of the same name (a CSI volume, an AWS EBS one for the in-tree plugin
name, a hostPath one for the non-migratable plugin), `csi-4` unbound of class
`csi-sc` (whose provisioner is the first driver), `csi-5` without a class,
`csi-6` bound to a missing volume; the node reports `maxVols` for each driver
through its CSINode (or no limit, or node allocatable).
"""

from __future__ import annotations

from typing import Any

import pytest

from eventsched.framework import Code, CycleState, Status
from eventsched.model import Node, Pod
from eventsched.model.csimigration import attach_limit_key
from eventsched.plugins.nodevolumelimits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED
from tests.plugins.conftest import make_node, plugin, run_filter
from tests.plugins.storage import claim, csi_node, pvc_volume, storage_class, table_of, volume

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
AWS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH = "kubernetes.io/hostpath"
EXCEEDED = Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)


def pod(name: str, *claims: str, extra: tuple[dict[str, Any], ...] = ()) -> Pod:
    volumes = [pvc_volume(c, f"v{i}") for i, c in enumerate(claims)] + list(extra)
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "c"}], "volumes": volumes},
        }
    )


def ephemeral_pod(name: str, uid: str, *volume_names: str) -> Pod:
    volumes = [{"name": v, "ephemeral": {"volumeClaimTemplate": {}}} for v in volume_names]
    volumes += [{"name": "cm", "configMap": {"name": "c"}}]
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "namespace": "test", "uid": uid},
            "spec": {"containers": [{"name": "c"}], "volumes": volumes},
        }
    )


def fixtures(drivers: list[str]) -> list[Any]:
    """getFakeCSIPVLister, getFakeCSIPVCLister and getFakeCSIStorageClassLister."""
    objects: list[Any] = [storage_class("csi-sc", "Immediate", drivers[0])]
    for driver in drivers:
        for j in range(4):
            name = f"csi-{driver}-{j}"
            if driver == AWS_IN_TREE:
                source: dict[str, Any] = {"awsElasticBlockStore": {"volumeID": name}}
            elif driver == HOSTPATH:
                source = {"hostPath": {"path": "/tmp"}}
            else:
                source = {"csi": {"driver": driver, "volumeHandle": name}}
            objects.append(volume(name, source=source))
            objects.append(claim(name, bound_to=name))
    objects.append(claim("csi-4", "csi-sc"))
    objects.append(claim("csi-5"))
    objects.append(claim("csi-6", "csi-sc", bound_to="missing-in-action"))
    return objects


def limited_node(limit_source: str, max_vols: int, drivers: list[str]) -> tuple[Node, Any]:
    """getNodeWithPodAndVolumeLimits: the node and its CSINode (None without one)."""
    allocatable = {}
    if limit_source in ("node", "both"):
        allocatable = {attach_limit_key(d): str(max_vols) for d in drivers}
    node = make_node("node-for-max-pd-test-1", **allocatable)
    if limit_source in ("csinode", "both"):
        return node, csi_node(node.name, **{d.replace(".", "_"): max_vols for d in drivers})
    if limit_source == "csinode-with-no-limit":
        return node, csi_node(node.name, **{d.replace(".", "_"): None for d in drivers})
    return node, None


RUNNING = pod("running", "csi-ebs.csi.aws.com-3")
PENDING = pod("pending", "csi-4")
UNBOUND_2 = pod("unbound-2", "csi-4")
MISSING_PV = pod("missing-pv", "csi-6")
NO_SC = pod("no-sc", "csi-5")
GCE_TWO = pod("gce-two", "csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2")
IN_TREE_ONE = pod("in-tree-one", "csi-kubernetes.io/aws-ebs-0")
IN_TREE_TWO = pod("in-tree-two", "csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2")
EBS_ONE = pod("ebs-one", "csi-ebs.csi.aws.com-0")
EBS_TWO = pod("ebs-two", "csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2")
NON_MIGRATABLE = pod("non-migratable", "csi-kubernetes.io/hostpath-0")
INLINE = pod("inline", extra=({"name": "i", "awsElasticBlockStore": {"volumeID": "aws-inline1"}},))
INLINE_SAME_ID = pod(
    "inline-same",
    extra=({"name": "i", "awsElasticBlockStore": {"volumeID": "csi-ebs.csi.aws.com-1"}},),
)
IN_TREE_DRIVERS = [AWS_IN_TREE, EBS]

CASES = [
    # (test, new pod, existing pods, max vols, drivers, limit source, expected)
    ("fits when node volume limit >= new pods CSI volume", EBS_ONE, [RUNNING, EBS_TWO], 4, [EBS], "csinode", None),
    ("doesn't when node volume limit <= pods CSI volume", EBS_ONE, [RUNNING, EBS_TWO], 2, [EBS], "csinode", EXCEEDED),
    ("limit from node allocatable", EBS_ONE, [RUNNING, EBS_TWO], 2, [EBS], "node", EXCEEDED),
    ("the CSINode's count overrides node allocatable", EBS_ONE, [RUNNING, EBS_TWO], 4, [EBS], "both", None),
    ("should when driver does not support volume limits", EBS_ONE, [RUNNING, EBS_TWO], 2, [EBS], "csinode-with-no-limit", None),
    ("count pending PVCs towards volume limit <= pods CSI volume", EBS_ONE, [PENDING, EBS_TWO], 2, [EBS], "csinode", EXCEEDED),
    ("count multiple pending pvcs towards volume limit >= pods CSI volume", EBS_ONE, [PENDING, UNBOUND_2, EBS_TWO], 4, [EBS], "csinode", None),
    ("should count PVCs with invalid PV name but valid SC", EBS_ONE, [MISSING_PV, EBS_TWO], 2, [EBS], "csinode", EXCEEDED),
    ("don't count pvcs with missing SC towards volume limit", EBS_ONE, [RUNNING, NO_SC], 2, [EBS], "csinode", None),
    ("count pvcs with the same type towards volume limit", EBS_ONE, [GCE_TWO, EBS_TWO], 2, [EBS, GCE], "csinode", EXCEEDED),
    ("don't count pvcs with different type towards volume limit", GCE_TWO, [EBS_TWO, RUNNING], 2, [EBS, GCE], "csinode", None),
    ("should count in-tree volumes if migration is enabled", IN_TREE_ONE, [IN_TREE_TWO], 2, IN_TREE_DRIVERS, "csinode", EXCEEDED),
    ("nil csi node", INLINE, [IN_TREE_TWO], 0, IN_TREE_DRIVERS, "", None),
    ("should count unbound in-tree volumes if migration is enabled", PENDING, [IN_TREE_TWO], 2, IN_TREE_DRIVERS, "csinode", EXCEEDED),
    ("should not limit pod if volume used does not report limits", IN_TREE_ONE, [IN_TREE_TWO], 2, IN_TREE_DRIVERS, "csinode-with-no-limit", None),
    ("should not count non-migratable in-tree volumes", NON_MIGRATABLE, [EBS_TWO], 2, [HOSTPATH, EBS], "csinode", None),
    ("should count in-tree inline volumes if migration is enabled", INLINE, [IN_TREE_TWO], 2, IN_TREE_DRIVERS, "csinode", EXCEEDED),
    ("should count in-tree and csi volumes (scheduling in-tree volumes)", IN_TREE_ONE, [EBS_TWO], 2, IN_TREE_DRIVERS, "csinode", EXCEEDED),
    ("should count in-tree, inline and csi volumes", INLINE, [EBS_TWO, IN_TREE_ONE], 3, IN_TREE_DRIVERS, "csinode", EXCEEDED),
    ("should not count in-tree, inline and csi volumes (same CSI volume ID)", INLINE_SAME_ID, [EBS_TWO, IN_TREE_ONE], 3, IN_TREE_DRIVERS, "csinode", None),
    ("should count in-tree and csi volumes (scheduling csi volumes)", EBS_ONE, [IN_TREE_TWO], 2, IN_TREE_DRIVERS, "csinode", EXCEEDED),
]  # fmt: skip


@pytest.mark.parametrize(
    ("test", "new", "existing", "max_vols", "drivers", "source", "expected"),
    CASES,
    ids=[c[0] for c in CASES],
)
def test_csi_limits(
    test: str,
    new: Pod,
    existing: list[Pod],
    max_vols: int,
    drivers: list[str],
    source: str,
    expected: Status | None,
) -> None:
    """TestCSILimits (the cases without VolumeAttachments, which came after v1.28)."""
    node, csi = limited_node(source, max_vols, drivers)
    objects = [*fixtures(drivers), *([csi] if csi is not None else [])]
    table = table_of([node], objects, placed=[(p, node.name) for p in existing])
    assert run_filter("NodeVolumeLimits", new, table) == [expected]


EPHEMERAL = ephemeral_pod("abc", "12345", "xyz")
EPHEMERAL_TWO = ephemeral_pod("abc", "12345II", "x", "y")


def ephemeral_claim(pod: Pod, volume_name: str, owned: bool = True) -> Any:
    return claim(
        f"{pod.name}-{volume_name}",
        "csi-sc",
        namespace=pod.namespace,
        owner_uid=pod.uid if owned else "",
    )


EPHEMERAL_CASES = [
    ("ephemeral volume missing", EPHEMERAL, [], [], 0, "csinode-with-no-limit",
     Status.as_error('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found')),
    ("ephemeral volume not owned", EPHEMERAL, [ephemeral_claim(EPHEMERAL, "xyz", owned=False)], [], 0,
     "csinode-with-no-limit", Status.as_error("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)")),
    ("ephemeral volume unbound", EPHEMERAL, [ephemeral_claim(EPHEMERAL, "xyz")], [], 0, "csinode-with-no-limit", None),
    ("ephemeral doesn't when node volume limit <= pods CSI volume", EPHEMERAL,
     [ephemeral_claim(EPHEMERAL, "xyz")], [RUNNING, EBS_TWO], 2, "csinode", EXCEEDED),
    ("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", EBS_ONE,
     [ephemeral_claim(EPHEMERAL_TWO, "x"), ephemeral_claim(EPHEMERAL_TWO, "y")], [RUNNING, EPHEMERAL_TWO], 2,
     "csinode", EXCEEDED),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume", EBS_ONE,
     [ephemeral_claim(EPHEMERAL, "xyz")], [RUNNING, EPHEMERAL, EBS_TWO], 3, "csinode", EXCEEDED),
    ("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume", EBS_ONE,
     [ephemeral_claim(EPHEMERAL, "xyz")], [RUNNING, EPHEMERAL, EBS_TWO], 5, "csinode", None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("test", "new", "claims", "existing", "max_vols", "source", "expected"),
    EPHEMERAL_CASES,
    ids=[c[0] for c in EPHEMERAL_CASES],
)
def test_csi_limits_ephemeral(
    test: str,
    new: Pod,
    claims: list[Any],
    existing: list[Pod],
    max_vols: int,
    source: str,
    expected: Status | None,
) -> None:
    """TestCSILimits' ephemeral cases. v1.28 returns an Error for a missing claim
    (UnschedulableAndUnresolvable from v1.30, kubernetes#121952)."""
    node, csi = limited_node(source, max_vols, [EBS])
    objects = [*fixtures([EBS]), *claims, *([csi] if csi is not None else [])]
    table = table_of([node], objects, placed=[(p, node.name) for p in existing])
    got = run_filter("NodeVolumeLimits", new, table)
    assert got == [expected]


def test_pre_filter_skips_pods_without_counted_volumes() -> None:
    """TestCSILimits/skip Filter when the pod only uses secrets and configmaps, and
    "don't skip Filter" for a claim, an ephemeral or an in-line migratable volume."""
    table = table_of([make_node("n")])
    p = plugin("NodeVolumeLimits")
    only_config = pod("cfg", extra=({"name": "cm", "configMap": {"name": "x"}},))
    _, status = p.pre_filter(CycleState(), only_config, table)
    assert status is not None and status.code == Code.SKIP
    for counted in (EBS_ONE, EPHEMERAL, INLINE):
        assert p.pre_filter(CycleState(), counted, table) == (None, None)


def test_many_nodes_in_one_filter() -> None:
    """The batch form: per-node limits and per-node placed volumes, one call."""
    drivers = [EBS]
    nodes = [make_node(f"n{i}") for i in range(4)]
    limits = [csi_node("n0", ebs_csi_aws_com=2), csi_node("n1", ebs_csi_aws_com=3)]
    limits += [csi_node("n2", ebs_csi_aws_com=None)]  # n3: no CSINode, no limit
    table = table_of(
        nodes,
        [*fixtures(drivers), *limits],
        placed=[
            (RUNNING, "n0"),
            (EBS_TWO, "n0"),
            (pod("ebs-two-b", "csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2"), "n1"),
            (pod("running-b", "csi-ebs.csi.aws.com-3"), "n2"),
        ],
    )
    assert run_filter("NodeVolumeLimits", EBS_ONE, table) == [EXCEEDED, None, None, None]
    # The pod's own volume already attached on n0 is not counted twice.
    assert run_filter("NodeVolumeLimits", pod("again", "csi-ebs.csi.aws.com-3"), table) == [
        EXCEEDED,
        None,
        None,
        None,
    ]


def test_long_driver_names_use_the_hashed_limit_key() -> None:
    """GetCSIAttachLimitKey: a key of 63 characters or more keeps 23 of the driver's and a
    SHA-1 prefix."""
    driver = "a-very-long-csi-driver-name.storage.example.com"
    key = attach_limit_key(driver)
    assert key.startswith("attachable-volumes-csi-a-very-long-csi-driver")
    assert len(key) == len("attachable-volumes-csi-") + 23 + 16
    assert attach_limit_key(EBS) == "attachable-volumes-csi-ebs.csi.aws.com"
