"""CSIDrivers and CSIStorageCapacities, as VolumeBinding's capacity check reads them (v1.28).

`hasEnoughCapacity` (binder.go) checks a claim to provision only when its
class's provisioner is a CSIDriver with `spec.storageCapacity: true`; then
some CSIStorageCapacity of the claim's class must hold the claim's size
(`maximumVolumeSize` when set, else `capacity`; neither: no room) and its
`nodeTopology` label selector must match the node (a nil one matches none).
Only those fields are kept; sizes in bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eventsched.model.errors import ManifestError
from eventsched.model.quantity import QuantityError, parse_quantity
from eventsched.model.selectors import LabelSelector

CSI_DRIVER = "CSIDriver"
CSI_STORAGE_CAPACITY = "CSIStorageCapacity"


@dataclass(frozen=True, slots=True)
class CSIDriver:
    name: str
    #: spec.storageCapacity (absent: false).
    storage_capacity: bool = False
    kind: str = CSI_DRIVER
    #: spec.preventPodSchedulingIfMissing (VolumeLimitScaling, 1.36 on; absent: false):
    #: NodeVolumeLimits refuses nodes whose CSINode does not list the driver.
    prevent_pod_scheduling_if_missing: bool = False

    @property
    def key(self) -> str:
        return f"{CSI_DRIVER}/{self.name}"

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "kind": CSI_DRIVER,
            "name": self.name,
            "storageCapacity": self.storage_capacity,
        }
        if self.prevent_pod_scheduling_if_missing:
            record["preventPodSchedulingIfMissing"] = True  # only when set: older records stay
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> CSIDriver:
        return cls(
            str(record["name"]),
            bool(record.get("storageCapacity", False)),
            prevent_pod_scheduling_if_missing=bool(
                record.get("preventPodSchedulingIfMissing", False)
            ),
        )

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> CSIDriver:
        name = str(_mapping(obj.get("metadata")).get("name") or "")
        spec = _mapping(obj.get("spec"))
        return cls(
            name,
            spec.get("storageCapacity") is True,
            prevent_pod_scheduling_if_missing=spec.get("preventPodSchedulingIfMissing") is True,
        )


@dataclass(frozen=True, slots=True)
class CSIStorageCapacity:
    namespace: str
    name: str
    storage_class: str = ""
    #: nodeTopology; None (nil) makes the capacity available to no node.
    node_topology: LabelSelector | None = None
    capacity: int | None = None
    maximum_volume_size: int | None = None
    kind: str = CSI_STORAGE_CAPACITY

    @property
    def key(self) -> str:
        return f"{CSI_STORAGE_CAPACITY}/{self.namespace}/{self.name}"

    def holds(self, size: int) -> bool:
        """`capacitySufficient`: maximumVolumeSize when set, else capacity, is at least `size`."""
        limit = self.maximum_volume_size if self.maximum_volume_size is not None else self.capacity
        return limit is not None and limit >= size

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "kind": CSI_STORAGE_CAPACITY,
            "namespace": self.namespace,
            "name": self.name,
            "storageClassName": self.storage_class,
            "nodeTopology": None if self.node_topology is None else self.node_topology.to_dict(),
        }
        if self.capacity is not None:
            record["capacity"] = self.capacity
        if self.maximum_volume_size is not None:
            record["maximumVolumeSize"] = self.maximum_volume_size
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> CSIStorageCapacity:
        namespace, name = str(record["namespace"]), str(record["name"])
        topology = record.get("nodeTopology")
        where = f"{CSI_STORAGE_CAPACITY} {namespace}/{name}"
        return cls(
            namespace,
            name,
            str(record.get("storageClassName", "")),
            None if topology is None else LabelSelector.parse(topology, where, "nodeTopology"),
            _optional_int(record.get("capacity")),
            _optional_int(record.get("maximumVolumeSize")),
        )

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> CSIStorageCapacity:
        meta = _mapping(obj.get("metadata"))
        namespace = str(meta.get("namespace") or "default")
        name = str(meta.get("name") or "")
        where = f"{CSI_STORAGE_CAPACITY} {namespace}/{name}"
        topology = obj.get("nodeTopology")
        return cls(
            namespace,
            name,
            str(obj.get("storageClassName") or ""),
            None if topology is None else LabelSelector.parse(topology, where, "nodeTopology"),
            _size(obj.get("capacity"), where, "capacity"),
            _size(obj.get("maximumVolumeSize"), where, "maximumVolumeSize"),
        )


def _size(raw: Any, where: str, path: str) -> int | None:
    if raw is None:
        return None
    try:
        return parse_quantity(raw)
    except QuantityError as exc:
        raise ManifestError(where, path, str(exc)) from exc


def _optional_int(raw: Any) -> int | None:
    return None if raw is None else int(raw)


def _mapping(raw: Any) -> Mapping[str, Any]:
    return raw if isinstance(raw, Mapping) else {}
