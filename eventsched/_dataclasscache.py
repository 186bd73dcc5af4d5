"""Dataclass methods compiled once, not at every start.

`dataclasses` writes the methods it generates for a class (`__init__`,
`__repr__`, `__eq__`, a frozen class's `__setattr__`, ...) as Python source and
compiles that text when the class is created. `eventsched run` creates about 190
dataclasses before its first decision: close to 1,000 methods, whose compiling
cost about 0.1 s of CPU at every start, a fifth of what the start spends
importing.

`install` gives the `dataclasses` module an `exec` of its own (a global of that
module, which shadows the builtin there and nowhere else). It compiles each distinct
text once and keeps the code object, keyed by a digest of the text (and the
optimization level), in one file beside the package's bytecode: read when installed,
written back at exit when the process compiled texts the file did not hold. The text
is compiled with the flags `dataclasses` itself compiles it with, so a kept code
object is the one compiling the text again would give; the file's header names the
interpreter's bytecode magic number, and a file of another interpreter is ignored.
Anything but source text is passed to the builtin `exec` unchanged.

The command line installs it before it imports a command's module (`cli/main.py`).
Where the file cannot be read, nothing is lost but the time: classes are compiled
as they always were. It is not written when bytecode is not
(`PYTHONDONTWRITEBYTECODE`), as in the container image, which writes it once at
build time instead (`python -m eventsched._dataclasscache` imports every module
and saves what their classes compiled).
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import hashlib
import marshal
import os
import sys
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import Any

#: What the file starts with: this format's name and the interpreter's bytecode magic.
HEADER = b"eventsched-dataclass-methods-1\n" + MAGIC_NUMBER
#: Entries kept in all: past it, the file keeps only what the last process used.
MAX_ENTRIES = 20_000


def default_path() -> Path:
    """The file beside the package's bytecode, named for this interpreter."""
    tag = sys.implementation.cache_tag or "python"
    return Path(__file__).resolve().parent / "__pycache__" / f"dataclass-methods.{tag}.bin"


class MethodCache:
    """Code objects of generated methods by the digest of their text; those the file held
    are kept marshalled until a class asks for one."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.kept: dict[bytes, bytes] = _read(path)
        self.used: dict[bytes, bytes] = {}
        self.compiled = 0

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:
        """The builtin `exec`, with source text compiled once across processes."""
        if isinstance(source, str):
            source = self.code(source)
        builtins.exec(source, globals, locals)

    def code(self, text: str) -> CodeType:
        # The optimization level is compiled in (`-O` drops asserts): it is part of the key.
        key = hashlib.blake2b(f"{sys.flags.optimize}\n{text}".encode(), digest_size=16).digest()
        kept = self.kept.get(key)
        code = _loaded(kept) if kept is not None else None
        if kept is None or code is None:
            # dont_inherit: the flags of `dataclasses`, which has no __future__ imports,
            # are the ones its own exec(text) compiles with; this module's are not.
            code = compile(text, "<string>", "exec", dont_inherit=True)
            kept = marshal.dumps(code)
            self.compiled += 1
        self.used[key] = kept
        return code

    def save(self, force: bool = False) -> bool:
        """Write what was compiled here to the file (with `force`, even when bytecode is
        not written); whether it was written."""
        if not self.compiled or (sys.dont_write_bytecode and not force):
            return False
        entries = {**self.kept, **self.used}
        if len(entries) > MAX_ENTRIES:
            entries = dict(self.used)
        partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial.write_bytes(HEADER + marshal.dumps(entries))
            os.replace(partial, self.path)
        except (OSError, ValueError):
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)  # a disk that filled up keeps no half file
            return False
        self.kept, self.compiled = entries, 0
        return True


def _loaded(kept: bytes) -> CodeType | None:
    """The code object an entry holds; None when the entry is damaged (it is compiled again)."""
    try:
        code = marshal.loads(kept)
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None


def _read(path: Path) -> dict[bytes, bytes]:
    """The file's marshalled code objects by digest (none when it is missing, of another
    interpreter or damaged)."""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    if not data.startswith(HEADER):
        return {}
    try:
        entries = marshal.loads(data[len(HEADER) :])
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(entries, dict):
        return {}
    return {k: v for k, v in entries.items() if isinstance(k, bytes) and isinstance(v, bytes)}


_installed: MethodCache | None = None


def install(path: Path | None = None) -> MethodCache:
    """Compile dataclass methods through the cache at `path` (the default file when not
    given), saved at exit; the cache installed already, if one is."""
    global _installed
    if _installed is None:
        _installed = MethodCache(path or default_path())
        setattr(dataclasses, "exec", _installed.exec)  # noqa: B010 - a module global, by name
        atexit.register(_installed.save)
    return _installed


def warm() -> int:
    """Import every module of eventsched and save what their classes compiled (forced);
    the number of methods kept."""
    import importlib
    import pkgutil

    import eventsched

    cache = install()
    for module in pkgutil.walk_packages(eventsched.__path__, "eventsched.", onerror=_skip):
        try:
            importlib.import_module(module.name)
        except Exception:  # a module that needs what is not installed here
            continue
    cache.save(force=True)
    return len(cache.kept)


def _skip(name: str) -> None:
    """A package that cannot be imported here: its modules are not walked."""


if __name__ == "__main__":
    # The module as imported, not this copy run as __main__: the one the command line
    # installs (cli/main.py) when the walk imports a command's module.
    from eventsched._dataclasscache import warm as warm_imported

    print(f"dataclass methods kept: {warm_imported()}")
