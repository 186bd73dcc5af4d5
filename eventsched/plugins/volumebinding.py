"""VolumeBinding: the pod's claims must be bound, or bindable, on the node (kube-scheduler v1.28).

PreFilter (`podHasPVCs`, `GetPodVolumeClaims`): a pod without claims is
Skipped. A claim that is missing, lost, being deleted, or (generic ephemeral)
not the pod's is UnschedulableAndUnresolvable with upstream's message; so is
an unbound claim of an Immediate class (or pre-bound by `spec.volumeName`
and not yet bound): "pod has unbound immediate PersistentVolumeClaims". The
bound claims' local volumes (`kubernetes.io/hostname In` node affinity) name
the only candidate nodes (`GetEligibleNodes`, a PreFilterResult).

Filter (`FindPodVolumes`), per node, over the NodeTable at once:

- a bound claim's volume must admit the node: "node(s) had volume node
  affinity conflict"; a missing volume: "node(s) unavailable due to one or
  more pvc(s) bound to non-existent pv(s)";
- a WaitForFirstConsumer claim whose `volume.kubernetes.io/selected-node` is
  another node, or that finds no available volume (model/volumematching.py)
  where its class cannot provision (no provisioner, or allowedTopologies
  exclude the node): "node(s) didn't find available persistent volumes to
  bind". All UnschedulableAndUnresolvable, reasons in upstream's order.

What eventsched does not do: write the API objects that bind a volume. Where
kube-scheduler would bind a WaitForFirstConsumer claim (Reserve assumes the
PersistentVolume, PreBind writes its claimRef and waits for the PV
controller) or have one provisioned (PreBind sets the claim's selected-node
annotation and waits for the external provisioner), the node is refused with
a status that says what the pod waits for, so the pod stays pending with
that message (its `unschedulable` event and PodScheduled condition) and is
retried when a claim, volume, class or node changes; it is never placed with
a volume nobody will bind. Every node that passes therefore has only bound
claims: Reserve has nothing to assume, PreBind nothing to write.

Score: v1.28's VolumeCapacityPriority gate is off, so PreScore is Skip.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from eventsched.framework import (
    CSI_NODE_ADD,
    CSI_NODE_UPDATE,
    NODE_ADD,
    NODE_UPDATE,
    PV_ADD,
    PV_UPDATE,
    PVC_ADD,
    PVC_UPDATE,
    STORAGE_CLASS_ADD,
    STORAGE_CLASS_UPDATE,
    BatchFilterResult,
    ClusterEvent,
    Code,
    CycleState,
    Handle,
    PluginArgsError,
    PreFilterResult,
    Status,
    check_args,
)
from eventsched.model import BoolArray, Indexes, IntArray, NodeTable, Pod
from eventsched.model.podvolumes import PVC_RESOURCE, not_found, not_owner_message, pod_claims
from eventsched.model.storage import StorageObjects
from eventsched.model.volumematching import match_claims
from eventsched.model.volumes import (
    LOST,
    WAIT_FOR_FIRST_CONSUMER,
    PersistentVolume,
    PersistentVolumeClaim,
)
from eventsched.model.volumetopology import NodeSelector, local_node_names, topology_mask

NAME = "VolumeBinding"
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
DEFAULT_BIND_TIMEOUT_SECONDS = 600
_STATE_KEY = NAME


def provisioning_refused(claim: PersistentVolumeClaim, provisioner: str) -> str:
    """Why a node where the claim's volume would be provisioned is refused."""
    where = f" (selected node {claim.selected_node})" if claim.selected_node else ""
    return (
        f"waiting for a PersistentVolume for claim {claim.namespace}/{claim.name}{where}: "
        f"dynamic provisioning (provisioner {provisioner}) is not supported by eventsched"
    )


def binding_refused(claim: PersistentVolumeClaim) -> str:
    """Why a node where the claim would be bound to an available volume is refused."""
    return (
        f"waiting for claim {claim.namespace}/{claim.name} to be bound: binding a "
        "WaitForFirstConsumer claim to an available PersistentVolume is not supported by eventsched"
    )


@dataclass(frozen=True, slots=True)
class PodVolumeClaims:
    """The pod's claims: bound, unbound of a WaitForFirstConsumer class, unbound immediate."""

    bound: tuple[PersistentVolumeClaim, ...]
    delayed: tuple[PersistentVolumeClaim, ...]
    immediate: tuple[PersistentVolumeClaim, ...]


class _Refusal(Exception):
    pass


#: FindPodVolumes' reasons, in the order it appends them.
_REASONS = (ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT, ERR_REASON_PV_NOT_EXIST)


@dataclass(slots=True)
class _Verdicts:
    """Each candidate row's reasons (flags), error or refusal (an index into `others`),
    turned into shared statuses at the end, as arrays."""

    node_conflict: BoolArray
    bind_conflict: BoolArray
    pv_missing: BoolArray
    other: IntArray
    others: list[Status]

    def set_other(self, rows: BoolArray, status: Status) -> None:
        if rows.any():
            self.others.append(status)
            self.other[rows] = len(self.others) - 1

    @classmethod
    def empty(cls, count: int) -> _Verdicts:
        no = np.zeros(count, dtype=bool)
        return cls(no, no.copy(), no.copy(), np.full(count, -1, dtype=np.int64), [])

    def result(self) -> BatchFilterResult:
        """An error wins; else the reasons (UnschedulableAndUnresolvable); else a refusal."""
        flags = (
            self.node_conflict.astype(np.int64)
            | (self.bind_conflict.astype(np.int64) << 1)
            | (self.pv_missing.astype(np.int64) << 2)
        )
        errors = np.array([s.code == Code.ERROR for s in self.others], dtype=bool)
        is_error = np.zeros(len(flags), dtype=bool)
        if self.others:
            is_error = (self.other >= 0) & errors[np.maximum(self.other, 0)]
        statuses = list(self.others)
        verdict = np.where(is_error | ((flags == 0) & (self.other >= 0)), self.other, -1)
        for combination in np.unique(flags[~is_error & (flags > 0)]):
            reasons = [r for bit, r in enumerate(_REASONS) if combination >> bit & 1]
            statuses.append(Status.unresolvable(*reasons))
            verdict[~is_error & (flags == combination)] = len(statuses) - 1
        return BatchFilterResult(verdict.astype(np.int64), statuses)


class VolumeBinding:
    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        check_args(NAME, args, ("bindTimeoutSeconds", "shape"))
        timeout = args.get("bindTimeoutSeconds", DEFAULT_BIND_TIMEOUT_SECONDS)
        if not isinstance(timeout, int) or isinstance(timeout, bool):
            raise PluginArgsError("bindTimeoutSeconds", "must be an integer")
        if timeout < 0:
            raise PluginArgsError(
                "bindTimeoutSeconds", "invalid BindTimeoutSeconds, should not be a negative value"
            )
        if args.get("shape") is not None:
            raise PluginArgsError("shape", "unsupported when VolumeCapacityPriority is disabled")
        self.bind_timeout_seconds = timeout
        self._masks: dict[str, BoolArray] = {}
        self._stamp: tuple[int, int] = (-1, -1)

    def events_to_register(self) -> Sequence[ClusterEvent]:
        """v1.28: classes, claims and volumes added or updated, nodes added or relabelled,
        CSINodes added or updated (CSIDriver and CSIStorageCapacity are not observed)."""
        return (
            STORAGE_CLASS_ADD,
            STORAGE_CLASS_UPDATE,
            PVC_ADD,
            PVC_UPDATE,
            PV_ADD,
            PV_UPDATE,
            NODE_ADD,
            NODE_UPDATE,
            CSI_NODE_ADD,
            CSI_NODE_UPDATE,
        )

    # -- PreFilter ---------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        storage = table.objects.storage
        try:
            claims = pod_volume_claims(pod, storage)
        except _Refusal as exc:
            return None, Status.unresolvable(str(exc))
        if claims is None:
            state.write(_STATE_KEY, None)
            return None, Status(Code.SKIP)
        if claims.immediate:
            return None, Status.unresolvable(ERR_UNBOUND_IMMEDIATE)
        state.write(_STATE_KEY, claims)
        eligible = eligible_nodes(claims.bound, storage)
        return (None if eligible is None else PreFilterResult(eligible)), None

    # -- Filter ------------------------------------------------------------------------

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        claims: PodVolumeClaims | None = state.get(_STATE_KEY)
        verdicts = _Verdicts.empty(len(rows))
        if claims is None:
            return verdicts.result()
        self._check_bound(claims.bound, table, rows, verdicts)
        if claims.delayed:
            self._check_delayed(claims.delayed, table, rows, verdicts)
        return verdicts.result()

    def _cached(self, table: NodeTable, key: str, compute: Callable[[], BoolArray]) -> BoolArray:
        """A mask over every row, kept until nodes or storage objects change."""
        stamp = (table.node_generation, table.objects.storage.generation)
        if stamp != self._stamp:
            self._masks.clear()
            self._stamp = stamp
        mask = self._masks.get(key)
        if mask is None:
            mask = self._masks[key] = compute()
        return mask

    def _affinity(self, table: NodeTable, volume: PersistentVolume) -> BoolArray:
        """Where the volume's node affinity admits the node (`CheckNodeAffinity`)."""
        affinity = volume.node_affinity
        if affinity is None:
            return self._cached(table, "", lambda: np.ones(len(table), dtype=bool))
        return self._cached(
            table,
            f"PersistentVolume/{volume.name}",
            lambda: NodeSelector.compile(affinity).mask(table),
        )

    def _check_bound(
        self,
        bound: Sequence[PersistentVolumeClaim],
        table: NodeTable,
        rows: Indexes,
        verdicts: _Verdicts,
    ) -> None:
        """`checkBoundClaims`: the first claim whose volume is missing or does not admit the
        node decides; a missing volume ends the check on every node not decided before."""
        storage = table.objects.storage
        decided = np.zeros(len(rows), dtype=bool)
        for claim in bound:
            volume = storage.volumes.get(claim.volume_name)
            if volume is None:
                verdicts.pv_missing |= ~decided
                return
            mismatch = ~decided & ~self._affinity(table, volume)[rows]
            verdicts.node_conflict |= mismatch
            decided |= mismatch

    def _check_delayed(
        self,
        delayed: Sequence[PersistentVolumeClaim],
        table: NodeTable,
        rows: Indexes,
        verdicts: _Verdicts,
    ) -> None:
        """The unbound WaitForFirstConsumer claims: the selected-node fast path, matching
        available volumes, then provisioning what found none; nodes that would need a
        volume bound or provisioned are refused (see the module)."""
        names = np.array([table.names[r] for r in rows], dtype=object)
        alive = np.ones(len(rows), dtype=bool)
        selected = [c for c in delayed if c.selected_node]
        for claim in selected:
            alive &= names == claim.selected_node
        verdicts.bind_conflict |= ~alive
        to_match = [c for c in delayed if not c.selected_node]
        matches = match_claims(
            to_match, table.objects.storage, rows, lambda v: self._affinity(table, v)
        )
        unmatched = np.array([picks < 0 for picks in matches.chosen], dtype=bool).reshape(
            len(matches.claims), len(rows)
        )
        # Nodes with the same claims left unmatched provision the same claims: one pass each.
        patterns, group = np.unique(unmatched, axis=1, return_inverse=True)
        for g in range(patterns.shape[1]):
            members = alive & (group.reshape(-1) == g)
            if not members.any():
                continue
            left = [c for c, flag in zip(matches.claims, patterns[:, g], strict=True) if flag]
            bound = [c for c, flag in zip(matches.claims, patterns[:, g], strict=True) if not flag]
            self._provision(table, rows, members, (*selected, *left), bound, verdicts)

    def _provision(
        self,
        table: NodeTable,
        rows: Indexes,
        members: BoolArray,
        claims: Sequence[PersistentVolumeClaim],
        matched: Sequence[PersistentVolumeClaim],
        verdicts: _Verdicts,
    ) -> None:
        """`checkVolumeProvisions` on the `members` rows: an error, a bind conflict, or the
        refusal for the first claim that would be provisioned, else for the first bound."""
        storage = table.objects.storage
        refusal: Status | None = None
        for claim in claims:
            if not claim.storage_class:
                error = Status.as_error(f'no class for claim "{claim.namespace}/{claim.name}"')
                return verdicts.set_other(members, error)
            storage_class = storage.classes.get(claim.storage_class)
            if storage_class is None:
                error = Status.as_error(f'failed to find storage class "{claim.storage_class}"')
                return verdicts.set_other(members, error)
            provisioner = storage_class.provisioner
            if not provisioner or provisioner == NO_PROVISIONER:
                verdicts.bind_conflict |= members
                return None
            compute = partial(topology_mask, storage_class.allowed_topologies, table)
            allowed = self._cached(table, storage_class.key, compute)[rows]
            verdicts.bind_conflict |= members & ~allowed
            members = members & allowed
            if refusal is None:
                refusal = Status.unresolvable(provisioning_refused(claim, provisioner))
        if refusal is None and matched:
            refusal = Status.unresolvable(binding_refused(matched[0]))
        if refusal is not None:
            verdicts.set_other(members, refusal)
        return None

    # -- Score, Reserve, PreBind ---------------------------------------------------------

    def pre_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> Status | None:
        """No scorer without the VolumeCapacityPriority gate (off in v1.28)."""
        return Status(Code.SKIP)

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> IntArray:
        return np.zeros(len(rows), dtype=np.int64)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """`AssumePodVolumes`: a node that passed Filter has only bound claims (eventsched
        refuses the nodes that would need a binding), so every volume is bound already."""
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Nothing was assumed."""

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """All volumes are bound: no API update to make (upstream's `allBound`)."""
        return None


def pod_volume_claims(pod: Pod, storage: StorageObjects) -> PodVolumeClaims | None:
    """`podHasPVCs` then `GetPodVolumeClaims`; None when the pod has no claim."""
    refs = pod_claims(pod)
    if not refs:
        return None
    found: list[PersistentVolumeClaim] = []
    for ref in refs:
        claim = storage.claim(pod.namespace, ref.claim)
        if claim is None:
            if ref.ephemeral:
                raise _Refusal(
                    "waiting for ephemeral volume controller to create the persistentvolumeclaim "
                    f'"{ref.claim}"'
                )
            raise _Refusal(not_found(PVC_RESOURCE, ref.claim))
        if claim.phase == LOST:
            raise _Refusal(
                f'persistentvolumeclaim "{claim.name}" bound to non-existent persistentvolume '
                f'"{claim.volume_name}"'
            )
        if claim.deleting:
            raise _Refusal(f'persistentvolumeclaim "{claim.name}" is being deleted')
        if ref.ephemeral:
            problem = not_owner_message(pod, claim)
            if problem is not None:
                raise _Refusal(problem)
        found.append(claim)
    bound: list[PersistentVolumeClaim] = []
    delayed: list[PersistentVolumeClaim] = []
    immediate: list[PersistentVolumeClaim] = []
    for claim in found:
        if claim.is_bound:
            bound.append(claim)
        elif not claim.volume_name and _delayed(claim, storage):
            delayed.append(claim)
        else:
            immediate.append(claim)  # pre-bound claims wait for the PV controller too
    return PodVolumeClaims(tuple(bound), tuple(delayed), tuple(immediate))


def _delayed(claim: PersistentVolumeClaim, storage: StorageObjects) -> bool:
    """`IsDelayBindingMode`: the claim's class exists and waits for the first consumer."""
    storage_class = storage.classes.get(claim.storage_class) if claim.storage_class else None
    return storage_class is not None and storage_class.binding_mode == WAIT_FOR_FIRST_CONSUMER


def eligible_nodes(
    bound: Sequence[PersistentVolumeClaim], storage: StorageObjects
) -> frozenset[str] | None:
    """`GetEligibleNodes`: the nodes the bound claims' local volumes name (intersected), or
    None: no such volume, or one is missing. v1.28 takes the `kubernetes.io/hostname`
    values of the volume's node affinity for node names."""
    eligible: frozenset[str] | None = None
    for claim in bound:
        volume = storage.volumes.get(claim.volume_name)
        if volume is None:
            return None
        names = local_node_names(volume.node_affinity)
        if names:
            eligible = names if eligible is None else eligible & names
    return eligible
