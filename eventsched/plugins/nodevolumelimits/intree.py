"""EBSLimits, GCEPDLimits, AzureDiskLimits, CinderLimits: kube-scheduler v1.28's in-tree volume limits.

One implementation (`nonCSILimits` of nodevolumelimits/non_csi.go), four
plugins, each counting one in-tree volume type (`VolumeType`): AWS EBS,
GCE PD, Azure Disk, Cinder. The first three are in v1.28's default profile
(between VolumeRestrictions and VolumeBinding, around NodeVolumeLimits);
CinderLimits can be enabled.

PreFilter: Skip unless the pod has a volume of the type, a
`persistentVolumeClaim` or a generic ephemeral volume.

Filter, per node, as upstream's:
- the pod's volumes of the type, each by its own ID (`filterVolumes`, new
  pod): an in-line source's (EBS `volumeID`, GCE `pdName`, Azure
  `diskName`, Cinder `volumeID`, untranslated), a claim's bound
  PersistentVolume's of the same source; a claim not yet bound, or bound to
  a volume that does not exist, counts (as `<prefix>-NS/CLAIM`) when its
  `spec.storageClassName` names a class whose provisioner is the type's
  in-tree plugin (`kubernetes.io/aws-ebs`, ...). A claim that cannot be read
  is an Error on every node (common.py `lookup_claim`). None counted: pass.
- a node with a CSINode object passes: the type's plugin is migrated there
  (`isCSIMigrationOn` is true for these four in v1.28) and NodeVolumeLimits
  counts its volumes instead.
- otherwise the unique volumes of the pods on the node (`filterVolumes`,
  existing pods: a claim that does not exist is not counted; a volume that
  cannot be read is an Error), plus the pod's that are not among them, must
  not exceed the node's limit: its allocatable `attachable-volumes-aws-ebs`
  (`-gce-pd`, `-azure-disk`, `-cinder`) when it reports one, else the
  type's default (`getMaxVolumeFunc`): EBS 39, or 25 on a Nitro instance
  type (`getMaxEBSVolume`: the node's instance-type label matches
  `^[cmr]5.*|t3|z1d`), GCE PD 16, Azure Disk 16, Cinder 256. Over it:
  "node(s) exceed max volume count" (Unschedulable).

Where eventsched departs from upstream, deliberately:
- `KUBE_MAX_PD_VOLS` is not read. Upstream reads that environment variable
  on every Filter and lets it override every type's default; a limit taken
  from the scheduler's environment would not be in the event log, and replay
  could then decide differently. A node's allocatable
  `attachable-volumes-<type>` sets the limit instead (and is logged).
- A node labelled with both `node.kubernetes.io/instance-type` and
  `beta.kubernetes.io/instance-type` of different values: upstream takes
  whichever Go's map iteration meets first (random); eventsched the stable
  label's.
- A claim is matched to its class by `PersistentVolumeClaim.storage_class`,
  which honours the deprecated `volume.beta.kubernetes.io/storage-class`
  annotation; upstream's `matchProvisioner` reads `spec.storageClassName` only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from eventsched.framework import (
    ASSIGNED_POD_DELETE,
    LEGACY_FEATURES,
    NODE_ADD,
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
from eventsched.model import Indexes, IntArray, Node, NodeTable, Pod
from eventsched.model.csimigration import (
    AWS_EBS,
    AZURE_DISK,
    CINDER,
    GCE_PD,
    IN_TREE,
    in_tree_volume_id,
)
from eventsched.model.podvolumes import claim_of, source
from eventsched.model.storage import StorageObjects
from eventsched.model.volumes import PersistentVolumeClaim
from eventsched.plugins.nodevolumelimits.common import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    CSINodeColumn,
    PlacedVolumes,
    VolumeError,
    lookup_claim,
    unbound_name,
    volume_error_status,
)

#: `volumeutil.EBSNitroLimitRegex`: Go's `regexp.MatchString`, an unanchored search.
EBS_NITRO_LIMIT_REGEX = re.compile(r"^[cmr]5.*|t3|z1d")
DEFAULT_MAX_EBS_VOLUMES = 39
DEFAULT_MAX_EBS_NITRO_VOLUMES = 25
#: `v1.LabelInstanceTypeStable`, then `v1.LabelInstanceType`.
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


@dataclass(frozen=True, slots=True)
class VolumeType:
    """One in-tree volume type: upstream's `VolumeFilter` and its limit (non_csi.go)."""

    plugin: str  #: the scheduler plugin's name
    source: str  #: the volume source field, e.g. awsElasticBlockStore
    limit_key: str  #: the node allocatable that overrides the default limit
    default_max: int  #: the default limit (EBS: unless the instance type is Nitro)

    @property
    def provisioner(self) -> str:
        """The in-tree plugin's name, which an unbound claim's class must name."""
        return IN_TREE[self.source].name

    def max_volumes(self, node: Node) -> int:
        """`getMaxVolumeFunc` (without `KUBE_MAX_PD_VOLS`), overridden by the node's
        allocatable limit key."""
        if self.limit_key in node.allocatable:
            return int(node.allocatable[self.limit_key])
        if self.source == AWS_EBS:
            return max_ebs_volumes(instance_type(node))
        return self.default_max


EBS = VolumeType("EBSLimits", AWS_EBS, "attachable-volumes-aws-ebs", DEFAULT_MAX_EBS_VOLUMES)
GCE_PD_TYPE = VolumeType("GCEPDLimits", GCE_PD, "attachable-volumes-gce-pd", 16)
AZURE_DISK_TYPE = VolumeType("AzureDiskLimits", AZURE_DISK, "attachable-volumes-azure-disk", 16)
CINDER_TYPE = VolumeType("CinderLimits", CINDER, "attachable-volumes-cinder", 256)


def instance_type(node: Node) -> str:
    """The node's instance type label ("" without one)."""
    return next((node.labels[k] for k in INSTANCE_TYPE_LABELS if k in node.labels), "")


def max_ebs_volumes(node_instance_type: str) -> int:
    """`getMaxEBSVolume`: 25 on Nitro instance types, else 39."""
    if EBS_NITRO_LIMIT_REGEX.search(node_instance_type):
        return DEFAULT_MAX_EBS_NITRO_VOLUMES
    return DEFAULT_MAX_EBS_VOLUMES


def filter_volumes(
    pod: Pod, storage: StorageObjects, kind: VolumeType, *, new_pod: bool
) -> set[str]:
    """`filterVolumes`: the IDs of the pod's volumes of the type (see the module doc)."""
    found: set[str] = set()
    for volume in pod.volumes:
        raw = source(volume, kind.source)
        if raw is not None:
            found.add(in_tree_volume_id(kind.source, raw))
            continue
        ref = claim_of(pod, volume)
        if ref is None:
            continue
        claim = lookup_claim(pod, ref, storage, new_pod=new_pod)
        if claim is None:
            continue
        bound = storage.volumes.get(claim.volume_name) if claim.volume_name else None
        if bound is None:
            # Unbound (or its volume is gone): the pod may still use the volume it had.
            if _matches_provisioner(claim, storage, kind):
                found.add(unbound_name(pod.namespace, ref.claim))
        elif bound.source == kind.source:
            found.add(bound.volume_id)
    return found


def _matches_provisioner(
    claim: PersistentVolumeClaim, storage: StorageObjects, kind: VolumeType
) -> bool:
    """`matchProvisioner`: the claim's class exists and is provisioned by the type's plugin."""
    storage_class = storage.classes.get(claim.storage_class) if claim.storage_class else None
    return storage_class is not None and storage_class.provisioner == kind.provisioner


class InTreeVolumeLimits:
    """`nonCSILimits`: the Filter of one in-tree volume type (the subclasses name it)."""

    name: ClassVar[str]
    volume_type: ClassVar[VolumeType]

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args)
        self._csi_nodes = CSINodeColumn()
        self._placed = PlacedVolumes(self._placed_volumes)
        self._limits: tuple[int, IntArray] | None = None
        self.unresolvable_not_found = features.since("1.30")

    def events_to_register(self) -> Sequence[ClusterEvent]:
        """v1.28: a node added, an assigned pod deleted (volumes freed)."""
        return (NODE_ADD, ASSIGNED_POD_DELETE)

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        for volume in pod.volumes:
            if source(volume, self.volume_type.source) is not None:
                return None, None
            if claim_of(pod, volume) is not None:
                return None, None
        return None, SKIP

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        verdict = np.full(len(rows), -1, dtype=np.int64)
        if not pod.volumes:
            return BatchFilterResult(verdict, [])
        try:
            mine = filter_volumes(pod, table.objects.storage, self.volume_type, new_pod=True)
        except VolumeError as exc:
            verdict[:] = 0
            status = volume_error_status(exc, self.unresolvable_not_found)
            return BatchFilterResult(verdict, [status])
        if not mine:
            return BatchFilterResult(verdict, [])
        counted = ~self._csi_nodes.of(table)[rows]  # migrated nodes: NodeVolumeLimits counts
        attached = self._placed.of(table)
        total = attached.total(self.volume_type.limit_key, mine, len(table))[rows]
        statuses: list[Status] = []
        for i, row in enumerate(rows):
            message = attached.errors.get(int(row))
            if message is not None and counted[i]:
                statuses.append(Status.as_error(message))
                verdict[i] = len(statuses) - 1
        failing = counted & (total > self._max_volumes(table)[rows]) & (verdict < 0)
        if failing.any():
            statuses.append(Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED))
            verdict[failing] = len(statuses) - 1
        return BatchFilterResult(verdict, statuses)

    def _placed_volumes(self, pod: Pod, table: NodeTable, row: int) -> dict[str, str]:
        """A placed pod's volumes of the type, on a node where they are counted."""
        storage = table.objects.storage
        if table.names[row] in storage.csi_nodes:
            return {}
        ids = filter_volumes(pod, storage, self.volume_type, new_pod=False)
        return dict.fromkeys(ids, self.volume_type.limit_key)

    def _max_volumes(self, table: NodeTable) -> IntArray:
        """Each node's limit, cached until the nodes change."""
        if self._limits is None or self._limits[0] != table.node_generation:
            column = np.array([self.volume_type.max_volumes(n) for n in table.nodes], np.int64)
            self._limits = (table.node_generation, column)
        return self._limits[1]


class EBSLimits(InTreeVolumeLimits):
    name = EBS.plugin
    volume_type = EBS


class GCEPDLimits(InTreeVolumeLimits):
    name = GCE_PD_TYPE.plugin
    volume_type = GCE_PD_TYPE


class AzureDiskLimits(InTreeVolumeLimits):
    name = AZURE_DISK_TYPE.plugin
    volume_type = AZURE_DISK_TYPE


class CinderLimits(InTreeVolumeLimits):
    name = CINDER_TYPE.plugin
    volume_type = CINDER_TYPE
