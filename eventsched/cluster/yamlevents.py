"""The documents of a YAML stream, built straight from libyaml's events.

PyYAML's safe loader composes each document into a tree of nodes, then walks the tree
again in Python to construct dicts, lists and scalars; for a manifest of 70,000 pods that
second walk is most of the time spent loading it. Here the objects are built as libyaml
(`CParser`) reports the events, with the same tag resolution as `yaml.SafeLoader` (YAML
1.1: `yes` is true, `010` is 8, ...), and a plain scalar seen before is taken from a
cache: its tag is not resolved again, and 70,000 pods share one `"default"` string.

What manifests rarely hold, anchors and aliases, explicit tags and merge keys (`<<`), is
left to PyYAML's own constructor: the document that holds one, and those after it, are
read as `yaml.safe_load_all` reads them, so every document is what it was.

`yamlstream` reads most documents of a manifest faster; these are the documents it leaves
to this reader, and the whole stream when libyaml finds it is not valid YAML.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_VALUE = "tag:yaml.org,2002:value"
#: Mappings and sequences between two reports of how far the parser got (a few milliseconds' worth).
_REPORT_EVERY = 2_000
#: Plain scalars remembered; past this many distinct ones, the cache starts over.
_CACHE_SIZE = 100_000
_UNSEEN = object()


class _Unusual(Exception):
    """The document holds something only PyYAML's constructor builds as it should."""


def event_documents(text: str, on_read: Callable[[int, int], None] | None = None) -> Iterator[Any]:
    """Each document of `text` as `yaml.safe_load_all` would give it, one at a time.

    `on_read(characters, documents)` is told every few thousand events how far into the
    text the parser got and how many documents it finished: within a document, too.
    Raises `yaml.YAMLError` as `safe_load_all` would.
    """
    builder = _Builder(text, on_read)
    try:
        yield from builder.documents()
    except _Unusual:
        yield from classic_documents(text, skip=builder.finished, on_read=on_read)
    finally:
        builder.loader.dispose()


def check_syntax(text: str) -> None:
    """Raises the `yaml.YAMLError` that libyaml's parser raises on `text`, if any.

    The C parser runs through the whole text making no Python object.
    """
    if not yaml.__with_libyaml__:
        for _ in yaml.parse(text, Loader=yaml.SafeLoader):
            pass
        return
    from yaml._yaml import CParser  # the parser alone, without the safe loader's parts

    parser = CParser(text)
    try:
        parser.raw_parse()
    finally:
        parser.dispose()


def classic_documents(
    text: str, skip: int, on_read: Callable[[int, int], None] | None
) -> Iterator[Any]:
    """The documents after the first `skip` ones, by PyYAML's composer and constructor."""
    loader = _Loader(text)
    try:
        count = 0
        while loader.check_node():
            node = loader.get_node()
            count += 1
            if count <= skip:
                continue
            yield loader.construct_document(node)
            if on_read is not None:
                on_read(node.end_mark.index if node is not None else len(text), count)
    finally:
        loader.dispose()


class _Builder:
    """Objects from events; `finished` counts the documents handed out."""

    def __init__(self, text: str, on_read: Callable[[int, int], None] | None) -> None:
        self.loader = _Loader(text)
        self.on_read = on_read
        self.finished = 0
        self.events = 0
        self.plain: dict[str, Any] = {}
        self.quoted: dict[str, str] = {}

    def documents(self) -> Iterator[Any]:
        next_event = self.loader.get_event
        next_event()  # the stream's start
        while True:
            event = next_event()
            if isinstance(event, StreamEndEvent):
                return
            assert isinstance(event, DocumentStartEvent)
            document = self.value(next_event())
            end = next_event()
            assert isinstance(end, DocumentEndEvent)
            self.finished += 1
            yield document

    def value(self, event: Any) -> Any:
        """The object `event` starts (a scalar, or a mapping or sequence to its end)."""
        kind = type(event)
        if kind is ScalarEvent:
            return self.scalar(event)
        if kind is AliasEvent or event.anchor is not None or event.tag is not None:
            raise _Unusual
        self.events += 1
        if self.on_read is not None and self.events % _REPORT_EVERY == 0:
            self.on_read(event.start_mark.index, self.finished)
        next_event, scalar, value = self.loader.get_event, self.scalar, self.value
        if kind is MappingStartEvent:
            mapping: dict[Any, Any] = {}
            while (key_event := next_event()).__class__ is not MappingEndEvent:
                if key_event.__class__ is not ScalarEvent:
                    raise _Unusual  # a key that is a mapping or a list: unhashable
                item = next_event()
                mapping[scalar(key_event)] = (
                    scalar(item) if item.__class__ is ScalarEvent else value(item)
                )
            return mapping
        items: list[Any] = []
        while (item := next_event()).__class__ is not SequenceEndEvent:
            items.append(scalar(item) if item.__class__ is ScalarEvent else value(item))
        return items

    def scalar(self, event: ScalarEvent) -> Any:
        if event.anchor is not None or event.tag is not None:
            raise _Unusual
        text: str = event.value
        if not event.implicit[0]:  # quoted, or a block: a string
            return self.quoted.setdefault(text, text)
        built = self.plain.get(text, _UNSEEN)
        if built is _UNSEEN:
            built = self.plain[text] = self.resolved(event)
        return built

    def resolved(self, event: ScalarEvent) -> Any:
        """A plain scalar's value, by its implicitly resolved tag."""
        tag = self.loader.resolve(ScalarNode, event.value, event.implicit)
        if tag in (_MERGE, _VALUE):
            raise _Unusual
        if len(self.plain) >= _CACHE_SIZE:
            self.plain.clear()
            self.quoted.clear()
        if tag == _STR:
            return event.value
        start: Any = event.start_mark  # the C parser's own Mark class
        node = ScalarNode(tag, event.value, start, event.end_mark, event.style)  # type: ignore[arg-type]
        return self.loader.yaml_constructors[tag](self.loader, node)
