"""StorageClasses and CSINodes as the volume plugins read them (see model/volumes.py).

A StorageClass without `volumeBindingMode` is `Immediate`, as the API server
defaults it; a CSINode keeps each driver's `allocatable.count` and the in-tree
plugins its `storage.alpha.kubernetes.io/migrated-plugins` annotation names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eventsched.model.errors import ManifestError

STORAGE_CLASS = "StorageClass"
CSI_NODE = "CSINode"
#: `v1.MigratedPluginsAnnotationKey`.
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
IMMEDIATE = "Immediate"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"


@dataclass(frozen=True, slots=True)
class TopologyRequirement:
    """One `matchLabelExpressions` entry of a StorageClass's allowedTopologies: key In values."""

    key: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StorageClass:
    name: str
    provisioner: str = ""
    binding_mode: str = IMMEDIATE
    #: allowedTopologies: each term's matchLabelExpressions.
    allowed_topologies: tuple[tuple[TopologyRequirement, ...], ...] = ()
    kind: str = STORAGE_CLASS

    @property
    def key(self) -> str:
        return f"{STORAGE_CLASS}/{self.name}"

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "kind": STORAGE_CLASS,
            "name": self.name,
            "provisioner": self.provisioner,
            "volumeBindingMode": self.binding_mode,
        }
        if self.allowed_topologies:
            record["allowedTopologies"] = _topologies_to_list(self.allowed_topologies)
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> StorageClass:
        return cls(
            name=str(record["name"]),
            provisioner=str(record.get("provisioner", "")),
            binding_mode=str(record.get("volumeBindingMode", IMMEDIATE)),
            allowed_topologies=_topologies(record.get("allowedTopologies"), "", ""),
        )

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> StorageClass:
        name = str(_mapping(obj.get("metadata")).get("name") or "")
        return cls(
            name=name,
            provisioner=str(obj.get("provisioner") or ""),
            binding_mode=str(obj.get("volumeBindingMode") or IMMEDIATE),
            allowed_topologies=_topologies(
                obj.get("allowedTopologies"), f"{STORAGE_CLASS} {name}", "allowedTopologies"
            ),
        )


@dataclass(frozen=True, slots=True)
class CSIDriverLimit:
    """One `spec.drivers[]` entry of a CSINode: the driver and `allocatable.count` (None: no limit)."""

    name: str
    count: int | None = None


@dataclass(frozen=True, slots=True)
class CSINode:
    name: str
    drivers: tuple[CSIDriverLimit, ...] = ()
    #: The `storage.alpha.kubernetes.io/migrated-plugins` annotation, split at commas:
    #: the in-tree plugins migrated to CSI on the node (VolumeBinding reads it).
    migrated_plugins: tuple[str, ...] = ()
    kind: str = CSI_NODE

    @property
    def key(self) -> str:
        return f"{CSI_NODE}/{self.name}"

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "kind": CSI_NODE,
            "name": self.name,
            "drivers": [
                {"name": d.name, **({} if d.count is None else {"count": d.count})}
                for d in self.drivers
            ],
        }
        if self.migrated_plugins:
            record["migratedPlugins"] = list(self.migrated_plugins)
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> CSINode:
        return cls(
            str(record["name"]),
            tuple(
                CSIDriverLimit(str(d["name"]), None if d.get("count") is None else int(d["count"]))
                for d in record.get("drivers", ())
            ),
            tuple(str(p) for p in record.get("migratedPlugins", ())),
        )

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> CSINode:
        meta = _mapping(obj.get("metadata"))
        name = str(meta.get("name") or "")
        migrated = str(_mapping(meta.get("annotations")).get(MIGRATED_PLUGINS_ANNOTATION) or "")
        drivers = []
        for i, raw in enumerate(_mapping(obj.get("spec")).get("drivers") or []):
            if not isinstance(raw, Mapping):
                raise ManifestError(f"{CSI_NODE} {name}", f"spec.drivers[{i}]", "must be an object")
            count = _mapping(raw.get("allocatable")).get("count")
            if count is not None and not isinstance(count, int):
                raise ManifestError(
                    f"{CSI_NODE} {name}",
                    f"spec.drivers[{i}].allocatable.count",
                    "must be an integer",
                )
            drivers.append(CSIDriverLimit(str(raw.get("name") or ""), count))
        return cls(name, tuple(drivers), tuple(migrated.split(",")) if migrated else ())


def _mapping(raw: Any) -> Mapping[str, Any]:
    return raw if isinstance(raw, Mapping) else {}


def _topologies(raw: Any, where: str, path: str) -> tuple[tuple[TopologyRequirement, ...], ...]:
    terms = []
    for i, term in enumerate(raw if isinstance(raw, list) else ()):
        expressions = []
        for j, expr in enumerate(_mapping(term).get("matchLabelExpressions") or []):
            values = _mapping(expr).get("values")
            if not isinstance(values, list):
                raise ManifestError(
                    where, f"{path}[{i}].matchLabelExpressions[{j}].values", "must be a list"
                )
            expressions.append(
                TopologyRequirement(str(_mapping(expr).get("key") or ""), tuple(map(str, values)))
            )
        terms.append(tuple(expressions))
    return tuple(terms)


def _topologies_to_list(
    terms: Sequence[Sequence[TopologyRequirement]],
) -> list[dict[str, Any]]:
    return [
        {"matchLabelExpressions": [{"key": r.key, "values": list(r.values)} for r in term]}
        for term in terms
    ]
