"""The PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes, CSIDrivers and
CSIStorageCapacities the scheduler has observed.

Held by `ClusterObjects` (so by the NodeTable snapshot as `table.objects.storage`)
and read by the volume plugins as kube-scheduler's plugins read their listers.
Lookups are by key; `volumes_of_class` is the PV assume cache's class index,
kept until the next change (`generation`).

VolumeBinding's PV assume cache (`assume_cache.go`) is here too: a volume a
reservation assumed pre-bound to a claim (`assume`, folded from the
`reserved` event) is what `volume` and `volumes_of_class` return, until the
reservation is undone (`forget`, from `unreserved`: `Restore`) or the volume
is observed again (the informer's newer version replaces the assumed one).
`volumes` and iteration keep the observed objects only, which is what the
other plugins' listers read.

Its PVC assume cache likewise: a claim a reservation assumed with the
selected-node annotation (to be provisioned on the node) is what `claim`
returns until the reservation is undone or the claim is observed again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from eventsched.model.pvbinding import Assumption, ClaimAssumption, VolumeAssumption
from eventsched.model.volumes import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeObject,
)


@dataclass(frozen=True, slots=True)
class AssumedVolume:
    """A volume as a pod's reservation assumed it."""

    pod_uid: str
    assumption: VolumeAssumption
    volume: PersistentVolume


@dataclass(frozen=True, slots=True)
class AssumedClaim:
    """A claim as a pod's reservation assumed it (selected node set)."""

    pod_uid: str
    assumption: ClaimAssumption
    claim: PersistentVolumeClaim


class StorageObjects:
    def __init__(self) -> None:
        self.claims: dict[tuple[str, str], PersistentVolumeClaim] = {}
        self.volumes: dict[str, PersistentVolume] = {}
        self.classes: dict[str, StorageClass] = {}
        self.csi_nodes: dict[str, CSINode] = {}
        self.csi_drivers: dict[str, CSIDriver] = {}
        self.capacities: dict[tuple[str, str], CSIStorageCapacity] = {}
        #: Volumes assumed pre-bound by reservations not yet undone nor observed since.
        self.assumed: dict[str, AssumedVolume] = {}
        #: Claims assumed with a selected node by reservations not yet undone nor observed.
        self.assumed_claims: dict[tuple[str, str], AssumedClaim] = {}
        #: Bumped on every change, so plugins may cache what they derive.
        self.generation = 0
        self._by_class: dict[str, list[PersistentVolume]] | None = None

    def __iter__(self) -> Iterator[VolumeObject]:
        yield from self.classes.values()
        yield from self.volumes.values()
        yield from self.claims.values()
        yield from self.csi_nodes.values()
        yield from self.csi_drivers.values()
        yield from self.capacities.values()

    def __len__(self) -> int:
        tables = (self.claims, self.volumes, self.classes, self.csi_nodes, self.csi_drivers)
        return sum(len(t) for t in tables) + len(self.capacities)

    def _table(self, obj: VolumeObject) -> tuple[dict[Any, Any], object]:
        """The dict that holds objects of `obj`'s kind, and `obj`'s key in it."""
        if isinstance(obj, PersistentVolumeClaim):
            return self.claims, (obj.namespace, obj.name)
        if isinstance(obj, PersistentVolume):
            return self.volumes, obj.name
        if isinstance(obj, StorageClass):
            return self.classes, obj.name
        if isinstance(obj, CSIDriver):
            return self.csi_drivers, obj.name
        if isinstance(obj, CSIStorageCapacity):
            return self.capacities, (obj.namespace, obj.name)
        return self.csi_nodes, obj.name

    def has(self, obj: VolumeObject) -> bool:
        table, key = self._table(obj)
        return key in table

    def upsert(self, obj: VolumeObject) -> None:
        """An observation; a volume's supersedes what was assumed of it."""
        table, key = self._table(obj)
        table[key] = obj
        if isinstance(obj, PersistentVolume):
            self.assumed.pop(obj.name, None)
        if isinstance(obj, PersistentVolumeClaim):
            self.assumed_claims.pop((obj.namespace, obj.name), None)
        self._changed()

    def remove(self, obj: VolumeObject) -> None:
        table, key = self._table(obj)
        assumed: object = None
        if isinstance(obj, PersistentVolume):
            assumed = self.assumed.pop(obj.name, None)
        elif isinstance(obj, PersistentVolumeClaim):
            assumed = self.assumed_claims.pop((obj.namespace, obj.name), None)
        if table.pop(key, None) is not None or assumed is not None:
            self._changed()

    def clear(self) -> None:
        self.assumed_claims.clear()
        self.capacities.clear()
        for table in (self.claims, self.volumes, self.classes, self.csi_nodes, self.assumed):
            table.clear()
        self.csi_drivers.clear()
        self._changed()

    # -- the PV assume cache -------------------------------------------------------------

    def assume(self, pod_uid: str, assumptions: Iterable[Assumption]) -> None:
        """`AssumePodVolumes`: each volume taken as pre-bound to its claim, each claim to
        provision taken with its selected node. What is not observed is skipped (the
        assume caches refuse to assume what they do not hold)."""
        changed = False
        for assumption in assumptions:
            if isinstance(assumption, VolumeAssumption):
                changed |= self._assume_volume(pod_uid, assumption)
            else:
                changed |= self._assume_claim(pod_uid, assumption)
        if changed:
            self._changed()

    def _assume_volume(self, pod_uid: str, assumption: VolumeAssumption) -> bool:
        observed = self.volumes.get(assumption.volume)
        if observed is None:
            return False
        assumed = replace(observed, claim_ref=assumption.claim)
        self.assumed[assumption.volume] = AssumedVolume(pod_uid, assumption, assumed)
        return True

    def _assume_claim(self, pod_uid: str, assumption: ClaimAssumption) -> bool:
        key = (assumption.claim.namespace, assumption.claim.name)
        observed = self.claims.get(key)
        if observed is None:
            return False
        assumed = replace(observed, selected_node=assumption.selected_node)
        self.assumed_claims[key] = AssumedClaim(pod_uid, assumption, assumed)
        return True

    def forget(self, pod_uid: str) -> None:
        """`RevertAssumedPodVolumes`, `revertAssumedPVCs`: the pod's assumptions not
        superseded yet are undone."""
        mine = [name for name, a in self.assumed.items() if a.pod_uid == pod_uid]
        for name in mine:
            del self.assumed[name]
        claims = [key for key, c in self.assumed_claims.items() if c.pod_uid == pod_uid]
        for key in claims:
            del self.assumed_claims[key]
        if mine or claims:
            self._changed()

    def assumptions(self) -> list[tuple[str, Assumption]]:
        """Every assumption held, with the pod whose reservation made it (the saved view)."""
        held: list[tuple[str, Assumption]] = [
            (a.pod_uid, a.assumption) for a in self.assumed.values()
        ]
        held.extend((c.pod_uid, c.assumption) for c in self.assumed_claims.values())
        return held

    def volume(self, name: str) -> PersistentVolume | None:
        """`pvCache.GetPV`: the assumed version of the volume, else the observed one."""
        assumed = self.assumed.get(name)
        return assumed.volume if assumed is not None else self.volumes.get(name)

    def _changed(self) -> None:
        self.generation += 1
        self._by_class = None

    def claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        """`pvcCache.GetPVC`: the assumed version of the claim, else the observed one."""
        assumed = self.assumed_claims.get((namespace, name))
        return assumed.claim if assumed is not None else self.claims.get((namespace, name))

    def volumes_of_class(self, storage_class: str) -> list[PersistentVolume]:
        """The PersistentVolumes of a class (`GetPersistentVolumeClass`), by name, assumed
        versions included (`pvCache.ListPVs`).

        kube-scheduler lists them from an index in no particular order; by name
        here, so the same cluster gives the same choice every time.
        """
        if self._by_class is None:
            by_class: dict[str, list[PersistentVolume]] = {}
            for name, observed in sorted(self.volumes.items()):
                assumed = self.assumed.get(name)
                volume = assumed.volume if assumed is not None else observed
                by_class.setdefault(volume.storage_class, []).append(volume)
            self._by_class = by_class
        return self._by_class.get(storage_class, [])
