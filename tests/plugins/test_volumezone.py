"""VolumeZone, after upstream's volume_zone_test.go (TestSingleZone, TestMultiZone, TestWithBinding).

The beta-to-GA label translation (the "pv with beta label,node with ga label" cases) is in
v1.28.0: the real kube-scheduler v1.28.0 binary places a pod whose volume has only the beta
zone label on a node that has only the GA one.
"""

from __future__ import annotations

import pytest

from eventsched.framework import Code, CycleState, Status
from eventsched.model import NodeTable
from eventsched.plugins.volumezone import ERR_REASON_CONFLICT
from tests.plugins.conftest import make_node, plugin, run_filter
from tests.plugins.storage import (
    BETA_REGION,
    BETA_ZONE,
    REGION,
    ZONE,
    claim,
    pod_with,
    pvc_volume,
    storage_class,
    table_of,
    volume,
)

CONFLICT = Status.unresolvable(ERR_REASON_CONFLICT)

VOLUMES = [
    volume("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    volume("Vol_2", labels={BETA_REGION: "us-west1", "uselessLabel": "none"}),
    volume("Vol_3", labels={BETA_REGION: "us-west1"}),
    volume("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
    volume("Vol_Stable_2", labels={REGION: "us-west1", "uselessLabel": "none"}),
    volume("Vol_Stable_3", labels={ZONE: "us-west1-a", REGION: "us-west1-a"}),
    volume("Vol_Multi_3", labels={BETA_ZONE: "us-west1-c__us-west1-a"}),
    volume("Vol_Multi_Stable_2", labels={ZONE: "us-west1-c__us-west1-a"}),
]
CLAIMS = [
    claim("PVC_1", bound_to="Vol_1"),
    claim("PVC_2", bound_to="Vol_2"),
    claim("PVC_3", bound_to="Vol_3"),
    claim("PVC_4", bound_to="Vol_not_exist"),
    claim("PVC_Stable_1", bound_to="Vol_Stable_1"),
    claim("PVC_Stable_2", bound_to="Vol_Stable_2"),
    claim("PVC_Stable_3", bound_to="Vol_Stable_3"),
    claim("PVC_Multi_3", bound_to="Vol_Multi_3"),
    claim("PVC_Multi_Stable_2", bound_to="Vol_Multi_Stable_2"),
]


def zone_table(labels: dict[str, str]) -> NodeTable:
    return table_of([make_node("host1", labels=labels)], [*VOLUMES, *CLAIMS])


@pytest.mark.parametrize(
    ("test", "claim_name", "labels", "expected"),
    [
        # TestSingleZone
        ("node without labels", "PVC_1", {}, None),
        (
            "beta zone label matched",
            "PVC_1",
            {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
            None,
        ),
        ("beta region label matched", "PVC_2", {BETA_REGION: "us-west1"}, None),
        ("beta region label doesn't match", "PVC_2", {BETA_REGION: "no_us-west1"}, CONFLICT),
        ("beta zone label doesn't match", "PVC_1", {BETA_ZONE: "no_us-west1-a"}, CONFLICT),
        ("zone label matched", "PVC_Stable_1", {ZONE: "us-west1-a"}, None),
        ("region label matched", "PVC_Stable_2", {REGION: "us-west1"}, None),
        ("region label doesn't match", "PVC_Stable_2", {REGION: "no_us-west1"}, CONFLICT),
        ("zone label doesn't match", "PVC_Stable_1", {ZONE: "no_us-west1-a"}, CONFLICT),
        (
            "pv with zone and region, node with only zone",
            "PVC_Stable_3",
            {ZONE: "us-west1-a"},
            CONFLICT,
        ),
        ("pv with zone,node with beta zone", "PVC_Stable_1", {BETA_ZONE: "us-west1-a"}, CONFLICT),
        ("pv with beta label,node with ga label, matched", "PVC_1", {ZONE: "us-west1-a"}, None),
        (
            "pv with beta label,node with ga label, don't match",
            "PVC_1",
            {ZONE: "us-west1-b"},
            CONFLICT,
        ),
        # TestMultiZone
        ("multi: node without labels", "PVC_Multi_3", {}, None),
        ("multi: beta zone label matched", "PVC_Multi_3", {BETA_ZONE: "us-west1-a"}, None),
        ("multi: beta zone label doesn't match", "PVC_1", {BETA_ZONE: "us-west1-b"}, CONFLICT),
        ("multi: zone label matched", "PVC_Multi_Stable_2", {ZONE: "us-west1-a"}, None),
        ("multi: zone label doesn't match", "PVC_Stable_1", {ZONE: "us-west1-b"}, CONFLICT),
    ],
)
def test_zones(test: str, claim_name: str, labels: dict[str, str], expected: Status | None) -> None:
    pod = pod_with("pod_1", pvc_volume(claim_name))
    assert run_filter("VolumeZone", pod, zone_table(labels)) == [expected]


def test_a_pod_without_volumes_is_skipped() -> None:
    """TestSingleZone/pod without volume."""
    _, status = plugin("VolumeZone").pre_filter(
        CycleState(), pod_with("pod_1"), zone_table({BETA_ZONE: "us-west1-a"})
    )
    assert status is not None and status.code == Code.SKIP


def test_one_filter_over_many_nodes() -> None:
    """The batch form: nodes with and without labels, matching and not, in one call."""
    table = table_of(
        [
            make_node("a", labels={ZONE: "us-west1-a"}),
            make_node("b", labels={ZONE: "us-west1-b"}),
            make_node("c"),
            make_node("d", labels={"other": "x"}),
            make_node("e", labels={REGION: "us-west1"}),
        ],
        [*VOLUMES, *CLAIMS],
    )
    pod = pod_with("pod_1", pvc_volume("PVC_Stable_1"))
    assert run_filter("VolumeZone", pod, table) == [None, CONFLICT, None, None, CONFLICT]


BINDING = [
    storage_class("Class_Immediate", "Immediate"),
    storage_class("Class_Wait", "WaitForFirstConsumer"),
    volume("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    claim("PVC_1", bound_to="Vol_1"),
    claim("PVC_NoSC", "Class_0"),
    claim("PVC_EmptySC"),
    claim("PVC_WaitSC", "Class_Wait"),
    claim("PVC_ImmediateSC", "Class_Immediate"),
    claim("PVC_4", bound_to="Vol_not_exist"),
]


@pytest.mark.parametrize(
    ("test", "claim_name", "expected"),
    [
        ("label zone failure domain matched", "PVC_1", None),
        (
            "unbound volume empty storage class",
            "PVC_EmptySC",
            Status.unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
        ),
        (
            "unbound volume no storage class",
            "PVC_NoSC",
            Status.unresolvable('storageclass.storage.k8s.io "Class_0" not found'),
        ),
        (
            "unbound volume immediate binding mode",
            "PVC_ImmediateSC",
            Status.unresolvable("PersistentVolume had no name"),
        ),
        ("unbound volume wait binding mode", "PVC_WaitSC", Status(Code.SKIP)),
        (
            "pv not found",
            "PVC_4",
            Status.unresolvable('persistentvolume "Vol_not_exist" not found'),
        ),
        (
            "pvc not found",
            "PVC_404",
            Status.unresolvable('persistentvolumeclaim "PVC_404" not found'),
        ),
    ],
)
def test_with_binding(test: str, claim_name: str, expected: Status | None) -> None:
    """TestWithBinding: PreFilter's statuses (the real listers' NotFound messages: singular
    resource names, `storageclass.storage.k8s.io`)."""
    table = table_of([make_node("host1", labels={BETA_ZONE: "us-west1-a"})], BINDING)
    _, status = plugin("VolumeZone").pre_filter(
        CycleState(), pod_with("pod_1", pvc_volume(claim_name)), table
    )
    assert status == expected


def test_a_label_that_does_not_parse_is_ignored() -> None:
    """LabelZonesToSet refuses an empty zone: the label is ignored (upstream logs it)."""
    table = table_of(
        [make_node("host1", labels={ZONE: "elsewhere"})],
        [volume("v", labels={ZONE: "a____b"}), claim("c", bound_to="v")],
    )
    _, status = plugin("VolumeZone").pre_filter(CycleState(), pod_with("p", pvc_volume("c")), table)
    assert status is not None and status.code == Code.SKIP


def test_ephemeral_volumes_are_not_read() -> None:
    """VolumeZone reads `persistentVolumeClaim` volumes only."""
    table = table_of([make_node("host1")], [])
    pod = pod_with("p", {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}})
    _, status = plugin("VolumeZone").pre_filter(CycleState(), pod, table)
    assert status is not None and status.code == Code.SKIP
