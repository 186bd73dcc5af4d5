"""VolumeBinding's Reserve, the PV assume cache and PreBind, after upstream's binder_test.go
(TestAssumePodVolumes, TestRevertAssumedPVCs, TestBindAPIUpdate, TestCheckBindings,
TestBindPodVolumes) and volume_binding_test.go, v1.28.

PreBind talks to the simulated cluster, which implements the API calls (the scheduler's
`Cluster` protocol) and plays the PV controller; upstream's tests use a fake clientset and
a goroutine that binds the claims.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import numpy as np
import pytest

from eventsched.cluster import SimulatedCluster
from eventsched.framework import ASSUMED_VOLUMES_KEY, Code, CycleState, Handle, Status
from eventsched.model import Node, NodeTable, Pod
from eventsched.model.changes import ApiError
from eventsched.model.pvbinding import VolumeAssumption
from eventsched.model.volumes import ClaimRef, PersistentVolume
from eventsched.plugins import full_registry
from eventsched.plugins.volumebinding.binder import (
    BindingFailed,
    BindingInfo,
    CheckedNode,
    check_bindings,
    check_provisions,
)
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

WAIT = storage_class("wait-sc")
ERR_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
TIMED_OUT = "binding volumes: timed out waiting for the condition"


def local(name: str, on: str, **fields: Any) -> PersistentVolume:
    return volume(name, "wait-sc", affinity={HOSTNAME: [on]}, **fields)


class Attempt:
    """One pod's scheduling and binding cycle with VolumeBinding alone, on a table whose
    storage objects are those of `cluster` (the cluster is the API PreBind calls)."""

    def __init__(
        self,
        cluster: SimulatedCluster,
        pod: Pod,
        table: NodeTable,
        args: dict[str, Any] | None = None,
    ) -> None:
        self.cluster = cluster
        self.pod = pod
        self.table = table
        self.handle = Handle(table)
        self.handle.volumes = cluster
        self.plugin = full_registry().factory("VolumeBinding")(args or {}, self.handle)
        self.state = CycleState()

    def filter(self) -> list[Status | None]:
        _, status = self.plugin.pre_filter(self.state, self.pod, self.table)
        assert status is None or status.is_skip, status
        result = self.plugin.filter_batch(
            self.state, self.pod, self.table, np.arange(len(self.table))
        )
        return [None if v < 0 else result.statuses[v] for v in result.verdict]

    def reserve(self, node_name: str) -> tuple[VolumeAssumption, ...]:
        assert self.plugin.reserve(self.state, self.pod, node_name) is None
        return tuple(self.state.get(ASSUMED_VOLUMES_KEY, ()))

    def pre_bind(self, node_name: str) -> Status | None:
        return self.plugin.pre_bind(self.state, self.pod, node_name)


def cluster_of(*objects: Any) -> SimulatedCluster:
    return SimulatedCluster([node("node-1"), node("node-2")], objects=[WAIT, *objects])


def table_for(cluster: SimulatedCluster) -> NodeTable:
    """The scheduler's view of the cluster: its nodes and its storage objects as they are."""
    objects = [cluster.read_volume(n) for n in ("pv-1", "pv-2") if _has(cluster, n)]
    claims = [
        cluster.read_claim("default", n) for n in ("pvc-1", "pvc-2") if _has_claim(cluster, n)
    ]
    return table_of(cluster.list_nodes(), [WAIT, *objects, *claims])


def _has(cluster: SimulatedCluster, name: str) -> bool:
    try:
        cluster.read_volume(name)
    except ApiError:
        return False
    return True


def _has_claim(cluster: SimulatedCluster, name: str) -> bool:
    try:
        cluster.read_claim("default", name)
    except ApiError:
        return False
    return True


def pod_of(*claims: str) -> Pod:
    return pod_with("pod-a", *(pvc_volume(c) for c in claims))


def test_one_binding_is_assumed_written_and_bound() -> None:
    """TestAssumePodVolumes/one-binding, TestBindAPIUpdate/one-binding, TestBindPodVolumes/
    one-binding: Reserve assumes the volume pre-bound to the claim (its UID included),
    PreBind writes the claimRef, the PV controller binds the claim, PreBind returns."""
    cluster = cluster_of(claim("pvc-1", "wait-sc"), local("pv-1", "node-1"))
    attempt = Attempt(cluster, pod_of("pvc-1"), table_for(cluster))
    assert attempt.filter() == [None, Status.unresolvable(ERR_BIND_CONFLICT)]
    uid = cluster.read_claim("default", "pvc-1").uid
    assert uid
    assert attempt.reserve("node-1") == (
        VolumeAssumption("pv-1", ClaimRef("default", "pvc-1", uid)),
    )
    assert attempt.pre_bind("node-1") is None
    bound_volume = cluster.read_volume("pv-1")
    assert bound_volume.claim_ref == ClaimRef("default", "pvc-1", uid)
    assert bound_volume.phase == "Bound"
    bound_claim = cluster.read_claim("default", "pvc-1")
    assert (bound_claim.volume_name, bound_claim.is_bound, bound_claim.phase) == (
        "pv-1",
        True,
        "Bound",
    )


def test_two_bindings() -> None:
    """TestAssumePodVolumes/two-bindings, TestBindPodVolumes/two-bindings: both volumes of
    the node are assumed and written, each to its claim, smaller claim first."""
    cluster = cluster_of(
        claim("pvc-1", "wait-sc", storage="5Gi"),
        claim("pvc-2", "wait-sc", storage="1Gi"),
        local("pv-1", "node-2", capacity="10Gi"),
        local("pv-2", "node-2", capacity="1Gi"),
    )
    attempt = Attempt(cluster, pod_of("pvc-1", "pvc-2"), table_for(cluster))
    assert attempt.filter()[1] is None
    assumed = attempt.reserve("node-2")
    assert [(a.volume, a.claim.name) for a in assumed] == [("pv-2", "pvc-2"), ("pv-1", "pvc-1")]
    assert attempt.pre_bind("node-2") is None
    assert cluster.read_claim("default", "pvc-1").volume_name == "pv-1"
    assert cluster.read_claim("default", "pvc-2").volume_name == "pv-2"


def test_all_bound_assumes_nothing_and_writes_nothing() -> None:
    """TestAssumePodVolumes/all-bound, TestBindPodVolumes/all-bound: a pod whose claims are
    bound has nothing to assume, and PreBind calls no API (none is configured here)."""
    pv = volume("pv-1", "wait-sc", phase="Bound", claim_ref=("default", "pvc-1"))
    table = table_of([node("node-1")], [WAIT, pv, claim("pvc-1", "wait-sc", bound_to="pv-1")])
    p = full_registry().factory("VolumeBinding")({}, Handle(table))
    state = CycleState()
    p.pre_filter(state, pod_of("pvc-1"), table)
    p.filter_batch(state, pod_of("pvc-1"), table, np.arange(1))
    assert p.reserve(state, pod_of("pvc-1"), "node-1") is None
    assert state.get(ASSUMED_VOLUMES_KEY) is None
    assert p.pre_bind(state, pod_of("pvc-1"), "node-1") is None


def test_pod_without_claims_passes_reserve_and_pre_bind() -> None:
    """TestVolumeBinding/pod has not pvcs: Reserve finds nothing for the node (allBound)."""
    table = table_of([node("node-1")], [WAIT])
    p = full_registry().factory("VolumeBinding")({}, Handle(table))
    state = CycleState()
    _, status = p.pre_filter(state, pod_of(), table)
    assert status is not None and status.code == Code.SKIP
    assert p.reserve(state, pod_of(), "node-1") is None
    assert p.pre_bind(state, pod_of(), "node-1") is None
    assert p.pre_score(state, pod_of(), table, np.arange(1)).code == Code.SKIP


def test_reserve_and_pre_bind_without_pre_filter_are_errors() -> None:
    """getStateData: Reserve and PreBind need PreFilter's state."""
    p = full_registry().factory("VolumeBinding")({}, Handle(table_of([])))
    status = p.reserve(CycleState(), pod_of("pvc-1"), "node-1")
    assert status is not None and status.code == Code.ERROR
    status = p.pre_bind(CycleState(), pod_of("pvc-1"), "node-1")
    assert status is not None and status.code == Code.ERROR
    p.unreserve(CycleState(), pod_of("pvc-1"), "node-1")  # idempotent, no state needed


def test_volume_pre_bound_to_the_claim_is_not_assumed_again() -> None:
    """TestAssumePodVolumes/pv-bound (GetBindVolumeToClaim not dirty): a volume whose claimRef
    names the claim with its UID already needs no assumption; PreBind still waits for the
    claim (the PV controller binds it)."""
    cluster = cluster_of(claim("pvc-1", "wait-sc"))
    uid = cluster.read_claim("default", "pvc-1").uid
    cluster.put_object(
        PersistentVolume(
            "pv-1",
            storage=2**30,
            access_modes=("ReadWriteOnce",),
            storage_class="wait-sc",
            claim_ref=ClaimRef("default", "pvc-1", uid),
            phase="Available",
        )
    )
    attempt = Attempt(cluster, pod_of("pvc-1"), table_for(cluster))
    assert attempt.filter() == [None, None]
    assert attempt.reserve("node-1") == ()
    assert attempt.pre_bind("node-1") is None
    assert cluster.read_claim("default", "pvc-1").is_bound


def test_assumed_volume_is_taken_until_forgotten_or_observed() -> None:
    """The PV assume cache (assume_cache_test TestAssumePV, TestRestorePV): a volume assumed
    for one pod's claim is not available to another claim; Restore (the reservation undone)
    gives it back; a newer observation of the volume replaces the assumption."""
    objects = [
        WAIT,
        claim("pvc-1", "wait-sc"),
        claim("pvc-2", "wait-sc"),
        local("pv-1", "node-1"),
    ]
    table = table_of([node("node-1")], objects)
    storage = table.objects.storage
    other = Attempt(cluster_of(), pod_with("pod-b", pvc_volume("pvc-2")), table)
    assert other.filter() == [None]
    storage.assume(
        "uid-pod-a", [VolumeAssumption("pv-1", ClaimRef("default", "pvc-1", "uid-pvc-1"))]
    )
    assert storage.volume("pv-1").claim_ref == ClaimRef("default", "pvc-1", "uid-pvc-1")
    assert storage.volumes["pv-1"].claim_ref is None  # the observed object is kept apart
    other = Attempt(cluster_of(), pod_with("pod-b", pvc_volume("pvc-2")), table)
    assert other.filter() == [Status.unresolvable(ERR_BIND_CONFLICT)]
    # The claim it was assumed for finds it, pre-bound.
    mine = Attempt(cluster_of(), pod_of("pvc-1"), table)
    assert mine.filter() == [None]
    storage.forget("uid-pod-b")  # another pod's revert leaves it alone
    assert storage.volume("pv-1").claim_ref is not None
    storage.forget("uid-pod-a")
    assert storage.volume("pv-1").claim_ref is None
    storage.assume(
        "uid-pod-a", [VolumeAssumption("pv-1", ClaimRef("default", "pvc-1", "uid-pvc-1"))]
    )
    storage.upsert(local("pv-1", "node-1", labels={"observed": "again"}))
    assert storage.volume("pv-1").claim_ref is None
    assert not storage.assumed


def test_api_update_failed() -> None:
    """TestBindAPIUpdate/api-update-failed: the volume was taken by another claim since it
    was matched; PreBind fails with the API's conflict, the claim stays unbound."""
    cluster = cluster_of(claim("pvc-1", "wait-sc"), local("pv-1", "node-1"))
    attempt = Attempt(cluster, pod_of("pvc-1"), table_for(cluster))
    attempt.filter()
    attempt.reserve("node-1")
    cluster.put_object(local("pv-1", "node-1", claim_ref=("default", "someone-else")))
    status = attempt.pre_bind("node-1")
    assert status is not None and status.code == Code.ERROR
    assert status.message == (
        'Operation cannot be fulfilled on persistentvolumes "pv-1": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )
    assert not cluster.read_claim("default", "pvc-1").volume_name


def test_binding_timeout() -> None:
    """TestBindPodVolumes/binding-timeout: no PV controller binds the claim; PreBind fails
    after bindTimeoutSeconds, the claimRef it wrote stays (upstream rolls nothing back)."""
    cluster = cluster_of(claim("pvc-1", "wait-sc"), local("pv-1", "node-1"))
    cluster.set_pv_controller(False)
    attempt = Attempt(cluster, pod_of("pvc-1"), table_for(cluster), {"bindTimeoutSeconds": 1})
    attempt.filter()
    attempt.reserve("node-1")
    began = time.monotonic()
    status = attempt.pre_bind("node-1")
    assert status is not None and (status.code, status.message) == (Code.ERROR, TIMED_OUT)
    assert 1.0 <= time.monotonic() - began < 5.0
    assert cluster.read_volume("pv-1").claim_ref is not None
    assert not cluster.read_claim("default", "pvc-1").is_bound


def test_pv_controller_that_binds_later() -> None:
    """TestBindPodVolumes/one-binding with a delayed PV controller: PreBind polls until the
    claim is bound, then returns."""
    cluster = cluster_of(claim("pvc-1", "wait-sc"), local("pv-1", "node-1"))
    cluster.set_pv_controller(False)
    attempt = Attempt(cluster, pod_of("pvc-1"), table_for(cluster), {"bindTimeoutSeconds": 30})
    attempt.filter()
    attempt.reserve("node-1")
    controller = threading.Timer(1.2, cluster.set_pv_controller, (True,))
    controller.start()
    try:
        assert attempt.pre_bind("node-1") is None
    finally:
        controller.cancel()
    assert cluster.read_claim("default", "pvc-1").is_bound


def test_shutting_down_ends_the_wait() -> None:
    """A scheduler that stops cancels PreBind's wait, as kube-scheduler's context does."""
    cluster = cluster_of(claim("pvc-1", "wait-sc"), local("pv-1", "node-1"))
    cluster.set_pv_controller(False)
    attempt = Attempt(cluster, pod_of("pvc-1"), table_for(cluster))
    attempt.filter()
    attempt.reserve("node-1")
    threading.Timer(0.3, attempt.handle.shutting_down.set).start()
    began = time.monotonic()
    status = attempt.pre_bind("node-1")
    assert status is not None and status.message == TIMED_OUT
    assert time.monotonic() - began < 5.0


def at(name: str) -> CheckedNode:
    """A node without labels or CSINode, as one poll of checkBindings reads it."""
    return CheckedNode(name, NodeTable([Node("")]), None)


def binding_on(cluster: SimulatedCluster) -> list[BindingInfo]:
    return [BindingInfo(cluster.read_claim("default", "pvc-1"), cluster.read_volume("pv-1"))]


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ("binding-prebound", False),
        ("binding-claimref-nil", 'ClaimRef got reset for pv "pv-1"'),
        ("binding-claimref-uid-empty", 'ClaimRef got reset for pv "pv-1"'),
        (
            "binding-pvc-not-exists",
            'failed to check binding: persistentvolumeclaims "pvc-1" not found',
        ),
        ("binding-pv-not-exists", 'failed to check binding: persistentvolumes "pv-1" not found'),
    ],
)
def test_check_bindings(test: str, expected: bool | str) -> None:
    """TestCheckBindings: the volume pre-bound but the claim not bound yet (keep polling),
    a claimRef the PV controller dropped (nil, or without UID), a claim or volume gone."""
    cluster = cluster_of(claim("pvc-1", "wait-sc"), local("pv-1", "node-1"))
    cluster.set_pv_controller(False)
    bindings = binding_on(cluster)
    if test != "binding-claimref-nil":
        cluster.bind_volume("pv-1", bindings[0].claim)
    if test == "binding-claimref-uid-empty":
        cluster.put_object(local("pv-1", "node-1", claim_ref=("default", "pvc-1")))
    if test == "binding-pvc-not-exists":
        cluster.delete_object("PersistentVolumeClaim/default/pvc-1")
    if test == "binding-pv-not-exists":
        cluster.delete_object("PersistentVolume/pv-1")
    if isinstance(expected, bool):
        assert check_bindings(cluster, bindings, CheckedNode.read(cluster, "node-1")) is expected
    else:
        with pytest.raises(BindingFailed, match=re.escape(expected)):
            check_bindings(cluster, bindings, CheckedNode.read(cluster, "node-1"))


def test_check_bindings_binding_bound() -> None:
    """TestCheckBindings/binding-bound: the claim fully bound and the claimRef with its UID."""
    cluster = cluster_of(claim("pvc-1", "wait-sc"), local("pv-1", "node-1"))
    bindings = binding_on(cluster)
    cluster.bind_volume("pv-1", bindings[0].claim)
    assert check_bindings(cluster, bindings, CheckedNode.read(cluster, "node-1")) is True


def test_pre_bind_check_error_is_wrapped() -> None:
    """BindPodVolumes: checkBindings' error ends the wait as "binding volumes: ..."."""
    cluster = cluster_of(claim("pvc-1", "wait-sc"), local("pv-1", "node-1"))
    cluster.set_pv_controller(False)
    attempt = Attempt(cluster, pod_of("pvc-1"), table_for(cluster))
    attempt.filter()
    attempt.reserve("node-1")
    cluster.delete_object("PersistentVolumeClaim/default/pvc-1")
    status = attempt.pre_bind("node-1")
    assert status is not None and status.message == (
        'binding volumes: failed to check binding: persistentvolumeclaims "pvc-1" not found'
    )


def test_pre_bind_without_an_api_is_an_error() -> None:
    cluster = cluster_of(claim("pvc-1", "wait-sc"), local("pv-1", "node-1"))
    attempt = Attempt(cluster, pod_of("pvc-1"), table_for(cluster))
    attempt.handle.volumes = None
    attempt.filter()
    attempt.reserve("node-1")
    status = attempt.pre_bind("node-1")
    assert status is not None and status.code == Code.ERROR


def test_check_provisions() -> None:
    """TestCheckBindings' provisioning cases: the claim waits while its selected node is
    the pod's and it is unbound; a selected node reset or changed is 'provisioning
    failed'; a claim gone cannot be read; bound, it is done."""
    fast = storage_class("fast", provisioner="csi.example.com")
    cluster = SimulatedCluster(
        [node("node-1")], objects=[fast, claim("pvc-p", "fast", selected_node="node-1")]
    )
    cluster.set_provisioner(False)
    wanted = [cluster.read_claim("default", "pvc-p")]
    assert check_provisions(cluster, wanted, CheckedNode.read(cluster, "node-1")) is False
    with pytest.raises(BindingFailed, match=r'^provisioning failed for PVC "pvc-p"$'):
        check_provisions(cluster, wanted, at("node-2"))
    cluster.set_provisioner(True)
    cluster.select_node(wanted[0], "node-1")
    assert check_provisions(cluster, wanted, CheckedNode.read(cluster, "node-1")) is True
    gone = [claim("pvc-gone", "fast")]
    with pytest.raises(BindingFailed, match=r'^failed to get pvc "default/pvc-gone": '):
        check_provisions(cluster, gone, at("node-1"))
