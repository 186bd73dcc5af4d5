"""VolumeBinding's score under StorageCapacityScoring (volumebinding/scoring.py), after upstream's
volume_binding_test.go TestVolumeBinding (v1.37.2) wantScores; its args, messages and volume
attributes classes by version."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from eventsched.config.featuregates import features_for
from eventsched.framework import Code, CycleState, Features, PluginArgsError, Status
from eventsched.model import NodeTable, Pod
from eventsched.model.volumes import PersistentVolume, PersistentVolumeClaim
from eventsched.plugins.volumebinding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NODE_CONFLICT_1_33,
)
from tests.plugins.conftest import plugin, run_filter, run_score
from tests.plugins.storage import (
    HOSTNAME,
    REGION,
    ZONE,
    claim,
    csi_driver,
    node,
    pod_with,
    pvc_volume,
    storage_capacity,
    storage_class,
    table_of,
    volume,
)

V137 = features_for("1.37")
WAIT = storage_class("wait-sc")
WAIT_HDD = storage_class("wait-hdd-sc")
WITH_CAPACITY = storage_class(
    "wait-sc-with-storage-capacity", provisioner="driver-with-storage-capacity"
)
CLASSES = [WAIT, WAIT_HDD, WITH_CAPACITY, csi_driver("driver-with-storage-capacity")]
NODE_KEY = "nodeKey"
BIND_CONFLICT = Status.unresolvable(ERR_REASON_BIND_CONFLICT)


def scores(
    claims: list[str],
    objects: list[Any],
    nodes: list[Any],
    args: dict[str, Any] | None = None,
    features: Features = V137,
) -> tuple[list[Status | None], list[int]]:
    """Filter's verdicts and Score's raw scores on every node (upstream scores those that
    passed; the others score 0 here, as they have no volumes kept)."""
    pod = pod_with("pod-a", *(pvc_volume(c) for c in claims))
    table = table_of(nodes, [*CLASSES, *objects])
    return run_filter("VolumeBinding", pod, table, args, features), _scored(
        pod, table, args, features
    )


def _scored(
    pod: Pod, table: NodeTable, args: dict[str, Any] | None, features: Features
) -> list[int]:
    """PreFilter, Filter, PreScore (Skip: zeros) and Score, as the runtime runs them."""
    p = plugin("VolumeBinding", args, table, features)
    state = CycleState()
    rows = np.arange(len(table))
    p.pre_filter(state, pod, table)
    p.filter_batch(state, pod, table, rows)
    status = p.pre_score(state, pod, table, rows)
    if status is not None and status.is_skip:
        return [0] * len(table)
    return [int(x) for x in p.score_batch(state, pod, table, rows)]


def local(name: str, cls: str, capacity: str, host: str) -> Any:
    return volume(name, cls, capacity=capacity, affinity={HOSTNAME: [host]})


def zonal(name: str, capacity: str, zone: str) -> Any:
    return volume(
        name, "wait-sc", capacity=capacity, affinity={REGION: [f"region-{zone}"], ZONE: [zone]}
    )


LOCAL = [
    local("pv-a-0", "wait-sc", "200Gi", "node-a"),
    local("pv-a-1", "wait-sc", "200Gi", "node-a"),
    local("pv-b-0", "wait-sc", "100Gi", "node-b"),
    local("pv-b-1", "wait-sc", "100Gi", "node-b"),
]
ABC = [node("node-a"), node("node-b"), node("node-c")]
ZONAL = [
    zonal("pv-a-0", "200Gi", "zone-a"),
    zonal("pv-a-1", "200Gi", "zone-a"),
    zonal("pv-b-0", "100Gi", "zone-b"),
    zonal("pv-b-1", "100Gi", "zone-b"),
]
SIX = [
    node(f"{zone}-node-{n}", **{REGION: f"region-{zone}", ZONE: zone})
    for zone in ("zone-a", "zone-b", "zone-c")
    for n in ("a", "b")
]
KEYED = [node(n, **{NODE_KEY: n}) for n in ("node-a", "node-b", "node-c")]


def capacities(*sizes: str) -> list[Any]:
    return [
        storage_capacity(n, WITH_CAPACITY.name, {NODE_KEY: n}, capacity=size)
        for n, size in zip(("node-a", "node-b", "node-c"), sizes, strict=False)
    ]


def test_local_volumes_with_close_capacity_are_preferred() -> None:
    """TestVolumeBinding "local volumes with close capacity are preferred": 50Gi of 200Gi
    scores 75, of 100Gi 50; node-c has no volume."""
    pvc = claim("pvc-a", "wait-sc", storage="50Gi")
    filtered, raw = scores(["pvc-a"], [pvc, *LOCAL], ABC)
    assert filtered == [None, None, BIND_CONFLICT]
    assert raw == [75, 50, 0]


def test_disabled_storage_capacity_scoring_skips_prescore() -> None:
    """ "... (StorageCapacityScoring disabled)": no scorer, PreScore Skip (1.34's default)."""
    pvc = claim("pvc-a", "wait-sc", storage="50Gi")
    p = plugin("VolumeBinding", features=features_for("1.34"))
    table = table_of(ABC, [*CLASSES, pvc, *LOCAL])
    status = p.pre_score(CycleState(), pod_with("p"), table, np.arange(3))
    assert status is not None and status.is_skip
    assert scores(["pvc-a"], [pvc, *LOCAL], ABC, features=features_for("1.34"))[1] == [0, 0, 0]


def test_local_volumes_of_two_classes_average_per_class() -> None:
    """ "... (multiple pvcs)": node-a (50/200 and 100/200) 75 and 50 -> 63 (Go's
    math.Round of 62.5); node-b (50/100, 100/100) 50 and 0 -> 25."""
    objects = [
        claim("pvc-0", "wait-sc", storage="50Gi"),
        claim("pvc-1", "wait-hdd-sc", storage="100Gi"),
        *LOCAL,
        local("pv-a-2", "wait-hdd-sc", "200Gi", "node-a"),
        local("pv-a-3", "wait-hdd-sc", "200Gi", "node-a"),
        local("pv-b-2", "wait-hdd-sc", "100Gi", "node-b"),
        local("pv-b-3", "wait-hdd-sc", "100Gi", "node-b"),
    ]
    assert scores(["pvc-0", "pvc-1"], objects, ABC)[1] == [63, 25, 0]


def test_zonal_volumes_with_close_capacity_are_preferred() -> None:
    """ "zonal volumes with close capacity are preferred" and "(custom shape)"."""
    pvc = claim("pvc-a", "wait-sc", storage="50Gi")
    filtered, raw = scores(["pvc-a"], [pvc, *ZONAL], SIX)
    assert filtered == [None] * 4 + [BIND_CONFLICT] * 2
    assert raw == [75, 75, 50, 50, 0, 0]
    shape = [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 3}]
    shape.append({"utilization": 100, "score": 5})
    custom = {"bindTimeoutSeconds": 300, "shape": shape}
    assert scores(["pvc-a"], [pvc, *ZONAL], SIX, custom)[1] == [15, 15, 30, 30, 0, 0]


def test_storage_capacity_score() -> None:
    """ "storage capacity score": a 10Gi claim to provision, capacities 100, 50, 10Gi."""
    pvc = claim("pvc-dynamic", WITH_CAPACITY.name, storage="10Gi")
    filtered, raw = scores(["pvc-dynamic"], [pvc, *capacities("100Gi", "50Gi", "10Gi")], KEYED)
    assert filtered == [None, None, None]
    assert raw == [90, 80, 0]


def test_storage_capacity_score_with_static_binds() -> None:
    """ "storage capacity score with static binds": the static binding (50 of 100Gi) decides."""
    objects = [
        claim("pvc-dynamic", WITH_CAPACITY.name, storage="10Gi"),
        claim("pvc-static", "wait-sc", storage="50Gi"),
        local("pv-static-a", "wait-sc", "100Gi", "node-a"),
        local("pv-static-b", "wait-sc", "100Gi", "node-b"),
        local("pv-static-c", "wait-sc", "100Gi", "node-c"),
        *capacities("100Gi", "50Gi", "10Gi"),
    ]
    nodes = [node(n, **{NODE_KEY: n}) for n in ("node-a", "node-b", "node-c")]
    assert scores(["pvc-dynamic", "pvc-static"], objects, nodes)[1] == [50, 50, 50]


def test_two_claims_of_one_class_share_its_capacity() -> None:
    """ "dynamic provisioning with multiple PVCs of the same StorageClass": capacity is
    assigned, not summed: 100Gi requested of 100Gi scores 0."""
    objects = [
        claim("pvc-dynamic-0", WITH_CAPACITY.name, storage="50Gi"),
        claim("pvc-dynamic-1", WITH_CAPACITY.name, storage="50Gi"),
        *capacities("100Gi"),
    ]
    assert scores(["pvc-dynamic-0", "pvc-dynamic-1"], objects, KEYED[:1])[1] == [0]


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ([(0, 0), (100, 10)], [10, 50, 100]),  # "prefer node with least allocatable"
        ([(0, 10), (100, 0)], [90, 50, 0]),  # "prefer node with maximum allocatable"
    ],
)
def test_the_shape_decides_which_pool_is_preferred(
    shape: list[tuple[int, int]], expected: list[int]
) -> None:
    pvc = claim("pvc-dynamic", WITH_CAPACITY.name, storage="10Gi")
    args = {"shape": [{"utilization": u, "score": s} for u, s in shape]}
    objects = [pvc, *capacities("100Gi", "20Gi", "10Gi")]
    assert scores(["pvc-dynamic"], objects, KEYED, args)[1] == expected


def test_a_pod_without_claims_scores_zero_but_is_scored_from_1_37() -> None:
    """PreScore with the gate on returns nil whatever the pod (volume_binding.go): VolumeBinding
    is in the score table of every pod; 1.34 (gate off) Skips it."""
    table = table_of(ABC, CLASSES)
    p = plugin("VolumeBinding", features=V137)
    pod = pod_with("plain")
    assert _scored(pod, table, None, V137) == [0, 0, 0]
    assert p.shape_args == ((0, 10), (100, 0))
    assert run_score("VolumeBinding", pod, table, features=features_for("1.34")) == (
        [0, 0, 0],
        [0, 0, 0],
    )


@pytest.mark.parametrize(
    ("version", "args", "message"),
    [
        ("1.28", {"shape": []}, "unsupported when VolumeCapacityPriority is disabled"),
        (
            "1.34",
            {"shape": [{"utilization": 0, "score": 0}]},
            "unexpected field `shape`, remove it or turn on the feature gate "
            "StorageCapacityScoring",
        ),
        ("1.37", {"shape": [{"utilization": 0, "score": 11}]}, "not in valid range \\[0, 10\\]"),
        (
            "1.37",
            {"shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]},
            "Invalid value: 10: values must be sorted in increasing order",
        ),
    ],
)
def test_shape_args_by_version(version: str, args: dict[str, Any], message: str) -> None:
    """ValidateVolumeBindingArgsWithOptions (AllowStorageCapacityScoring = the gate)."""
    with pytest.raises(PluginArgsError, match=message):
        plugin("VolumeBinding", args, features=features_for(version))


@pytest.mark.parametrize(
    ("version", "reason"),
    [("1.32", ERR_REASON_NODE_CONFLICT), ("1.33", ERR_REASON_NODE_CONFLICT_1_33)],
)
def test_the_node_conflict_reason_of_each_version(version: str, reason: str) -> None:
    """binder.go ErrReasonNodeConflict: v1.32.0 "had volume node affinity conflict", v1.33.0
    on "didn't match PersistentVolume's node affinity" (kubernetes#129887)."""
    bound = claim("pvc-a", "wait-sc", bound_to="pv-a")
    pv = volume("pv-a", "wait-sc", affinity={HOSTNAME: ["node-b"]}, claim_ref=("default", "pvc-a"))
    table = table_of([node("node-a")], [*CLASSES, bound, pv])
    statuses = run_filter(
        "VolumeBinding", pod_with("p", pvc_volume("pvc-a")), table, features=features_for(version)
    )
    assert statuses == [Status.unresolvable(reason)]


def vac_claim(name: str, vac: str = "") -> Any:
    pvc = claim(name, "wait-sc", storage="50Gi")
    return replace(pvc, volume_attributes_class=vac)


def vac_volume(name: str, vac: str = "", **kw: Any) -> Any:
    return replace(local(name, "wait-sc", "100Gi", "node-a", **kw), volume_attributes_class=vac)


@pytest.mark.parametrize(
    ("test", "version", "claim_vac", "volume_vac", "expected"),
    [
        # component-helpers pv_helpers_test.go TestFindMatchingVolume (VAC cases)
        ("success-match-with-vac", "1.34", "gold", "gold", "static"),
        ("fail-vac", "1.34", "silver", "", "provision"),
        ("fail-prebound-vac-like: other class", "1.37", "silver", "gold", "provision"),
        ("fail-volumes-vac", "1.33", "", "gold", "provision"),
        ("no vac, gate off", "1.33", "", "", "static"),
        ("v1.28 reads no class", "1.28", "", "gold", "static"),
    ],
)
def test_volume_attributes_classes_match_from_1_29(
    test: str, version: str, claim_vac: str, volume_vac: str, expected: str
) -> None:
    # binder.go findMatchingVolumes -> FindMatchingVolume(..., vacEnabled): a claim that
    # finds no static volume is left to provision (here: no provisioner, a bind conflict).
    objects = [vac_claim("pvc-a", claim_vac), vac_volume("pv-a", volume_vac)]
    pod = pod_with("pod-a", pvc_volume("pvc-a"))
    table = table_of([node("node-a")], [*CLASSES, *objects])
    (status,) = run_filter("VolumeBinding", pod, table, features=features_for(version))
    assert status == (None if expected == "static" else BIND_CONFLICT)


def test_a_claim_with_a_class_is_an_error_where_the_gate_is_off() -> None:
    # "fail-on-error": FindMatchingVolume's error, the Filter's Error status (AsStatus).
    objects = [vac_claim("pvc-a", "gold"), vac_volume("pv-a")]
    pod = pod_with("pod-a", pvc_volume("pvc-a"))
    table = table_of([node("node-a")], [*CLASSES, *objects])
    (status,) = run_filter("VolumeBinding", pod, table, features=features_for("1.33"))
    assert status is not None and status.code == Code.ERROR
    assert status.message == (
        "unsupported volumeAttributesClassName is set on claim default/pvc-a when the "
        "feature-gate VolumeAttributesClass is disabled"
    )


def test_a_volume_record_keeps_its_attributes_class() -> None:
    pv = vac_volume("pv-a", "gold")
    assert PersistentVolume.from_record(pv.to_record()) == pv
    pvc = vac_claim("pvc-a", "gold")
    assert PersistentVolumeClaim.from_record(pvc.to_record()) == pvc
    assert "volumeAttributesClassName" not in vac_claim("pvc-b").to_record()
