"""VolumeRestrictions: in-line disks two pods may not share, and ReadWriteOncePod claims (v1.28).

PreFilter reads the pod's PersistentVolumeClaims (a missing one is
UnschedulableAndUnresolvable: `persistentvolumeclaim "NAME" not found`), keeps
those with the ReadWriteOncePod access mode and counts how many of them a
placed pod already uses (`IsPVCUsedByPods`); with no such use and no in-line
GCE PD, AWS EBS, RBD or iSCSI volume it returns Skip: a pod without volumes
costs a loop over an empty tuple.

Filter, per node: an in-line disk that a pod on the node already mounts
conflicts (GCE PD and iSCSI unless both are read-only, AWS EBS always, RBD
when the monitors overlap on the same pool and image unless both are
read-only): "node(s) had no available disk"; then a ReadWriteOncePod claim in
use anywhere fails every node ("node has pod using PersistentVolumeClaim with
the same name and ReadWriteOncePod access mode"; Unschedulable, so that
preemption could help, as v1.27+). The nodes with a conflicting disk are found
in one pass over the placed pods that have volumes, not per node.

From 1.34 (kubernetes#129145; v1.33.0 still has the old words) the ReadWriteOncePod
reason is "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access
mode already in-use by another pod"; the checks are v1.28's (ReadWriteOncePod is GA).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eventsched.framework import (
    ASSIGNED_POD_DELETE,
    LEGACY_FEATURES,
    NODE_ADD,
    PVC_ADD,
    PVC_UPDATE,
    SKIP,
    BatchFilterResult,
    ClusterEvent,
    CycleState,
    Features,
    Handle,
    PreFilterResult,
    Status,
    check_args,
)
from eventsched.model import Indexes, NodeTable, Pod
from eventsched.model.podvolumes import PVC_RESOURCE, not_found, pod_claims, source
from eventsched.model.volumes import READ_WRITE_ONCE_POD

NAME = "VolumeRestrictions"
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT_1_34 = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)
_STATE_KEY = "PreFilterVolumeRestrictions"

GCE_PD = "gcePersistentDisk"
AWS_EBS = "awsElasticBlockStore"
RBD = "rbd"
ISCSI = "iscsi"
#: The in-line sources a conflict is checked for (`needsRestrictionsCheck`).
DISK_SOURCES = (GCE_PD, AWS_EBS, RBD, ISCSI)
#: The API server's default `rbd.pool`.
DEFAULT_RBD_POOL = "rbd"


@dataclass(frozen=True, slots=True)
class _State:
    #: The pod's in-line volumes with a source of DISK_SOURCES.
    disks: tuple[Mapping[str, Any], ...]
    #: How many of its ReadWriteOncePod claims a placed pod uses.
    conflicting_claims: int


def _read_only(raw: Mapping[str, Any]) -> bool:
    return bool(raw.get("readOnly"))


def _rbd_conflict(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    monitors = {str(m) for m in a.get("monitors") or []}
    return (
        bool(monitors & {str(m) for m in b.get("monitors") or []})
        and (a.get("pool") or DEFAULT_RBD_POOL) == (b.get("pool") or DEFAULT_RBD_POOL)
        and a.get("image") == b.get("image")
        and not (_read_only(a) and _read_only(b))
    )


def is_volume_conflict(volume: Mapping[str, Any], existing: Sequence[Mapping[str, Any]]) -> bool:
    """`isVolumeConflict`: whether `volume` may not be mounted beside a pod with `existing`."""
    for other in existing:
        for kind in DISK_SOURCES:
            mine, theirs = source(volume, kind), source(other, kind)
            if mine is None or theirs is None:
                continue
            if kind == GCE_PD:
                same = mine.get("pdName") == theirs.get("pdName")
                conflict = same and not (_read_only(mine) and _read_only(theirs))
            elif kind == AWS_EBS:
                conflict = mine.get("volumeID") == theirs.get("volumeID")
            elif kind == ISCSI:
                same = mine.get("iqn") == theirs.get("iqn")
                conflict = same and not (_read_only(mine) and _read_only(theirs))
            else:
                conflict = _rbd_conflict(mine, theirs)
            if conflict:
                return True
    return False


class VolumeRestrictions:
    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(NAME, args)
        self.read_write_once_pod_reason = (
            ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT_1_34
            if features.since("1.34")
            else ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT
        )

    def events_to_register(self) -> Sequence[ClusterEvent]:
        """v1.28: a pod deleted may release a disk, a node added may have none in use, a
        claim added or updated may now exist or change its access modes."""
        return (ASSIGNED_POD_DELETE, NODE_ADD, PVC_ADD, PVC_UPDATE)

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        disks = tuple(v for v in pod.volumes if any(source(v, k) is not None for k in DISK_SOURCES))
        storage = table.objects.storage
        read_write_once_pod: set[str] = set()
        for claim_ref in pod_claims(pod, ephemeral=False):
            claim = storage.claim(pod.namespace, claim_ref.claim)
            if claim is None:
                return None, Status.unresolvable(not_found(PVC_RESOURCE, claim_ref.claim))
            if READ_WRITE_ONCE_POD in claim.access_modes:
                read_write_once_pod.add(claim.name)
        used = _claims_in_use(table, pod.namespace, read_write_once_pod)
        if not disks and used == 0:
            return None, SKIP
        state.write(_STATE_KEY, _State(disks, used))
        return None, None

    def recount(self, state: CycleState, pod: Pod, table: NodeTable) -> Status | None:
        """PreFilter again over a table whose pods changed (upstream's AddPod/RemovePod)."""
        return self.pre_filter(state, pod, table)[1]

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        found: _State | None = state.get(_STATE_KEY)
        if found is None:
            return BatchFilterResult(
                np.zeros(len(rows), dtype=np.int64),
                [Status.as_error(f"cannot read {_STATE_KEY!r} from cycleState")],
            )
        verdict = np.full(len(rows), -1, dtype=np.int64)
        statuses: list[Status] = []
        if found.conflicting_claims > 0:
            statuses.append(Status.unschedulable(self.read_write_once_pod_reason))
            verdict[:] = 0
        if found.disks:
            conflicting = _rows_with_conflict(table, found.disks)[rows]
            if conflicting.any():
                statuses.append(Status.unschedulable(ERR_REASON_DISK_CONFLICT))
                verdict[conflicting] = len(statuses) - 1  # the disk is checked first
        return BatchFilterResult(verdict, statuses)


def _claims_in_use(table: NodeTable, namespace: str, claims: set[str]) -> int:
    """How many of `claims` (in `namespace`) a placed pod uses (`IsPVCUsedByPods`)."""
    if not claims:
        return 0
    used: set[str] = set()
    for placed in table.placed.pods:
        if placed.volumes and placed.namespace == namespace:
            used.update(c.claim for c in pod_claims(placed, ephemeral=False) if c.claim in claims)
    return len(used)


def _rows_with_conflict(table: NodeTable, disks: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """Every node row holding a pod whose volumes conflict with one of `disks`."""
    out = np.zeros(len(table), dtype=bool)
    node_rows = table.placed.node_rows
    for i, placed in enumerate(table.placed.pods):
        if placed.volumes and any(is_volume_conflict(d, placed.volumes) for d in disks):
            out[node_rows[i]] = True
    return out
