"""The scheduling-relevant part of a Kubernetes Node."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from eventsched.model.errors import ManifestError
from eventsched.model.quantity import QuantityError
from eventsched.model.resources import Resources, parse_resource_list
from eventsched.model.taints import EFFECTS, Taint
from eventsched.model.valueclass import value_class


@value_class
class NodeImage:
    """One `status.images` entry: the names it goes by and its size (ImageLocality)."""

    names: tuple[str, ...]
    size: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"names": list(self.names), "sizeBytes": self.size}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> NodeImage:
        return cls(tuple(str(n) for n in raw.get("names") or ()), int(raw.get("sizeBytes") or 0))


@value_class
class Node:
    name: str
    allocatable: Resources = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    uid: str = ""
    images: tuple[NodeImage, ...] = ()
    #: `status.declaredFeatures` as the kubelet publishes it, in its order (NodeDeclaredFeatures).
    declared_features: tuple[str, ...] = ()

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any], where: str = "Node") -> Node:
        """Read a Node object (API JSON or YAML manifest), naming the field that is wrong."""
        meta = obj.get("metadata") or {}
        name = meta.get("name")
        if not name or not isinstance(name, str):
            raise ManifestError(where, "metadata.name", "is required (a DNS-1123 name)")
        where = f"Node {name}"
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        raw_alloc = status.get("allocatable") or status.get("capacity") or {}
        if not isinstance(raw_alloc, Mapping):
            raise ManifestError(
                where, "status.allocatable", "must be a map of resource to quantity"
            )
        try:
            allocatable = parse_resource_list(raw_alloc)
        except QuantityError as exc:
            raise ManifestError(where, "status.allocatable", str(exc)) from exc
        taints = []
        for i, raw in enumerate(spec.get("taints") or []):
            taint = Taint.from_dict(raw)
            if taint.effect not in EFFECTS:
                raise ManifestError(
                    where, f"spec.taints[{i}].effect", f"must be one of {', '.join(EFFECTS)}"
                )
            taints.append(taint)
        labels = meta.get("labels") or {}
        raw_images = status.get("images") or []
        if not isinstance(raw_images, list) or not all(isinstance(i, Mapping) for i in raw_images):
            raise ManifestError(where, "status.images", "must be a list of {names, sizeBytes}")
        declared = status.get("declaredFeatures") or []
        if not isinstance(declared, list) or not all(isinstance(f, str) for f in declared):
            raise ManifestError(where, "status.declaredFeatures", "must be a list of names")
        return cls(
            name=name,
            allocatable=allocatable,
            labels={str(k): str(v) for k, v in labels.items()},
            taints=tuple(taints),
            unschedulable=bool(spec.get("unschedulable", False)),
            uid=str(meta.get("uid") or ""),
            images=tuple(NodeImage.from_dict(i) for i in raw_images),
            declared_features=tuple(declared),
        )

    def to_record(self) -> dict[str, Any]:
        """What a `node_observed` event keeps: enough to rebuild this object exactly."""
        record: dict[str, Any] = {
            "name": self.name,
            "uid": self.uid,
            "allocatable": dict(self.allocatable),
            "labels": dict(self.labels),
            "taints": [t.to_dict() for t in self.taints],
            "unschedulable": self.unschedulable,
        }
        if self.images:
            record["images"] = [i.to_dict() for i in self.images]
        if self.declared_features:
            record["declaredFeatures"] = list(self.declared_features)
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Node:
        return cls(
            name=record["name"],
            uid=record.get("uid", ""),
            allocatable=dict(record.get("allocatable", {})),
            labels=dict(record.get("labels", {})),
            taints=tuple(Taint.from_dict(t) for t in record.get("taints", [])),
            unschedulable=bool(record.get("unschedulable", False)),
            images=tuple(NodeImage.from_dict(i) for i in record.get("images", ())),
            declared_features=tuple(record.get("declaredFeatures", ())),
        )
