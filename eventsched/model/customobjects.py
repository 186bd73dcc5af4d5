"""The objects of the custom kinds plugins declare (model/customkinds.py), as observed.

Held by `ClusterObjects` (so by the NodeTable snapshot as `table.objects.custom`) beside the
built-in kinds; kept by kind, namespace and name without knowing any kind, and read by a
plugin through its own kind's declaration, which types what it gets back.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Protocol, TypeVar, cast

from eventsched.model.customkinds import CustomKind, CustomObject

T = TypeVar("T", bound=CustomObject)

_NONE: Mapping[str, CustomObject] = MappingProxyType({})


class CustomObjectReader(Protocol):
    """What a plugin reads of the custom objects: those of its kind, by namespace and name."""

    def in_namespace(self, kind: CustomKind[T], namespace: str = "") -> Mapping[str, T]: ...

    def named(self, kind: CustomKind[T], name: str, namespace: str = "") -> T | None: ...


class CustomObjects:
    """Kind -> namespace ("" for a cluster-scoped kind) -> name -> object, each level in
    the order first observed."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[str, dict[str, CustomObject]]] = {}

    def __iter__(self) -> Iterator[CustomObject]:
        """By kind name, then as held: the order the fold's saved state lists them in."""
        for kind in sorted(self._objects):
            for named in self._objects[kind].values():
                yield from named.values()

    def __len__(self) -> int:
        return sum(len(named) for spaces in self._objects.values() for named in spaces.values())

    def has(self, obj: CustomObject) -> bool:
        return obj.name in self._objects.get(obj.kind, {}).get(obj.namespace, {})

    def upsert(self, obj: CustomObject) -> None:
        self._objects.setdefault(obj.kind, {}).setdefault(obj.namespace, {})[obj.name] = obj

    def remove(self, obj: CustomObject) -> None:
        spaces = self._objects.get(obj.kind, {})
        named = spaces.get(obj.namespace, {})
        named.pop(obj.name, None)
        if not named:
            spaces.pop(obj.namespace, None)
        if not spaces:
            self._objects.pop(obj.kind, None)

    def clear(self) -> None:
        self._objects.clear()

    def in_namespace(self, kind: CustomKind[T], namespace: str = "") -> Mapping[str, T]:
        """The objects of `kind` in `namespace` ("" for a cluster-scoped kind) by name, in
        the order first observed; do not modify."""
        named = self._objects.get(kind.kind, {}).get(namespace, _NONE)
        # Only objects of `kind` are held under its name: those its decoders make.
        return cast(Mapping[str, T], named)

    def named(self, kind: CustomKind[T], name: str, namespace: str = "") -> T | None:
        """The object of `kind` named `name` in `namespace`, None when none is held."""
        return self.in_namespace(kind, namespace).get(name)
