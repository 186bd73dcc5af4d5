"""YAML documents as PyYAML's safe loader makes them, made faster for manifests.

PyYAML's C parser composes each document's nodes; constructing Python objects from them
is then done in Python, one generic call per node, and was most of the time a large
manifest took to load. `documents` constructs the nodes of an ordinary document
(mappings, sequences, strings, numbers, booleans, nulls, timestamps, anchors) with a
direct walk instead, and gives any document with something else in it (a merge key, a
tag of another type, a key that is not a scalar, an alias of a collection inside
itself) to the safe loader whole, so the objects, and the errors, are the safe loader's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_Base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
#: Scalars whose value depends on their text alone, so one text is constructed once.
_CACHED = ("tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int")
#: Scalars constructed by the safe loader's own function, node by node.
_SCALARS = (*_CACHED, "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp")
#: Plain scalars whose tag is remembered are at most this long (names and ids are not).
_RESOLVED_LENGTH = 12


class _Unusual(Exception):
    """A document the direct walk leaves to the safe loader."""


class ManifestLoader(_Base):  # type: ignore[valid-type,misc]
    """The safe loader, remembering the tags of short plain scalars (`v1`, `'8'`, `true`)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._tags: dict[str, str] = {}

    def resolve(self, kind: type[Node], value: Any, implicit: Any) -> str:
        if kind is ScalarNode and implicit[0] and not self.yaml_path_resolvers:
            tag = self._tags.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(value) <= _RESOLVED_LENGTH:
                    self._tags[value] = tag
            return tag
        return str(super().resolve(kind, value, implicit))


def documents(loader: ManifestLoader, on_node: Callable[[Node], None]) -> Iterator[Any]:
    """Each document of the loader's stream, as `loader.construct_document` would make it.

    `on_node` is given each document's node before it is constructed.
    """
    walk = _Walk(loader)
    while loader.check_node():
        node = loader.get_node()
        on_node(node)
        try:
            data = walk.construct(node)
        except _Unusual:
            data = loader.construct_document(node)
        finally:
            walk.made.clear()
            walk.making.clear()
        yield data


class _Walk:
    """Constructs one document's nodes; `made` holds its collections by node, for aliases."""

    def __init__(self, loader: ManifestLoader) -> None:
        self.loader = loader
        self.made: dict[int, Any] = {}
        self.making: set[int] = set()
        self.scalars: dict[tuple[str, str], Any] = {}

    def construct(self, node: Node) -> Any:
        tag = node.tag
        if type(node) is ScalarNode:
            if tag == _STR:
                return node.value
            return self._scalar(node)
        made = self.made.get(id(node))
        if made is not None:
            return made
        if id(node) in self.making:
            raise _Unusual  # a collection inside itself
        self.making.add(id(node))
        if type(node) is MappingNode and tag == _MAP:
            value: Any = self._mapping(node)
        elif type(node) is SequenceNode and tag == _SEQ:
            value = [self.construct(item) for item in node.value]
        else:
            raise _Unusual
        self.made[id(node)] = value
        return value

    def _mapping(self, node: MappingNode) -> dict[Any, Any]:
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if type(key_node) is not ScalarNode:
                raise _Unusual  # perhaps unhashable: the safe loader says so
            key_tag = key_node.tag
            if key_tag == _STR:
                key = key_node.value
            elif key_tag in _SCALARS:
                key = self._scalar(key_node)
            else:
                raise _Unusual  # a merge key (`<<`), a value key (`=`), another type
            mapping[key] = self.construct(value_node)
        return mapping

    def _scalar(self, node: Node) -> Any:
        tag = node.tag
        if tag not in _SCALARS:
            raise _Unusual
        if tag in _CACHED:
            key = (tag, node.value)
            if key in self.scalars:
                return self.scalars[key]
            value = self.loader.yaml_constructors[tag](self.loader, node)
            self.scalars[key] = value
            return value
        return self.loader.yaml_constructors[tag](self.loader, node)
