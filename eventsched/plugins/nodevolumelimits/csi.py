"""NodeVolumeLimits: a CSI driver's attach limit per node (kube-scheduler v1.28's CSILimits).

PreFilter: Skip unless the pod has a claim (`persistentVolumeClaim` or generic
ephemeral) or an in-line volume CSI migration could count (GCE PD, AWS EBS,
Azure Disk, Cinder, RBD).

Filter, per node, as upstream: the pod's volumes that count, each named
`driver/handle` under the limit key `attachable-volumes-csi-<driver>`: a
claim bound to a CSI volume counts under its driver; an in-tree volume (a PV
or in-line) under its migrated driver when the node has a CSINode object (v1.28
migrates GCE PD, AWS EBS, Azure Disk and Cinder); an unbound claim, or one
whose volume is missing, under its class's provisioner with a per-claim
handle. Nothing counts, or the node reports no limit (node allocatable
`attachable-volumes-*`, overridden by the CSINode's `allocatable.count`): it
passes. Otherwise the volumes of the pods already on the node are counted
(each unique volume once, the pod's own shared ones not again) and a driver
over its limit fails the node: "node(s) exceed max volume count"
(Unschedulable). A claim of the pod that does not exist is an Error in v1.28
(`looking up PVC NS/NAME: persistentvolumeclaim "NAME" not found`; it became
UnschedulableAndUnresolvable in v1.30); other plugins reject it before.

The in-tree EBSLimits, GCEPDLimits and AzureDiskLimits plugins, also in
v1.28's default profile (intree.py), defer to this one on every node that
has a CSINode object (their plugins are migrated there).

By version (`csi.go`):
- 1.30 on: a claim of the pod that does not exist is UnschedulableAndUnresolvable.
- 1.32 on: the limits come from CSINode objects alone (`getVolumeLimits`), per driver
  name; node allocatable `attachable-volumes-*` no longer counts. Upstream also counts
  the VolumeAttachment objects naming the node (`getNodeVolumeAttachmentInfo`: an
  attacher and the handle of a CSI PersistentVolume, once with the pods' volumes).
  eventsched does not observe VolumeAttachments: it counts the volumes of the pods
  placed on the node only, as v1.28 did, and so admits a pod that a node still
  attached to a deleted pod's volumes would refuse upstream until they are detached.
- VolumeLimitScaling (1.35 alpha, 1.37 beta and on): a driver of the pod's volumes
  that has a CSIDriver object (1.36 on: one with `preventPodSchedulingIfMissing`) and
  is not listed in the node's CSINode (or the node has none): "<driver> CSI driver is
  not installed on the node" (Unschedulable), before the limits are looked at.

Batch form: see common.py (the placed pods' volumes resolved once per change
of the cluster, counts per node by `np.add.at`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from eventsched.framework import (
    ASSIGNED_POD_DELETE,
    CSI_NODE_ADD,
    LEGACY_FEATURES,
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
from eventsched.model import BoolArray, Indexes, IntArray, NodeTable, Pod
from eventsched.model.csimigration import (
    ATTACHABLE_PREFIX,
    AWS_EBS,
    BY_PROVISIONER,
    CSI,
    IN_TREE,
    attach_limit_key,
    inline_handle,
)
from eventsched.model.podvolumes import claim_of, source, volume_name
from eventsched.model.storage import StorageObjects
from eventsched.model.volumes import CSINode, PersistentVolumeClaim
from eventsched.plugins.nodevolumelimits.common import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    CSINodeColumn,
    PlacedVolumes,
    VolumeError,
    lookup_claim,
    unbound_name,
    volume_error_status,
)

NAME = "NodeVolumeLimits"


class NodeVolumeLimits:
    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(NAME, args)
        #: 1.32 on: limits from CSINode objects only, counted per driver name (v1.28: node
        #: allocatable `attachable-volumes-csi-<driver>` too, overridden by the CSINode).
        self.csinode_limits_only = features.since("1.32")
        self.unresolvable_not_found = features.since("1.30")
        #: VolumeLimitScaling (1.35 alpha, 1.37 beta): a driver the node's CSINode lacks.
        self.checks_driver = features.since("1.35") and features.volume_limit_scaling
        self.driver_opts_in = features.since("1.36")
        self._placed = PlacedVolumes(self._placed_volumes)
        self._limits: dict[tuple[int, int, str], IntArray] = {}
        self._csi_nodes = CSINodeColumn()

    def key_of(self, driver: str) -> str:
        """What a driver's volumes are counted and limited under."""
        return driver if self.csinode_limits_only else attach_limit_key(driver)

    def _placed_volumes(self, pod: Pod, table: NodeTable, row: int) -> dict[str, str]:
        """A placed pod's counted volumes (`filterAttachableVolumes` of an existing pod)."""
        storage = table.objects.storage
        migrated = table.names[row] in storage.csi_nodes
        found = attachable_volumes(pod, storage, migrated=migrated, new_pod=False)
        return {unique: self.key_of(driver) for unique, driver in found.items()}

    def events_to_register(self) -> Sequence[ClusterEvent]:
        """v1.28: a CSINode added (limits known), an assigned pod deleted (volumes freed)."""
        return (CSI_NODE_ADD, ASSIGNED_POD_DELETE)

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        for volume in pod.volumes:
            if claim_of(pod, volume) is not None or _in_tree_kind(volume) is not None:
                return None, None
        return None, SKIP

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        storage = table.objects.storage
        verdict = np.full(len(rows), -1, dtype=np.int64)
        statuses: list[Status] = []
        has_csi_node = self._csi_nodes.of(table)[rows]
        for migrated in (False, True):
            variant = has_csi_node == migrated
            if not variant.any():
                continue
            try:
                drivers = attachable_volumes(pod, storage, migrated=migrated, new_pod=True)
            except VolumeError as exc:
                statuses.append(volume_error_status(exc, self.unresolvable_not_found))
                verdict[variant] = len(statuses) - 1
                continue
            if not drivers:
                continue
            if self.checks_driver:
                self._check_drivers(table, rows, variant, drivers, verdict, statuses)
            wanted = {unique: self.key_of(driver) for unique, driver in drivers.items()}
            self._judge(table, rows, variant, wanted, verdict, statuses)
        return BatchFilterResult(verdict, statuses)

    def _check_drivers(
        self,
        table: NodeTable,
        rows: Indexes,
        variant: np.ndarray,
        drivers: dict[str, str],
        verdict: IntArray,
        statuses: list[Status],
    ) -> None:
        """`checkCSIDriverOnNode` (VolumeLimitScaling): a driver with a CSIDriver object (from
        1.36: one with `preventPodSchedulingIfMissing`) must be listed in the node's CSINode,
        else "<driver> CSI driver is not installed on the node" (Unschedulable). Upstream
        checks the pod's volumes in Go's map order; eventsched in the pod's volume order."""
        storage = table.objects.storage
        for driver in dict.fromkeys(drivers.values()):
            csi_driver = storage.csi_drivers.get(driver)
            if csi_driver is None:
                continue
            if self.driver_opts_in and not csi_driver.prevent_pod_scheduling_if_missing:
                continue
            missing = np.array(
                [
                    not any(
                        d.name == driver for d in getattr(csi_nodes_of(table, r), "drivers", ())
                    )
                    for r in rows
                ],
                dtype=bool,
            )
            failing = variant & missing & (verdict < 0)
            if failing.any():
                statuses.append(
                    Status.unschedulable(f"{driver} CSI driver is not installed on the node")
                )
                verdict[failing] = len(statuses) - 1

    def _judge(
        self,
        table: NodeTable,
        rows: Indexes,
        variant: np.ndarray,
        wanted: dict[str, str],
        verdict: IntArray,
        statuses: list[Status],
    ) -> None:
        """Fail the rows of `variant` where the pod's `wanted` volumes exceed a limit."""
        attached = self._placed.of(table)
        exceeded = np.zeros(len(rows), dtype=bool)
        for key in set(wanted.values()):
            limit = self._limit(table, key)[rows]
            if not (limit >= 0).any():
                continue
            mine = [u for u, k in wanted.items() if k == key]
            total = attached.total(key, mine, len(table))[rows]
            exceeded |= (limit >= 0) & (total > limit)
        if attached.errors:
            # Upstream reads the placed pods' volumes only on nodes with some limit.
            limited = self._any_limit(table)[rows]
            for i, row in enumerate(rows):
                message = attached.errors.get(int(row))
                if message is not None and variant[i] and limited[i] and verdict[i] < 0:
                    statuses.append(Status.as_error(message))
                    verdict[i] = len(statuses) - 1
        failing = variant & exceeded & (verdict < 0)
        if failing.any():
            statuses.append(Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED))
            verdict[failing] = len(statuses) - 1

    def _any_limit(self, table: NodeTable) -> BoolArray:
        """Nodes that report any attach limit (`len(nodeVolumeLimits) > 0`)."""
        csi_nodes = table.objects.storage.csi_nodes
        return np.array(
            [
                (
                    not self.csinode_limits_only
                    and any(k.startswith(ATTACHABLE_PREFIX) for k in node.allocatable)
                )
                or any(
                    d.count is not None for d in getattr(csi_nodes.get(node.name), "drivers", ())
                )
                for node in table.nodes
            ],
            dtype=bool,
        )

    def _limit(self, table: NodeTable, key: str) -> IntArray:
        """Each node's limit for `key` (-1: none): allocatable, overridden by its CSINode."""
        storage = table.objects.storage
        stamp = (table.node_generation, storage.generation, key)
        limit = self._limits.get(stamp)
        if limit is None:
            self._limits = {k: v for k, v in self._limits.items() if k[:2] == stamp[:2]}
            limit = np.array(
                [self._node_limit(table, row, key) for row in range(len(table))], np.int64
            )
            self._limits[stamp] = limit
        return limit

    def _node_limit(self, table: NodeTable, row: int, key: str) -> int:
        """The node's limit for `key` (-1: none): its CSINode's `allocatable.count` (the last
        entry of the driver), else, before 1.32, its allocatable `key`."""
        csi_node = csi_nodes_of(table, row)
        if csi_node is not None:
            for driver in reversed(csi_node.drivers):
                if driver.count is not None and self.key_of(driver.name) == key:
                    return driver.count
        if not self.csinode_limits_only and key.startswith(ATTACHABLE_PREFIX):
            return int(table.nodes[row].allocatable.get(key, -1))
        return -1


def csi_nodes_of(table: NodeTable, row: int) -> CSINode | None:
    return table.objects.storage.csi_nodes.get(table.names[int(row)])


def _in_tree_kind(volume: Mapping[str, Any]) -> str | None:
    """The in-tree source of an in-line volume CSI migration knows (`IsInlineMigratable`)."""
    return next((kind for kind in IN_TREE if source(volume, kind) is not None), None)


def attachable_volumes(
    pod: Pod, storage: StorageObjects, *, migrated: bool, new_pod: bool
) -> dict[str, str]:
    """`filterAttachableVolumes`: the pod's counted volumes, `driver/handle` -> driver.

    `migrated`: the node has a CSINode object (in-tree volumes count). A claim
    that does not exist fails a new pod and is not counted for a placed one.
    """
    result: dict[str, str] = {}
    for volume in pod.volumes:
        ref = claim_of(pod, volume)
        if ref is None:
            _inline(volume, migrated, result)
            continue
        claim = lookup_claim(pod, ref, storage, new_pod=new_pod)
        if claim is None:
            continue
        driver, handle = _driver_info(claim, storage, migrated)
        if driver and handle:
            result[f"{driver}/{handle}"] = driver
    return result


def _inline(volume: Mapping[str, Any], migrated: bool, result: dict[str, str]) -> None:
    """`checkAttachableInlineVolume`: an in-line in-tree volume counts where it is migrated."""
    kind = _in_tree_kind(volume)
    if kind is None or not migrated or not IN_TREE[kind].migrated:
        return
    raw = source(volume, kind) or {}
    handle = inline_handle(kind, raw)
    if handle is None:
        raise VolumeError(
            f"converting volume({volume_name(volume)}) from inline to csi: failed to translate "
            f"Kubernetes ID to EBS Volume ID Invalid format for AWS volume "
            f"({raw.get('volumeID') if kind == AWS_EBS else ''})"
        )
    driver = IN_TREE[kind].driver
    result[f"{driver}/{handle}"] = driver


def _driver_info(
    claim: PersistentVolumeClaim, storage: StorageObjects, migrated: bool
) -> tuple[str, str]:
    """`getCSIDriverInfo`: the driver and handle a claim's volume counts under ("" none)."""
    volume = storage.volumes.get(claim.volume_name) if claim.volume_name else None
    if volume is None:
        return _driver_info_from_class(claim, storage, migrated)
    if volume.source == CSI:
        return volume.driver, volume.handle
    plugin = IN_TREE.get(volume.source)
    if plugin is None or not migrated or not plugin.migrated:
        return "", ""
    return plugin.driver, volume.handle


def _driver_info_from_class(
    claim: PersistentVolumeClaim, storage: StorageObjects, migrated: bool
) -> tuple[str, str]:
    """`getCSIDriverInfoFromSC`: an unbound claim counts under its class's provisioner."""
    storage_class = storage.classes.get(claim.storage_class) if claim.storage_class else None
    if storage_class is None:
        return "", ""
    handle = unbound_name(claim.namespace, claim.name)
    plugin = BY_PROVISIONER.get(storage_class.provisioner)
    if plugin is not None:
        if not migrated or not plugin.migrated:
            return "", ""
        return plugin.driver, handle
    return storage_class.provisioner, handle
