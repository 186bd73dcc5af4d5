"""Which available PersistentVolume each unbound claim would get on each node (VolumeBinding).

kube-scheduler's `findMatchingVolumes` sorts the pod's WaitForFirstConsumer
claims by requested size and, per node, gives each the volume
`FindMatchingVolume` picks, never one an earlier claim took on that node:

- a volume pre-bound to the claim (its claimRef names it) decides alone: it
  is the match where its node affinity holds, and there is none elsewhere;
- otherwise the smallest volume that is Available, of the claim's class,
  large enough, of the claim's volume mode, not being deleted, with no
  claimRef, matching the claim's selector and access modes, whose node
  affinity admits the node.

From 1.29 the volume attributes class counts too (`FindMatchingVolume`'s vacEnabled):
with the VolumeAttributesClass gate on (GA from 1.34) a volume matches only a claim of
the same `volumeAttributesClassName` ("" for none); with it off a volume that names one
matches nothing, and a claim that names one is an error
(`unsupported_attributes_class`). v1.28 has no such field.

Here each claim is matched on every candidate node at once: the node
affinity of each volume is a boolean column over the NodeTable (the caller
caches them), and a node's choice is the first volume in (size, name) order
whose column is true there. Upstream visits volumes in its informer index's
order, so between two equally small volumes it picks either; by name here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from eventsched.model.nodetable import BoolArray, Indexes, IntArray
from eventsched.model.storage import StorageObjects
from eventsched.model.volumes import AVAILABLE, PersistentVolume, PersistentVolumeClaim

#: A volume's node affinity over every node row (True: the volume can be used there).
AffinityMask = Callable[[PersistentVolume], BoolArray]
NO_VOLUME = -1


@dataclass(slots=True)
class Matches:
    """Per claim (in `claims` order, sorted by size) and candidate row: the chosen volume's
    index in `volumes`, or NO_VOLUME."""

    claims: tuple[PersistentVolumeClaim, ...]
    chosen: list[IntArray]
    volumes: list[PersistentVolume]

    def unmatched(self, i: int) -> tuple[PersistentVolumeClaim, ...]:
        """The claims row `i` found no volume for, in matching order."""
        return tuple(c for c, picks in zip(self.claims, self.chosen, strict=True) if picks[i] < 0)

    def matched(self, i: int) -> tuple[PersistentVolumeClaim, ...]:
        return tuple(c for c, picks in zip(self.claims, self.chosen, strict=True) if picks[i] >= 0)


def by_size(claims: Sequence[PersistentVolumeClaim]) -> tuple[PersistentVolumeClaim, ...]:
    """`sort.Sort(byPVCSize(...))`: ascending request; equal requests keep their order (Go's
    sort is an insertion sort, so stable, for the dozen claims a pod has)."""
    return tuple(sorted(claims, key=lambda c: c.storage))


def match_claims(
    claims: Sequence[PersistentVolumeClaim],
    storage: StorageObjects,
    rows: Indexes,
    affinity: AffinityMask,
    attributes_classes: bool | None = None,
) -> Matches:
    """`findMatchingVolumes` for every row of `rows`; `attributes_classes`: whether the
    VolumeAttributesClass gate is on (None: the version has no such check, v1.28)."""
    ordered = by_size(claims)
    volumes: list[PersistentVolume] = []
    index: dict[str, int] = {}
    chosen: list[IntArray] = []
    for claim in ordered:
        picks = np.full(len(rows), NO_VOLUME, dtype=np.int64)
        decided = np.zeros(len(rows), dtype=bool)
        prebound, free = _candidates(claim, storage, attributes_classes)
        for volume in prebound:
            v = index.setdefault(volume.name, len(index))
            if v == len(volumes):
                volumes.append(volume)
            here = ~decided & ~_taken(chosen, v, len(rows))
            picks[here & affinity(volume)[rows]] = v  # elsewhere: no match at all
            decided |= here
        for volume in free:
            v = index.setdefault(volume.name, len(index))
            if v == len(volumes):
                volumes.append(volume)
            here = ~decided & ~_taken(chosen, v, len(rows)) & affinity(volume)[rows]
            picks[here] = v
            decided |= here
        chosen.append(picks)
    return Matches(ordered, chosen, volumes)


def _taken(chosen: Sequence[IntArray], volume: int, count: int) -> BoolArray:
    """Rows where an earlier claim already took `volume` (`excludedVolumes`)."""
    taken = np.zeros(count, dtype=bool)
    for picks in chosen:
        taken |= picks == volume
    return taken


def unsupported_attributes_class(
    claims: Sequence[PersistentVolumeClaim], attributes_classes: bool | None
) -> str | None:
    """`FindMatchingVolume`'s error for the first claim that names a volume attributes class
    while the gate is off, else None."""
    if attributes_classes is not False:
        return None
    for claim in by_size(claims):
        if claim.volume_attributes_class:
            return (
                f"unsupported volumeAttributesClassName is set on claim "
                f"{claim.namespace}/{claim.name} when the feature-gate VolumeAttributesClass "
                f"is disabled"
            )
    return None


def _candidates(
    claim: PersistentVolumeClaim, storage: StorageObjects, attributes_classes: bool | None
) -> tuple[list[PersistentVolume], list[PersistentVolume]]:
    """The volumes of the claim's class that could match it on some node: those pre-bound
    to it, and the free ones, smallest first."""
    prebound: list[PersistentVolume] = []
    free: list[PersistentVolume] = []
    for volume in storage.volumes_of_class(claim.storage_class):
        if volume.claim_ref is not None and not volume.bound_to(claim):
            continue
        if volume.storage < claim.storage or volume.volume_mode != claim.volume_mode:
            continue
        if attributes_classes is not None and volume.volume_attributes_class != (
            claim.volume_attributes_class if attributes_classes else ""
        ):
            continue
        if volume.deleting:
            continue
        if volume.bound_to(claim):
            prebound.append(volume)
        elif (
            volume.phase == AVAILABLE
            and (claim.selector is None or claim.selector.matches(volume.labels))
            and set(claim.access_modes) <= set(volume.access_modes)
        ):
            free.append(volume)
    free.sort(key=lambda v: v.storage)  # stable: by name within a size
    return prebound, free
