"""VolumeRestrictions, after upstream's volume_restrictions_test.go (v1.28)."""

from __future__ import annotations

from typing import Any

import pytest

from eventsched.config.featuregates import features_for
from eventsched.framework import Code, CycleState, PluginArgsError, Status
from eventsched.model import Pod
from eventsched.plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT_1_34,
)
from tests.plugins.conftest import plugin, run_filter
from tests.plugins.storage import claim, node, pod_with, pvc_volume, table_of

DISK = Status.unschedulable(ERR_REASON_DISK_CONFLICT)
RWOP = Status.unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)


def gce(pd: str, read_only: bool = False) -> dict[str, Any]:
    return {"name": f"gce-{pd}", "gcePersistentDisk": {"pdName": pd, "readOnly": read_only}}


def ebs(volume_id: str) -> dict[str, Any]:
    return {"name": f"ebs-{volume_id}", "awsElasticBlockStore": {"volumeID": volume_id}}


def rbd(monitors: list[str], pool: str = "foo", image: str = "bar") -> dict[str, Any]:
    return {"name": "rbd", "rbd": {"monitors": monitors, "pool": pool, "image": image}}


def iscsi(iqn: str, read_only: bool = False) -> dict[str, Any]:
    return {
        "name": "iscsi",
        "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": iqn, "lun": 0, "readOnly": read_only},
    }


ISCSI_1 = "iqn.2016-12.server:storage.target01"
ISCSI_2 = "iqn.2016-12.server:storage.target02"


@pytest.mark.parametrize(
    ("test", "wanted", "existing", "expected"),
    [
        # TestGCEDiskConflicts
        ("gce nothing", [], [], None),
        ("gce one state", [], [gce("foo")], None),
        ("gce same state", [gce("foo")], [gce("foo")], DISK),
        ("gce different state", [gce("bar")], [gce("foo")], None),
        ("gce both read-only", [gce("foo", True)], [gce("foo", True)], None),
        ("gce one read-only", [gce("foo", True)], [gce("foo")], DISK),
        # TestAWSDiskConflicts
        ("aws nothing", [], [], None),
        ("aws one state", [], [ebs("foo")], None),
        ("aws same state", [ebs("foo")], [ebs("foo")], DISK),
        ("aws different state", [ebs("bar")], [ebs("foo")], None),
        # TestRBDDiskConflicts
        ("rbd one state", [], [rbd(["a", "b"])], None),
        ("rbd same state", [rbd(["a", "b"])], [rbd(["a", "b"])], DISK),
        ("rbd different monitors", [rbd(["c", "d"])], [rbd(["a", "b"])], None),
        ("rbd overlapping monitors", [rbd(["b", "c"])], [rbd(["a", "b"])], DISK),
        ("rbd other image", [rbd(["a"], image="baz")], [rbd(["a"])], None),
        # TestISCSIDiskConflicts
        ("iscsi one state", [], [iscsi(ISCSI_1)], None),
        ("iscsi same state", [iscsi(ISCSI_1)], [iscsi(ISCSI_1)], DISK),
        ("iscsi different state", [iscsi(ISCSI_2)], [iscsi(ISCSI_1)], None),
        ("iscsi both read-only", [iscsi(ISCSI_1, True)], [iscsi(ISCSI_1, True)], None),
    ],
)
def test_disk_conflicts(
    test: str, wanted: list[dict], existing: list[dict], expected: Status | None
) -> None:
    """Test{GCE,AWS,RBD,ISCSI}DiskConflicts: a disk mounted by a pod on the node conflicts
    (GCE and iSCSI unless both are read-only); the other node, without it, is free."""
    table = table_of([node("n1"), node("n2")], placed=[(pod_with("existing", *existing), "n1")])
    assert run_filter("VolumeRestrictions", pod_with("p", *wanted), table) == [expected, None]


def test_rbd_pool_defaults_as_the_api_server_defaults_it() -> None:
    """An rbd volume without `pool` is in pool "rbd" (API default), the same as one naming it."""
    mine = {"name": "r", "rbd": {"monitors": ["a"], "image": "img"}}
    theirs = {"name": "r", "rbd": {"monitors": ["a"], "image": "img", "pool": "rbd"}}
    table = table_of([node("n1")], placed=[(pod_with("existing", theirs), "n1")])
    assert run_filter("VolumeRestrictions", pod_with("p", mine), table) == [DISK]


def test_a_pod_without_volumes_is_skipped() -> None:
    """TestAccessModeConflicts/nothing: PreFilter returns Skip."""
    table = table_of([node("n1")])
    state = CycleState()
    _, status = plugin("VolumeRestrictions").pre_filter(state, pod_with("p"), table)
    assert status is not None and status.code == Code.SKIP


def test_a_missing_claim_is_unresolvable() -> None:
    """TestAccessModeConflicts/failed to get PVC."""
    table = table_of([node("n1")])
    pod = pod_with("p", pvc_volume("claim-with-rwop-1"))
    _, status = plugin("VolumeRestrictions").pre_filter(CycleState(), pod, table)
    assert status == Status.unresolvable('persistentvolumeclaim "claim-with-rwop-1" not found')


def rwop(name: str) -> Any:
    return claim(name, "sc", access_modes=["ReadWriteOncePod"])


def test_read_write_once_pod_claim_in_use_fails_every_node() -> None:
    """TestAccessModeConflicts/access mode conflict, unschedulable: a placed pod (on any node)
    uses the ReadWriteOncePod claim; Unschedulable on every node, for preemption to help."""
    user = pod_with("user", pvc_volume("claim-with-rwop-1"))
    table = table_of(
        [node("n1"), node("n2")],
        [rwop("claim-with-rwop-1"), rwop("claim-with-rwop-2")],
        placed=[(user, "n1")],
    )
    pod = pod_with("p", pvc_volume("claim-with-rwop-1"), pvc_volume("claim-with-rwop-2"))
    assert run_filter("VolumeRestrictions", pod, table) == [RWOP, RWOP]


def test_read_write_once_pod_claim_not_in_use_is_skipped() -> None:
    """TestAccessModeConflicts/no access mode conflict: no placed pod uses the claim (one in
    another namespace with the same claim name does not count)."""
    other = Pod.from_manifest(
        {
            "metadata": {"name": "other", "namespace": "team", "uid": "uid-other"},
            "spec": {"containers": [{"name": "c"}], "volumes": [pvc_volume("claim-with-rwop-1")]},
        }
    )
    table = table_of([node("n1")], [rwop("claim-with-rwop-1")], placed=[(other, "n1")])
    pod = pod_with("p", pvc_volume("claim-with-rwop-1"))
    _, status = plugin("VolumeRestrictions").pre_filter(CycleState(), pod, table)
    assert status is not None and status.code == Code.SKIP


def test_read_write_many_claims_do_not_conflict() -> None:
    """Only ReadWriteOncePod claims are counted."""
    shared = claim("shared", "sc", access_modes=["ReadWriteMany"])
    user = pod_with("user", pvc_volume("shared"))
    table = table_of([node("n1")], [shared], placed=[(user, "n1")])
    assert run_filter("VolumeRestrictions", pod_with("p", pvc_volume("shared")), table) == [None]


def test_disk_conflict_is_reported_before_the_claim_conflict() -> None:
    """Filter checks the in-line disks first, then ReadWriteOncePod."""
    user = pod_with("user", pvc_volume("rwop"), gce("foo"))
    table = table_of([node("n1"), node("n2")], [rwop("rwop")], placed=[(user, "n1")])
    pod = pod_with("p", pvc_volume("rwop"), gce("foo"))
    assert run_filter("VolumeRestrictions", pod, table) == [DISK, RWOP]


def test_malformed_volumes_do_not_raise() -> None:
    """A source that is not an object is read as empty, never an exception."""
    bad = {"name": "x", "gcePersistentDisk": "oops"}
    table = table_of([node("n1")], placed=[(pod_with("user", bad), "n1")])
    assert run_filter("VolumeRestrictions", pod_with("p", bad), table) == [DISK]


def test_args_are_refused() -> None:
    with pytest.raises(PluginArgsError, match="VolumeRestrictions takes no args"):
        plugin("VolumeRestrictions", {"x": 1})


@pytest.mark.parametrize(
    ("version", "reason"),
    [
        ("1.33", ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT),
        ("1.34", ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT_1_34),
        ("1.37", ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT_1_34),
    ],
)
def test_the_read_write_once_pod_reason_of_each_version(version: str, reason: str) -> None:
    """volume_restrictions.go ErrReasonReadWriteOncePodConflict: v1.33.0 has v1.28's words,
    v1.34.4 and v1.37.2 the new ones (TestAccessModeConflicts, "access mode conflict,
    unschedulable", compares the status with the constant)."""
    assert reason == (
        "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
        "already in-use by another pod"
        if version != "1.33"
        else "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod "
        "access mode"
    )
    user = pod_with("user", pvc_volume("rwop"))
    table = table_of([node("n1"), node("n2")], [rwop("rwop")], placed=[(user, "n1")])
    statuses = run_filter(
        "VolumeRestrictions",
        pod_with("p", pvc_volume("rwop")),
        table,
        features=features_for(version),
    )
    assert statuses == [Status.unschedulable(reason)] * 2
