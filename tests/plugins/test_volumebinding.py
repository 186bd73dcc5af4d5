"""VolumeBinding's PreFilter and Filter, after upstream's volume_binding_test.go TestVolumeBinding
and binder_test.go's TestFindPodVolumesWithoutProvisioning / WithProvisioning (v1.28).
Reserve and PreBind: test_volumebinding_binder.py and test_volumebinding_provisioning.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from eventsched.framework import Code, CycleState, PluginArgsError, PreFilterResult, Status
from eventsched.model import Pod
from eventsched.plugins.volumebinding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    ERR_UNBOUND_IMMEDIATE,
    PodVolumes,
)
from tests.plugins.conftest import plugin, run_filter
from tests.plugins.storage import (
    HOSTNAME,
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

WAIT = storage_class("wait-sc")
WAIT_HDD = storage_class("wait-hdd-sc")
IMMEDIATE = storage_class("immediate-sc", "Immediate")
PROVISIONED = storage_class("provisioned-sc", provisioner="csi.example.com")
BIND_CONFLICT = Status.unresolvable(ERR_REASON_BIND_CONFLICT)
NODE_CONFLICT = Status.unresolvable(ERR_REASON_NODE_CONFLICT)
CLASSES = [WAIT, WAIT_HDD, IMMEDIATE, PROVISIONED]


def pod_of(*claims: str) -> Pod:
    return pod_with("pod-a", *(pvc_volume(c) for c in claims))


def pre_filter(pod: Pod, objects: list[Any], nodes: tuple[str, ...] = ("node-a",)) -> Any:
    table = table_of([node(n) for n in nodes], [*CLASSES, *objects])
    return plugin("VolumeBinding").pre_filter(CycleState(), pod, table)


def kept_volumes(
    pod: Pod, objects: list[Any], nodes: tuple[str, ...], labels: dict[str, dict[str, str]]
) -> dict[str, PodVolumes]:
    """Filter's volumes per passing node (`podVolumesByNode`)."""
    table = table_of([node(n, **labels.get(n, {})) for n in nodes], [*CLASSES, *objects])
    p = plugin("VolumeBinding")
    state = CycleState()
    p.pre_filter(state, pod, table)
    result = p.filter_batch(state, pod, table, np.arange(len(table)))
    kept = state.read("VolumeBinding").by_node
    return {
        name: kept[name]
        for name, verdict in zip(table.names, result.verdict, strict=True)
        if verdict < 0 and name in kept
    }


def static_bindings(
    pod: Pod, objects: list[Any], nodes: tuple[str, ...] = ("node-a",)
) -> dict[str, list[tuple[str, str]]]:
    """Filter's static bindings per passing node: (claim, volume)."""
    return {
        name: [(b.claim.name, b.volume.name) for b in volumes.static_bindings]
        for name, volumes in kept_volumes(pod, objects, nodes, {}).items()
    }


def provisions(
    pod: Pod, objects: list[Any], nodes: tuple[str, ...] = ("node-a",), **labels: dict[str, str]
) -> dict[str, list[str]]:
    """Filter's dynamic provisions per passing node: the claims' names."""
    return {
        name: [c.name for c in volumes.dynamic_provisions]
        for name, volumes in kept_volumes(pod, objects, nodes, labels).items()
    }


def filter_nodes(
    pod: Pod, objects: list[Any], nodes: tuple[str, ...] = ("node-a",), **labels: dict[str, str]
) -> list[Status | None]:
    table = table_of([node(n, **labels.get(n, {})) for n in nodes], [*CLASSES, *objects])
    return run_filter("VolumeBinding", pod, table)


def test_pod_has_no_pvcs() -> None:
    """TestVolumeBinding/pod has not pvcs."""
    _, status = pre_filter(pod_of(), [])
    assert status is not None and status.code == Code.SKIP


def test_all_bound() -> None:
    """TestVolumeBinding/all bound."""
    objects = [claim("pvc-a", "wait-sc", bound_to="pv-a"), volume("pv-a", "wait-sc")]
    assert pre_filter(pod_of("pvc-a"), objects) == (None, None)
    assert filter_nodes(pod_of("pvc-a"), objects) == [None]


def test_all_bound_with_local_volumes_names_the_only_nodes() -> None:
    """TestVolumeBinding/all bound with local volumes: PreFilterResult {node-a}."""
    objects = [
        claim("pvc-a", "wait-sc", bound_to="pv-a"),
        claim("pvc-b", "wait-sc", bound_to="pv-b"),
        volume("pv-a", "wait-sc", phase="Bound", affinity={HOSTNAME: ["node-a"]}),
        volume("pv-b", "wait-sc", phase="Bound", affinity={HOSTNAME: ["node-a"]}),
    ]
    result, status = pre_filter(pod_of("pvc-a", "pvc-b"), objects, ("node-a", "node-b"))
    assert (result, status) == (PreFilterResult(frozenset({"node-a"})), None)
    assert filter_nodes(pod_of("pvc-a", "pvc-b"), objects, ("node-a", "node-b")) == [
        None,
        NODE_CONFLICT,
    ]


@pytest.mark.parametrize(
    ("test", "claims", "objects", "message"),
    [
        ("PVC does not exist", ["pvc-a"], [], 'persistentvolumeclaim "pvc-a" not found'),
        (
            "Part of PVCs do not exist",
            ["pvc-a", "pvc-b"],
            [claim("pvc-a", "wait-sc", bound_to="pv-a")],
            'persistentvolumeclaim "pvc-b" not found',
        ),
        (
            "immediate claims not bound",
            ["pvc-a"],
            [claim("pvc-a", "immediate-sc")],
            ERR_UNBOUND_IMMEDIATE,
        ),
        (
            "pv not found claim lost",
            ["pvc-a"],
            [claim("pvc-a", "wait-sc", bound_to="pv-a", phase="Lost")],
            'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"',
        ),
        (
            "claim being deleted",
            ["pvc-a"],
            [claim("pvc-a", "wait-sc", bound_to="pv-a", deleting=True)],
            'persistentvolumeclaim "pvc-a" is being deleted',
        ),
        (
            # binder_test prebound-pvc: a volume name without bind-completed waits for the
            # PV controller, as an unbound immediate claim.
            "pre-bound claim",
            ["pvc-a"],
            [claim("pvc-a", "wait-sc", bound_to="pv-a", bind_completed=False)],
            ERR_UNBOUND_IMMEDIATE,
        ),
        (
            # IsDelayBindingMode: a class that does not exist is not WaitForFirstConsumer.
            "class missing",
            ["pvc-a"],
            [claim("pvc-a", "no-such-sc")],
            ERR_UNBOUND_IMMEDIATE,
        ),
    ],
)
def test_pre_filter_refusals(
    test: str, claims: list[str], objects: list[Any], message: str
) -> None:
    """TestVolumeBinding's PreFilter statuses (UnschedulableAndUnresolvable)."""
    _, status = pre_filter(pod_of(*claims), objects)
    assert status == Status.unresolvable(message)


def ephemeral_pod() -> Pod:
    return Pod.from_manifest(
        {
            "metadata": {"name": "abc", "namespace": "test", "uid": "12345"},
            "spec": {
                "containers": [{"name": "c"}],
                "volumes": [{"name": "xyz", "ephemeral": {"volumeClaimTemplate": {}}}],
            },
        }
    )


def test_generic_ephemeral_volumes() -> None:
    """podHasPVCs: an ephemeral volume's claim not created yet, or not the pod's."""
    _, status = pre_filter(ephemeral_pod(), [])
    assert status == Status.unresolvable(
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "abc-xyz"'
    )
    stranger = claim("abc-xyz", "wait-sc", namespace="test", bound_to="pv", owner_uid="other")
    _, status = pre_filter(ephemeral_pod(), [stranger])
    assert status == Status.unresolvable(
        "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"
    )
    owned = claim("abc-xyz", "wait-sc", namespace="test", bound_to="pv", owner_uid="12345")
    assert pre_filter(ephemeral_pod(), [owned, volume("pv", "wait-sc")]) == (None, None)


def test_unbound_claims_no_matches() -> None:
    """TestVolumeBinding/unbound claims no matches: no volume, a class that cannot provision."""
    assert filter_nodes(pod_of("pvc-a"), [claim("pvc-a", "wait-sc")]) == [BIND_CONFLICT]


def test_bound_and_unbound_unsatisfied() -> None:
    """TestVolumeBinding/bound and unbound unsatisfied: both reasons, in upstream's order."""
    objects = [
        claim("pvc-a", "wait-sc", bound_to="pv-a"),
        claim("pvc-b", "wait-sc"),
        volume("pv-a", "wait-sc", affinity={"foo": ["bar"]}),
    ]
    got = filter_nodes(pod_of("pvc-a", "pvc-b"), objects, labels={"node-a": {"foo": "barbar"}})
    assert got == [Status.unresolvable(ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT)]


def test_pv_not_found() -> None:
    """TestVolumeBinding/pv not found."""
    got = filter_nodes(pod_of("pvc-a"), [claim("pvc-a", "wait-sc", bound_to="pv-a")])
    assert got == [Status.unresolvable(ERR_REASON_PV_NOT_EXIST)]


def local_volumes() -> list[Any]:
    """TestVolumeBinding/local volumes with close capacity are preferred: its volumes."""
    return [
        volume("pv-a-0", "wait-sc", capacity="200Gi", affinity={HOSTNAME: ["node-a"]}),
        volume("pv-a-1", "wait-sc", capacity="200Gi", affinity={HOSTNAME: ["node-a"]}),
        volume("pv-b-0", "wait-sc", capacity="100Gi", affinity={HOSTNAME: ["node-b"]}),
        volume("pv-b-1", "wait-sc", capacity="100Gi", affinity={HOSTNAME: ["node-b"]}),
    ]


NODES = ("node-a", "node-b", "node-c")


def test_local_volumes_with_close_capacity_are_preferred() -> None:
    """TestVolumeBinding/local volumes with close capacity are preferred: node-a and node-b
    pass (a volume would be bound there), node-c has none; each passing node keeps the
    volume its claim would be bound to."""
    pvc = claim("pvc-a", "wait-sc", storage="50Gi")
    objects = [pvc, *local_volumes()]
    assert filter_nodes(pod_of("pvc-a"), objects, NODES) == [None, None, BIND_CONFLICT]
    assert static_bindings(pod_of("pvc-a"), objects, NODES) == {
        "node-a": [("pvc-a", "pv-a-0")],
        "node-b": [("pvc-a", "pv-b-0")],
    }


def test_local_volumes_with_close_capacity_are_preferred_multiple_pvcs() -> None:
    """TestVolumeBinding/local volumes with close capacity are preferred (multiple pvcs):
    two claims of two classes, one volume of each class per node; node-c has none."""
    objects = [
        claim("pvc-0", "wait-sc", storage="50Gi"),
        claim("pvc-1", "wait-hdd-sc", storage="100Gi"),
        volume("pv-a-0", "wait-sc", capacity="200Gi", affinity={HOSTNAME: ["node-a"]}),
        volume("pv-a-1", "wait-hdd-sc", capacity="200Gi", affinity={HOSTNAME: ["node-a"]}),
        volume("pv-b-0", "wait-sc", capacity="100Gi", affinity={HOSTNAME: ["node-b"]}),
        volume("pv-b-1", "wait-hdd-sc", capacity="100Gi", affinity={HOSTNAME: ["node-b"]}),
    ]
    pod = pod_of("pvc-0", "pvc-1")
    assert filter_nodes(pod, objects, NODES) == [None, None, BIND_CONFLICT]
    assert static_bindings(pod, objects, NODES) == {
        "node-a": [("pvc-0", "pv-a-0"), ("pvc-1", "pv-a-1")],
        "node-b": [("pvc-0", "pv-b-0"), ("pvc-1", "pv-b-1")],
    }


def test_a_volume_is_not_given_to_two_claims_on_a_node() -> None:
    """binder_test two-unbound-pvcs,partial-match and order-by-size: node-a has one large
    enough volume for two claims; node-b has two, the smaller to the first claim."""
    objects = [
        claim("pvc-1", "wait-sc", storage="1Gi"),
        claim("pvc-2", "wait-sc", storage="1Gi"),
        volume("pv-a", "wait-sc", capacity="5Gi", affinity={HOSTNAME: ["node-a"]}),
        volume("pv-b1", "wait-sc", capacity="5Gi", affinity={HOSTNAME: ["node-b"]}),
        volume("pv-b2", "wait-sc", capacity="1Gi", affinity={HOSTNAME: ["node-b"]}),
    ]
    pod = pod_of("pvc-1", "pvc-2")
    assert filter_nodes(pod, objects, ("node-a", "node-b")) == [BIND_CONFLICT, None]
    assert static_bindings(pod, objects, ("node-a", "node-b")) == {
        "node-b": [("pvc-1", "pv-b2"), ("pvc-2", "pv-b1")]
    }


def test_one_bound_one_unbound() -> None:
    """binder_test one-bound,one-unbound and one-bound,one-unbound,no-match: the bound
    claim's volume admits both nodes; the unbound claim finds a volume on node-a only."""
    objects = [
        claim("pvc-bound", "wait-sc", bound_to="pv-bound"),
        volume("pv-bound", "wait-sc", phase="Bound", claim_ref=("default", "pvc-bound")),
        claim("pvc-a", "wait-sc"),
        volume("pv-a", "wait-sc", affinity={HOSTNAME: ["node-a"]}),
    ]
    pod = pod_of("pvc-bound", "pvc-a")
    assert filter_nodes(pod, objects, ("node-a", "node-b")) == [None, BIND_CONFLICT]
    assert static_bindings(pod, objects, ("node-a", "node-b")) == {"node-a": [("pvc-a", "pv-a")]}


@pytest.mark.parametrize(
    ("test", "change", "expected"),
    [
        ("matches", {}, "bound"),
        ("too small", {"capacity": "500Mi"}, "conflict"),
        ("other access modes", {"access_modes": ["ReadOnlyMany"]}, "conflict"),
        ("other volume mode", {"volume_mode": "Block"}, "conflict"),
        ("not available", {"phase": "Released"}, "conflict"),
        ("claimed by another claim", {"claim_ref": ("default", "other")}, "conflict"),
        ("being deleted", {"deleting": True}, "conflict"),
        ("node affinity elsewhere", {"affinity": {HOSTNAME: ["node-b"]}}, "conflict"),
        ("selector does not match", {"labels": {"tier": "slow"}}, "conflict"),
    ],
)
def test_find_matching_volume(test: str, change: dict[str, Any], expected: str) -> None:
    """FindMatchingVolume's filters (binder_test unbound-pvc,pv-*): size, access modes,
    volume mode, phase, claimRef, deletion, node affinity, the claim's selector."""
    pvc = claim("pvc-a", "wait-sc", storage="1Gi", selector={"matchLabels": {"tier": "fast"}})
    fields = {"capacity": "1Gi", "labels": {"tier": "fast"}, **change}
    pv = volume("pv-a", "wait-sc", **fields)
    got = filter_nodes(pod_of("pvc-a"), [pvc, pv])
    assert got == ([BIND_CONFLICT] if expected == "conflict" else [None])


def test_a_volume_pre_bound_to_the_claim_decides() -> None:
    """FindMatchingVolume: a volume whose claimRef names the claim is its match where its
    node affinity holds, and there is no match elsewhere (even a free volume there)."""
    pvc = claim("pvc-a", "wait-sc")
    objects = [
        pvc,
        volume(
            "pv-mine", "wait-sc", claim_ref=("default", "pvc-a"), affinity={HOSTNAME: ["node-a"]}
        ),
        volume("pv-free", "wait-sc", affinity={HOSTNAME: ["node-b"]}),
    ]
    got = filter_nodes(pod_of("pvc-a"), objects, ("node-a", "node-b"))
    assert got == [None, BIND_CONFLICT]
    assert static_bindings(pod_of("pvc-a"), objects, ("node-a", "node-b")) == {
        "node-a": [("pvc-a", "pv-mine")]
    }


def test_one_binding_and_one_provisioned() -> None:
    """binder_test (WithProvisioning) one-binding,one-provisioned: the node passes with one
    static binding and one dynamic provision."""
    objects = [
        claim("pvc-a", "wait-sc"),
        volume("pv-a", "wait-sc"),
        claim("pvc-p", "provisioned-sc"),
    ]
    assert filter_nodes(pod_of("pvc-a", "pvc-p"), objects) == [None]
    assert static_bindings(pod_of("pvc-a", "pvc-p"), objects) == {"node-a": [("pvc-a", "pv-a")]}
    assert provisions(pod_of("pvc-a", "pvc-p"), objects) == {"node-a": ["pvc-p"]}


def test_provisioning_where_allowed_topologies_admit_the_node() -> None:
    """binder_test (WithProvisioning) provisioning, and the allowedTopologies of
    checkVolumeProvisions: node-a (zone z1) passes to provision the claim; node-b
    (zone z2) is the upstream bind conflict."""
    zonal = storage_class("zonal-sc", provisioner="csi.example.com", topologies=[{ZONE: ["z1"]}])
    pvc = claim("pvc-a", "zonal-sc")
    table_labels = {"node-a": {ZONE: "z1"}, "node-b": {ZONE: "z2"}}
    nodes = ("node-a", "node-b")
    assert filter_nodes(pod_of("pvc-a"), [zonal, pvc], nodes, **table_labels) == [
        None,
        BIND_CONFLICT,
    ]
    assert provisions(pod_of("pvc-a"), [zonal, pvc], nodes, **table_labels) == {"node-a": ["pvc-a"]}


def test_provisioned_claim_with_another_that_cannot_be_provisioned() -> None:
    """checkVolumeProvisions returns at the first claim whose class cannot provision."""
    local = storage_class("local", provisioner="kubernetes.io/no-provisioner")
    objects = [local, claim("pvc-p", "provisioned-sc"), claim("pvc-l", "local")]
    assert filter_nodes(pod_of("pvc-p", "pvc-l"), objects) == [BIND_CONFLICT]


NO_SPACE = Status.unresolvable(ERR_REASON_NOT_ENOUGH_SPACE)
ZONES = {"node-a": {ZONE: "z1"}, "node-b": {ZONE: "z2"}}


def capacity_verdicts(objects: list[Any], size: str | None = "5Gi") -> list[Status | None]:
    """A claim of provisioned-sc (csi.example.com) on node-a (z1) and node-b (z2)."""
    pvc = claim("pvc-a", "provisioned-sc", storage=size)
    return filter_nodes(pod_of("pvc-a"), [pvc, *objects], ("node-a", "node-b"), **ZONES)


def test_storage_capacity_of_the_nodes_topology_must_hold_the_claim() -> None:
    """binder_test TestCapacity: the driver opts in; z1's capacity holds 5Gi, z2's not."""
    objects = [
        csi_driver("csi.example.com"),
        storage_capacity("cap-z1", "provisioned-sc", {ZONE: "z1"}, capacity="10Gi"),
        storage_capacity("cap-z2", "provisioned-sc", {ZONE: "z2"}, capacity="1Gi"),
    ]
    assert capacity_verdicts(objects) == [None, NO_SPACE]
    assert NO_SPACE.message == "node(s) did not have enough free storage"


def test_maximum_volume_size_is_preferred_over_capacity() -> None:
    """capacitySufficient: maximumVolumeSize wins (z1: 10Gi free, volumes up to 1Gi)."""
    objects = [
        csi_driver("csi.example.com"),
        storage_capacity("cap-z1", "provisioned-sc", {ZONE: "z1"}, "10Gi", maximum="1Gi"),
        storage_capacity("cap-z2", "provisioned-sc", {ZONE: "z2"}, "1Gi", maximum="8Gi"),
    ]
    assert capacity_verdicts(objects) == [NO_SPACE, None]


def test_capacity_is_checked_only_for_drivers_that_opt_in_and_sized_claims() -> None:
    """hasEnoughCapacity: no CSIDriver, storageCapacity false, or no size: no check."""
    small = [storage_capacity("cap", "provisioned-sc", {ZONE: "z1"}, capacity="1Gi")]
    assert capacity_verdicts(small) == [None, None]
    assert capacity_verdicts([csi_driver("csi.example.com", False), *small]) == [None, None]
    assert capacity_verdicts([csi_driver("csi.example.com"), *small], size=None) == [None, None]
    assert capacity_verdicts([csi_driver("csi.example.com"), *small]) == [NO_SPACE, NO_SPACE]


def test_capacity_of_another_class_or_without_topology_counts_for_nothing() -> None:
    """A capacity of another class, or with a nil nodeTopology (nodeHasAccess), holds
    nothing; an empty nodeTopology matches every node."""
    objects = [
        csi_driver("csi.example.com"),
        storage_capacity("other", "wait-sc", {ZONE: "z1"}, capacity="10Gi"),
        storage_capacity("nil", "provisioned-sc", None, capacity="10Gi"),
    ]
    assert capacity_verdicts(objects) == [NO_SPACE, NO_SPACE]
    everywhere = storage_capacity("all", "provisioned-sc", {}, capacity="10Gi")
    assert capacity_verdicts([*objects, everywhere]) == [None, None]


def test_no_provisioner_is_a_bind_conflict() -> None:
    """checkVolumeProvisions: kubernetes.io/no-provisioner cannot provision."""
    local = storage_class("local", provisioner="kubernetes.io/no-provisioner")
    assert filter_nodes(pod_of("pvc-a"), [local, claim("pvc-a", "local")]) == [BIND_CONFLICT]


def test_selected_node_fast_path() -> None:
    """FindPodVolumes: a claim whose selected-node names another node fails that node at
    once; on its node it is provisioned (claimsToProvision)."""
    pvc = claim("pvc-a", "provisioned-sc", selected_node="node-b")
    nodes = ("node-a", "node-b")
    assert filter_nodes(pod_of("pvc-a"), [pvc], nodes) == [BIND_CONFLICT, None]
    assert provisions(pod_of("pvc-a"), [pvc], nodes) == {"node-b": ["pvc-a"]}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"bindTimeoutSeconds": -1}, "invalid BindTimeoutSeconds, should not be a negative value"),
        ({"bindTimeoutSeconds": "10"}, "must be an integer"),
        ({"shape": [{"utilization": 0, "score": 0}]}, "unsupported when VolumeCapacityPriority"),
        ({"other": 1}, "VolumeBinding takes bindTimeoutSeconds, shape"),
    ],
)
def test_args(args: dict[str, Any], message: str) -> None:
    """ValidateVolumeBindingArgs (the VolumeCapacityPriority gate is off in v1.28)."""
    with pytest.raises(PluginArgsError, match=message):
        plugin("VolumeBinding", args)
    assert plugin("VolumeBinding", {"bindTimeoutSeconds": 30}).bind_timeout_seconds == 30
