"""The PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes the scheduler has observed.

Held by `ClusterObjects` (so by the NodeTable snapshot as `table.objects.storage`)
and read by the volume plugins as kube-scheduler's plugins read their listers.
Lookups are by key; `volumes_of_class` is the PV assume cache's class index,
kept until the next change (`generation`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from eventsched.model.volumes import (
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeObject,
)


class StorageObjects:
    def __init__(self) -> None:
        self.claims: dict[tuple[str, str], PersistentVolumeClaim] = {}
        self.volumes: dict[str, PersistentVolume] = {}
        self.classes: dict[str, StorageClass] = {}
        self.csi_nodes: dict[str, CSINode] = {}
        #: Bumped on every change, so plugins may cache what they derive.
        self.generation = 0
        self._by_class: dict[str, list[PersistentVolume]] | None = None

    def __iter__(self) -> Iterator[VolumeObject]:
        yield from self.classes.values()
        yield from self.volumes.values()
        yield from self.claims.values()
        yield from self.csi_nodes.values()

    def __len__(self) -> int:
        return len(self.claims) + len(self.volumes) + len(self.classes) + len(self.csi_nodes)

    def _table(self, obj: VolumeObject) -> tuple[dict[Any, Any], object]:
        """The dict that holds objects of `obj`'s kind, and `obj`'s key in it."""
        if isinstance(obj, PersistentVolumeClaim):
            return self.claims, (obj.namespace, obj.name)
        if isinstance(obj, PersistentVolume):
            return self.volumes, obj.name
        if isinstance(obj, StorageClass):
            return self.classes, obj.name
        return self.csi_nodes, obj.name

    def has(self, obj: VolumeObject) -> bool:
        table, key = self._table(obj)
        return key in table

    def upsert(self, obj: VolumeObject) -> None:
        table, key = self._table(obj)
        table[key] = obj
        self._changed()

    def remove(self, obj: VolumeObject) -> None:
        table, key = self._table(obj)
        if table.pop(key, None) is not None:
            self._changed()

    def clear(self) -> None:
        for table in (self.claims, self.volumes, self.classes, self.csi_nodes):
            table.clear()
        self._changed()

    def _changed(self) -> None:
        self.generation += 1
        self._by_class = None

    def claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.claims.get((namespace, name))

    def volumes_of_class(self, storage_class: str) -> list[PersistentVolume]:
        """The PersistentVolumes of a class (`GetPersistentVolumeClass`), by name.

        kube-scheduler lists them from an index in no particular order; by name
        here, so the same cluster gives the same choice every time.
        """
        if self._by_class is None:
            by_class: dict[str, list[PersistentVolume]] = {}
            for volume in sorted(self.volumes.values(), key=lambda v: v.name):
                by_class.setdefault(volume.storage_class, []).append(volume)
            self._by_class = by_class
        return self._by_class.get(storage_class, [])
