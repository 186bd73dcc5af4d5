"""The documents of a YAML stream, as PyYAML's safe loader gives them, each read the
fastest way that gives the same.

The stream is cut at its `---` lines. A document whose lines are all of the plain subset
that dumpers and kubectl write (`yamlsubset`) and that libyaml accepts (its parser run in
C, making no Python objects) is built by `yaml_rs` in native code; any other document is
read by the event reader (`yamlevents`), on its own. When that reader fails (libyaml
rejects the text, an alias names nothing, a tag is unknown), the stream is read again by
PyYAML's composer and constructor from that document on, so the documents before come
out and then the very error, naming the line, that `yaml.safe_load_all` raises.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import yaml
import yaml_rs

from eventsched.cluster.yamlevents import check_syntax, classic_documents, event_documents
from eventsched.cluster.yamlsubset import in_subset

#: Documents larger than this are read by the event reader, which tells progress within.
_NATIVE_LIMIT = 256 * 1024
#: Characters read natively between two reports of how far the reading got.
_REPORT_EVERY = 128 * 1024
_SEPARATOR = "\n---"
_LAST_WINS = yaml_rs.DuplicateKeyPolicy.LastWins  # as a dict built key by key


@dataclass(frozen=True, slots=True)
class _Region:
    """The text of one document between two `---` lines: `text[start:end]`.

    `explicit` when a `---` line opened it (the first region has none: it holds no
    document when it holds nothing but blank lines).
    """

    start: int
    end: int
    explicit: bool


def yaml_documents(text: str, on_read: Callable[[int, int], None] | None = None) -> Iterator[Any]:
    """Each document of `text` as `yaml.safe_load_all` would give it, one at a time.

    `on_read(characters, documents)` is told every so often how far into the text the
    reading got and how many documents it finished: within a large document, too.
    Raises `yaml.YAMLError` as `safe_load_all` would.
    """
    reader = _StreamReader(text, on_read)
    try:
        yield from reader.documents()
    except yaml.YAMLError:
        yield from classic_documents(text, skip=reader.finished, on_read=on_read)


class _StreamReader:
    """Reads region after region; `finished` counts the documents handed out."""

    def __init__(self, text: str, on_read: Callable[[int, int], None] | None) -> None:
        self.text = text
        self.on_read = on_read
        self.finished = 0
        self.told_at = 0

    def documents(self) -> Iterator[Any]:
        for region in _regions(self.text):
            text = self.text[region.start : region.end]
            if _native(text):
                try:
                    document = self._native_document(text, region.end)
                except yaml_rs.YAMLDecodeError:
                    pass  # not seen in the subset; should it be, the event reader decides
                else:
                    yield document
                    continue
            yield from self._event_documents(text, region)

    def _native_document(self, text: str, end: int) -> Any:
        """The document of a region of the subset; libyaml's parser must accept it first."""
        check_syntax(text)
        document = yaml_rs.loads(text, parse_datetime=False, duplicate_key_policy=_LAST_WINS)
        self.finished += 1
        if self.on_read is not None and end - self.told_at >= _REPORT_EVERY:
            self.told_at = end
            self.on_read(end, self.finished)
        return document

    def _event_documents(self, text: str, region: _Region) -> Iterator[Any]:
        """The region's documents by the event reader, on their own."""
        opening = "---\n" if region.explicit else ""
        shift = region.start - len(opening)
        before = self.finished
        on_read = self.on_read

        def told(chars: int, documents: int) -> None:
            if on_read is not None:
                on_read(shift + chars, before + documents)

        for document in event_documents(opening + text, told):
            self.finished += 1
            yield document
        self.told_at = region.end


def _native(text: str) -> bool:
    """Whether `yaml_rs` reads a region's text as the safe loader would (a region of blank
    lines holds one empty document or none, which the event reader tells apart)."""
    if len(text) > _NATIVE_LIMIT or not text.strip():
        return False
    lines = f"\n{text}" if text.endswith("\n") else f"\n{text}\n"
    return in_subset(lines, 0, len(lines))


def _regions(text: str) -> Iterator[_Region]:
    """The regions between the lines that are `---` alone, in order."""
    start, explicit, at = 0, False, 0
    if text.startswith("---") and text[3:4] in ("", "\n"):
        start, explicit, at = 4, True, 3
    while (at := text.find(_SEPARATOR, at)) != -1:
        after = at + len(_SEPARATOR)
        if after < len(text) and text[after] != "\n":
            at += 1
            continue
        yield _Region(start, at + 1, explicit)
        start, explicit, at = after + 1, True, after
    yield _Region(min(start, len(text)), len(text), explicit)
