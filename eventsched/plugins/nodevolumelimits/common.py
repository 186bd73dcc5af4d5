"""What the volume limit plugins (csi.py's CSILimits, intree.py's nonCSILimits) share.

Upstream's two Filters (nodevolumelimits/csi.go `filterAttachableVolumes`,
non_csi.go `filterVolumes`) look a pod's claims up the same way and count
the same way: the pod's volumes that count (each under a unique name and a
limit key) against those of the pods already on the node, each unique volume
once, the pod's own ones already attached not again.

Batch form: the placed pods' counted volumes are resolved once per change of
the cluster (`PlacedVolumes`) into (node row, volume, limit key) triples;
per pod, the counts per node are `np.add.at` over them (`Attached.total`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from eventsched.framework import Status
from eventsched.model import BoolArray, IntArray, NodeTable, Pod
from eventsched.model.podvolumes import PVC_RESOURCE, PodClaim, not_found, not_owner_message
from eventsched.model.storage import StorageObjects
from eventsched.model.volumes import PersistentVolumeClaim

#: `ErrReasonMaxVolumeCountExceeded` (csi.go and non_csi.go alike).
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
#: Upstream prefixes the name of a not-yet-bound claim's volume with 32 random characters
#: (`randomVolumeIDPrefix`); a fixed prefix counts alike and replays alike.
UNBOUND_PREFIX = "eventsched-unbound"


class VolumeError(Exception):
    """A volume of a pod that cannot be read: the Filter's Error status."""


class ClaimNotFound(VolumeError):
    """The new pod's claim does not exist: an Error in v1.28 and v1.29, from v1.30
    UnschedulableAndUnresolvable with the same words (`apierrors.IsNotFound`)."""


def volume_error_status(exc: VolumeError, unresolvable_not_found: bool) -> Status:
    """The Filter's status for a volume of the new pod that cannot be read."""
    if unresolvable_not_found and isinstance(exc, ClaimNotFound):
        return Status.unresolvable(str(exc))
    return Status.as_error(str(exc))


def lookup_claim(
    pod: Pod, ref: PodClaim, storage: StorageObjects, *, new_pod: bool
) -> PersistentVolumeClaim | None:
    """The claim a volume of the pod uses, as both Filters look it up.

    A claim without a name is an error. A claim that does not exist fails a
    new pod ("looking up PVC NS/NAME: ...", `ClaimNotFound`) and is not counted for a placed
    one (None). A generic ephemeral volume's claim must be the pod's own.
    """
    if not ref.claim:
        raise VolumeError("PersistentVolumeClaim had no name")
    claim = storage.claim(pod.namespace, ref.claim)
    if claim is None:
        if new_pod:
            raise ClaimNotFound(
                f"looking up PVC {pod.namespace}/{ref.claim}: {not_found(PVC_RESOURCE, ref.claim)}"
            )
        return None
    if ref.ephemeral:
        problem = not_owner_message(pod, claim)
        if problem is not None:
            raise VolumeError(problem)
    return claim


def unbound_name(namespace: str, claim: str) -> str:
    """The stand-in name of a claim's volume until its real one is known (`pvID`)."""
    return f"{UNBOUND_PREFIX}-{namespace}/{claim}"


@dataclass(frozen=True, slots=True)
class Attached:
    """The volumes of the placed pods, as (node row, volume index, limit key index) triples."""

    rows: IntArray
    volumes: IntArray
    keys: IntArray
    volume_index: dict[str, int]
    key_index: dict[str, int]
    #: Rows where a placed pod's volume cannot be read, with the (first) error.
    errors: dict[int, str]

    def total(self, key: str, mine: Iterable[str], size: int) -> IntArray:
        """Per node row: the unique volumes under `key` on the node, plus the pod's own
        `mine` (of that key) that are not on it already."""
        wanted = set(mine)
        count = np.full(size, len(wanted), dtype=np.int64)
        index = self.key_index.get(key)
        if index is None:
            return count
        of_key = self.keys == index
        np.add.at(count, self.rows[of_key], 1)
        shared = of_key & np.isin(self.volumes, [self.volume_index.get(u, -1) for u in wanted])
        np.add.at(count, self.rows[shared], -1)  # already attached: not new
        return count


#: A placed pod's counted volumes (unique name -> limit key) on the node of that row.
VolumesOf = Callable[[Pod, NodeTable, int], Mapping[str, str]]


class PlacedVolumes:
    """The placed pods' counted volumes, resolved again only when the cluster changed."""

    def __init__(self, volumes_of: VolumesOf) -> None:
        self._volumes_of = volumes_of
        self._cached: tuple[tuple[int, int], Attached] | None = None

    def of(self, table: NodeTable) -> Attached:
        stamp = (table.generation, table.objects.storage.generation)
        if self._cached is None or self._cached[0] != stamp:
            self._cached = (stamp, self._resolve(table))
        return self._cached[1]

    def _resolve(self, table: NodeTable) -> Attached:
        volume_index: dict[str, int] = {}
        key_index: dict[str, int] = {}
        seen: set[tuple[int, int]] = set()
        triples: list[tuple[int, int, int]] = []
        errors: dict[int, str] = {}
        node_rows = table.placed.node_rows
        for i, placed in enumerate(table.placed.pods):
            if not placed.volumes:
                continue
            row = int(node_rows[i])
            try:
                found = self._volumes_of(placed, table, row)
            except VolumeError as exc:
                errors.setdefault(row, str(exc))
                continue
            for unique, key in found.items():
                v = volume_index.setdefault(unique, len(volume_index))
                if (row, v) not in seen:
                    seen.add((row, v))
                    triples.append((row, v, key_index.setdefault(key, len(key_index))))
        columns = np.array(triples, dtype=np.int64).reshape(-1, 3)
        return Attached(
            columns[:, 0], columns[:, 1], columns[:, 2], volume_index, key_index, errors
        )


class CSINodeColumn:
    """Which nodes have a CSINode object (where the in-tree plugins are migrated), cached."""

    def __init__(self) -> None:
        self._cached: tuple[tuple[int, int], BoolArray] | None = None

    def of(self, table: NodeTable) -> BoolArray:
        storage = table.objects.storage
        stamp = (table.node_generation, storage.generation)
        if self._cached is None or self._cached[0] != stamp:
            column = np.array([name in storage.csi_nodes for name in table.names], dtype=bool)
            self._cached = (stamp, column)
        return self._cached[1]
