"""Custom kinds (model/customkinds.py, model/customobjects.py) without any plugin: a kind is
declared by name and loaded when first looked up; kind names (`KINDS`, `CLUSTER_SCOPED`)
take in what is declared later; `ClusterObjects` keeps custom objects by kind, namespace
and name."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from eventsched.model.customkinds import CustomKind, CustomKinds, KindNames
from eventsched.model.objects import ClusterObjects


@dataclass(frozen=True, slots=True)
class Widget:
    namespace: str
    name: str
    size: int = 0
    kind: str = "Widget"

    @property
    def key(self) -> str:
        return f"Widget/{self.namespace}/{self.name}" if self.namespace else f"Widget/{self.name}"

    def to_record(self) -> dict[str, Any]:
        return {"kind": "Widget", "namespace": self.namespace, "name": self.name, "size": self.size}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Widget:
        return cls(str(record["namespace"]), str(record["name"]), int(record["size"]))

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> Widget:
        meta = obj["metadata"]
        return cls(str(meta.get("namespace") or ""), str(meta["name"]), int(obj["size"]))


def widgets(namespaced: bool = True) -> CustomKind[Widget]:
    return CustomKind(
        kind="Widget",
        group="example.com",
        version="v1",
        plural="widgets",
        namespaced=namespaced,
        from_manifest=Widget.from_manifest,
        from_record=Widget.from_record,
        crd_file="deploy/crds/widgets.yaml",
    )


def test_a_kind_is_loaded_once_when_first_looked_up() -> None:
    kinds = CustomKinds()
    loads: list[str] = []

    def load() -> CustomKind[Any]:
        loads.append("Widget")
        return widgets()

    kinds.declare("Widget", load)
    assert "Widget" in kinds and list(kinds) == ["Widget"] and len(kinds) == 1
    assert loads == []
    assert kinds["Widget"].resource == "example.com/v1/widgets"
    assert kinds.get("Widget") is kinds["Widget"]
    assert loads == ["Widget"]
    assert kinds.get("Gadget") is None
    with pytest.raises(KeyError, match="no plugin declares the custom kind 'Gadget'"):
        kinds["Gadget"]


def test_a_kind_is_declared_once_and_loads_as_declared() -> None:
    kinds = CustomKinds()
    kinds.declare("Widget", widgets)
    with pytest.raises(ValueError, match="declared twice"):
        kinds.declare("Widget", widgets)
    kinds.declare("Gadget", widgets)
    with pytest.raises(ValueError, match="declared as 'Gadget' loads as 'Widget'"):
        kinds.get("Gadget")


def test_kind_names_take_in_kinds_declared_later() -> None:
    kinds = CustomKinds()
    every = KindNames(("Namespace", "Service"), kinds)
    cluster_scoped = KindNames(("Namespace",), kinds, namespaced=False)
    assert "Widget" not in every and list(every) == ["Namespace", "Service"]
    kinds.declare("Widget", widgets)
    kinds.declare("Gizmo", lambda: widgets(namespaced=False))
    assert "Widget" in every and list(every) == ["Namespace", "Service", "Widget", "Gizmo"]
    assert len(every) == 4 and 7 not in every
    assert "Widget" not in cluster_scoped and "Service" not in cluster_scoped


def test_cluster_objects_keep_custom_objects_by_kind_namespace_and_name() -> None:
    kind = widgets()
    objects = ClusterObjects()
    objects.upsert(Widget("a", "w2", 2))
    objects.upsert(Widget("a", "w1", 1))
    objects.upsert(Widget("b", "w1", 3))
    assert len(objects) == 3 and objects.has(Widget("a", "w1"))
    assert list(objects.custom.in_namespace(kind, "a")) == ["w2", "w1"]
    assert objects.custom.named(kind, "w1", "b") == Widget("b", "w1", 3)
    assert objects.custom.named(kind, "w1", "c") is None
    assert [w.key for w in objects] == ["Widget/a/w2", "Widget/a/w1", "Widget/b/w1"]
    objects.upsert(Widget("a", "w2", 5))
    assert objects.custom.named(kind, "w2", "a") == Widget("a", "w2", 5)
    objects.remove(Widget("a", "w2"))
    objects.remove(Widget("a", "w1"))
    assert objects.custom.in_namespace(kind, "a") == {} and not objects.has(Widget("a", "w1"))
    assert len(objects) == 1
    objects.clear()
    assert len(objects) == 0 and list(objects) == []
