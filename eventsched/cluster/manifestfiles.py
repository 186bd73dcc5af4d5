"""The files and documents of manifests: which files a path names, and the objects in each.

A directory is searched recursively, hidden entries left out, symlinks followed (a
symlinked directory of manifests is read like any other). A symlink that loops (to
itself through others, or to a directory it sits in) is an error naming it, never
skipped; a symlink to nothing is skipped with a warning. Files are read in the order
of their paths relative to the directory, so a cluster loads the same everywhere.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from eventsched.cluster.yamlstream import yaml_documents
from eventsched.model import ManifestError

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True, slots=True)
class Document:
    """One object of one file; `location` says where, e.g. `a.yaml (document 2, items[0])`."""

    location: str
    obj: Mapping[str, Any]


@dataclass(slots=True)
class ManifestFiles:
    """The files to read, in order, and what was passed over (with why)."""

    files: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def manifest_files(paths: Sequence[str | Path] | str | Path) -> ManifestFiles:
    """Every manifest file once, in a deterministic order."""
    if isinstance(paths, str | Path):
        paths = [paths]
    found = ManifestFiles()
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        _check_not_a_loop(path)
        if path.is_dir():
            listed = _walk(path, found.skipped)
            if not listed:
                raise FileNotFoundError(
                    errno.ENOENT,
                    f"no manifests ({', '.join('*' + s for s in MANIFEST_SUFFIXES)}) in directory",
                    str(path),
                )
        elif path.is_file():
            listed = [path]
        else:
            raise FileNotFoundError(errno.ENOENT, "no such manifest file or directory", str(path))
        for file in listed:
            if file.resolve() not in seen:
                seen.add(file.resolve())
                found.files.append(file)
    return found


def _walk(root: Path, skipped: list[str]) -> list[Path]:
    """The manifest files under `root`, sorted by their path relative to it."""
    files: list[Path] = []
    # The directories above the root count as ones it is in: a link to any of them loops.
    resolved = Path(os.path.realpath(root))
    above = tuple(str(p) for p in (resolved, *resolved.parents))
    pending: list[tuple[Path, tuple[str, ...]]] = [(root, above)]
    while pending:
        directory, ancestors = pending.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            raise ManifestError(
                str(directory), "directory", f"cannot be read: {exc.strerror or exc}"
            ) from exc
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            if entry.is_symlink() and not _target_exists(path, skipped):
                continue
            if entry.is_dir():
                real = os.path.realpath(path)
                if real in ancestors:
                    target = os.readlink(path) if entry.is_symlink() else real
                    raise _loop(path, f"is a loop: it points to {target}, a directory it is in")
                pending.append((path, (*ancestors, real)))
            elif entry.is_file() and path.suffix.lower() in MANIFEST_SUFFIXES:
                files.append(path)
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def _check_not_a_loop(path: Path) -> None:
    """A path given on the command line that is a looping symlink: named, not 'not found'."""
    if path.is_symlink():
        _target_exists(path, [])


def _target_exists(link: Path, skipped: list[str]) -> bool:
    """Whether the symlink leads somewhere; a loop is an error, a dangling one skipped."""
    try:
        link.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _loop(link, f"is a loop ({_chain(link)})") from exc
        if link.suffix.lower() in MANIFEST_SUFFIXES:
            skipped.append(f"{link}: a symlink to {os.readlink(link)}, which does not exist")
        return False
    return True


def _chain(link: Path) -> str:
    """`a.yaml -> b.yaml -> a.yaml`: the link, then each target as written, until one
    repeats."""
    shown, at = [str(link)], link
    seen = {os.path.abspath(link)}
    while at.is_symlink() and len(shown) < 40:
        target = os.readlink(at)
        shown.append(target)
        at = Path(os.path.join(os.path.dirname(at), target))
        if os.path.abspath(at) in seen:
            break
        seen.add(os.path.abspath(at))
    return " -> ".join(shown)


def _loop(link: Path, how: str) -> ManifestError:
    return ManifestError(str(link), "symlink", f"{how}; remove it or point it at manifests")


def read_documents(
    path: Path, on_read: Callable[[int, int], None] | None = None
) -> Iterator[Document]:
    """The objects of one file: documents of a YAML stream, items of `kind: List`.

    `on_read(characters, documents)` is told, as documents are parsed, how far into the
    file's text the parser got and how many documents it finished (every few thousand
    objects parsed, within a document too).
    """
    for index, doc in enumerate(_parse(path, on_read), start=1):
        if doc is None:
            continue
        if not isinstance(doc, Mapping):
            raise ManifestError(
                str(path),
                f"document {index}",
                f"is a {_type_name(doc)}, not a Kubernetes object "
                "(a mapping with apiVersion, kind and metadata)",
            )
        kind = doc.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and "items" in doc:
            yield from _list_items(doc, kind, f"{path} (document {index}")
        else:
            yield Document(f"{path} (document {index})", doc)


def _list_items(doc: Mapping[str, Any], kind: str, opened: str) -> Iterator[Document]:
    """`kind: List` (kubectl) or `NodeList`/`PodList` (the API, whose items carry no kind).

    `opened` is the location of the list without its closing parenthesis.
    """
    items = doc.get("items")
    if not isinstance(items, list):
        raise ManifestError(f"{opened})", "items", f"must be a list (got {_type_name(items)})")
    item_kind = kind[: -len("List")]
    for position, item in enumerate(items):
        where = f"{opened}, items[{position}])"
        if not isinstance(item, Mapping):
            raise ManifestError(where, "(item)", f"is a {_type_name(item)}, not an object")
        if item_kind and not item.get("kind"):
            item = {**item, "kind": item_kind}
        yield Document(where, item)


def _parse(path: Path, on_read: Callable[[int, int], None] | None) -> Iterator[Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(str(path), f"byte {exc.start}", "is not UTF-8 text") from exc
    if path.suffix.lower() == ".json":
        try:
            yield json.loads(text)
        except json.JSONDecodeError as exc:
            raise ManifestError(
                str(path), f"line {exc.lineno}, column {exc.colno}", f"not valid JSON: {exc.msg}"
            ) from exc
        return
    parsed = 0
    try:
        for document in yaml_documents(text, on_read):  # a safe loader: no arbitrary objects
            parsed += 1
            yield document
    except yaml.YAMLError as exc:
        at = f"document {parsed + 1}"
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            at += f", line {mark.line + 1}, column {mark.column + 1}"
        problem = getattr(exc, "problem", None) or str(exc)
        raise ManifestError(str(path), at, f"not valid YAML: {problem}") from exc


def _type_name(value: object) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(value), type(value).__name__
    )
