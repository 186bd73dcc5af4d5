"""NodeVolumeLimits at 1.30, 1.32, 1.35-1.37 (nodevolumelimits/csi.go of each), after v1.37.2's
csi_test.go TestCSILimits and TestVolumeLimitScalingGate; v1.28's table is
test_nodevolumelimits.py."""

from __future__ import annotations

from typing import Any

import pytest

from eventsched.config.featuregates import features_for
from eventsched.framework import Code, Status
from eventsched.model.volumes import CSIDriver, CSINode
from tests.plugins.conftest import run_filter
from tests.plugins.storage import table_of
from tests.plugins.test_nodevolumelimits import (
    EBS,
    EBS_ONE,
    EBS_TWO,
    EPHEMERAL,
    EXCEEDED,
    RUNNING,
    fixtures,
    limited_node,
)

V137 = features_for("1.37")


def verdict(
    new: Any, existing: list[Any], max_vols: int, source: str, version: str, *extra: Any
) -> Status | None:
    node, csi = limited_node(source, max_vols, [EBS])
    objects = [*fixtures([EBS]), *([csi] if csi is not None else []), *extra]
    table = table_of([node], objects, placed=[(p, node.name) for p in existing])
    (status,) = run_filter("NodeVolumeLimits", new, table, features=features_for(version))
    return status


@pytest.mark.parametrize(("version", "expected"), [("1.31", EXCEEDED), ("1.32", None)])
def test_node_allocatable_limits_count_until_1_31(version: str, expected: Status | None) -> None:
    # v1.28 "limit from node allocatable"; from v1.32.0 getVolumeLimits reads CSINode only.
    assert verdict(EBS_ONE, [RUNNING, EBS_TWO], 2, "node", version) == expected
    assert verdict(EBS_ONE, [RUNNING, EBS_TWO], 2, "csinode", version) == EXCEEDED


@pytest.mark.parametrize(
    ("version", "code"), [("1.29", Code.ERROR), ("1.30", Code.UNSCHEDULABLE_AND_UNRESOLVABLE)]
)
def test_a_missing_claim_is_unresolvable_from_1_30(version: str, code: Code) -> None:
    # TestCSILimits "ephemeral volume missing": UnschedulableAndUnresolvable from v1.30.0
    # (apierrors.IsNotFound), an Error before; the same words.
    status = verdict(EPHEMERAL, [], 0, "csinode-with-no-limit", version)
    assert status is not None and status.code == code
    assert (
        status.message == 'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found'
    )


def driver(prevent: bool) -> CSIDriver:
    spec = {"preventPodSchedulingIfMissing": True} if prevent else {}
    return CSIDriver.from_manifest({"metadata": {"name": EBS}, "spec": spec})


def bare_csinode() -> CSINode:
    """`initCSINode`: the node's CSINode, with no driver ("no-csi-driver")."""
    return CSINode.from_manifest(
        {"metadata": {"name": "node-for-max-pd-test-1"}, "spec": {"drivers": []}}
    )


NOT_INSTALLED = Status.unschedulable(f"{EBS} CSI driver is not installed on the node")


# TestVolumeLimitScalingGate (v1.37.2), case by case.
@pytest.mark.parametrize(
    ("name", "version", "source", "limit", "csi_driver", "expected"),
    [
        ("gate enabled - allow scheduling when CSIDriver exists but PreventPodSchedulingIfMissing is not set",
         "1.37", "", 0, driver(False), None),
        ("gate enabled - fail when driver not installed and PreventPodSchedulingIfMissing is true",
         "1.37", "", 0, driver(True), NOT_INSTALLED),
        ("gate disabled - skip driver presence check (regardless of CSIDriver presence)",
         "1.36", "", 0, driver(True), None),
        ("gate enabled - driver installed within limit", "1.37", "csinode", 2, driver(True), None),
        ("gate enabled - allow scheduling when CSIDriver object missing", "1.37", "", 0, None, None),
    ],
)  # fmt: skip
def test_volume_limit_scaling_gate(
    name: str,
    version: str,
    source: str,
    limit: int,
    csi_driver: CSIDriver | None,
    expected: Status | None,
) -> None:
    extra = [csi_driver] if csi_driver is not None else []
    if source == "":
        extra.append(bare_csinode())
    assert verdict(EBS_ONE, [], limit, source, version, *extra) == expected


def test_1_35_checks_every_csi_driver_where_its_gate_is_on() -> None:
    # v1.35.0 checkCSIDriverOnNode: any CSIDriver object (there is no opt-in field yet);
    # VolumeLimitScaling is alpha and off there.
    node, _ = limited_node("", 0, [EBS])
    objects = [*fixtures([EBS]), driver(False), bare_csinode()]
    table = table_of([node], objects)
    on = features_for("1.35", {"VolumeLimitScaling": True})
    assert run_filter("NodeVolumeLimits", EBS_ONE, table, features=on) == [NOT_INSTALLED]
    assert run_filter("NodeVolumeLimits", EBS_ONE, table, features=features_for("1.35")) == [None]


def test_a_csi_driver_record_keeps_the_opt_in() -> None:
    assert CSIDriver.from_record(driver(True).to_record()) == driver(True)
    assert "preventPodSchedulingIfMissing" not in driver(False).to_record()
