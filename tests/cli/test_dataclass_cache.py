"""The methods `dataclasses` generates are compiled once and kept across processes
(eventsched/_dataclasscache.py), and a class built from a kept method behaves as one
compiled afresh.

Each case runs a fresh interpreter: the cache is installed once per process, and what
it saves at exit is what the next process finds.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from importlib.util import MAGIC_NUMBER
from pathlib import Path

from eventsched._dataclasscache import HEADER

#: Classes of every kind eventsched declares, and what each generated method does.
CLASSES = """
import dataclasses, inspect, json
from dataclasses import InitVar, dataclass, field

@dataclass(frozen=True, slots=True, order=True)
class Frozen:
    name: str
    weight: int = 1
    tags: tuple[str, ...] = ()

@dataclass(slots=True)
class Mutable:
    items: list[int] = field(default_factory=list)
    hidden: int = field(default=0, repr=False, compare=False)

@dataclass(kw_only=True)
class KeywordOnly:
    a: int
    seed: InitVar[int] = 3
    b: int = field(init=False, default=0)

    def __post_init__(self, seed: int) -> None:
        self.b = self.a * seed

def behaviour() -> dict:
    f = Frozen("x", 2, ("t",))
    m = Mutable()
    m.items.append(1)
    try:
        f.name = "y"
        frozen = "assigned"
    except dataclasses.FrozenInstanceError as exc:
        frozen = type(exc).__name__
    return {
        "repr": [repr(f), repr(m), repr(KeywordOnly(a=2))],
        "eq": [f == Frozen("x", 2, ("t",)), Mutable([1], 5) == m, f < Frozen("y")],
        "hash": hash(f) == hash(Frozen("x", 2, ("t",))),
        "frozen": frozen,
        "defaults": [Mutable().items is not Mutable().items, KeywordOnly(a=2).b],
        "signatures": [str(inspect.signature(c)) for c in (Frozen, Mutable, KeywordOnly)],
        "annotations": [
            sorted((k, str(v)) for k, v in c.__init__.__annotations__.items())
            for c in (Frozen, Mutable, KeywordOnly)
        ],
    }
"""


def run(cache: Path | None, *, write_bytecode: bool = True) -> dict:
    """What the classes do in a fresh interpreter, with the cache at `cache` installed
    (none: plain `dataclasses`), and how many methods it compiled."""
    install = (
        f"from eventsched._dataclasscache import install\ncache = install(Path({str(cache)!r}))\n"
        if cache is not None
        else "cache = None\n"
    )
    code = (
        "from pathlib import Path\n"
        + install
        + CLASSES
        + "print(json.dumps({**behaviour(), 'compiled': cache and cache.compiled}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if not write_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert not done.stderr, done.stderr  # an error at exit (the save) would show here only
    result: dict = json.loads(done.stdout)
    return result


def test_a_second_process_compiles_nothing_and_its_classes_behave_as_compiled_afresh(
    tmp_path: Path,
) -> None:
    path = tmp_path / "methods.bin"
    plain = run(None)
    first = run(path)
    assert first["compiled"] > 10  # __init__, __repr__, __eq__, ... of three classes
    assert path.exists()  # saved at exit
    second = run(path)
    assert second["compiled"] == 0
    for result in (first, second):
        assert {k: v for k, v in result.items() if k != "compiled"} == {
            k: v for k, v in plain.items() if k != "compiled"
        }
    # Annotations are objects, as dataclasses' own compile leaves them, not the strings
    # the cache module's `from __future__ import annotations` would make them.
    assert ["name", "<class 'str'>"] in [list(pair) for pair in plain["annotations"][0]]


def test_a_damaged_or_foreign_file_is_compiled_past_and_replaced(tmp_path: Path) -> None:
    path = tmp_path / "methods.bin"
    plain = run(None)
    foreign = HEADER[: -len(MAGIC_NUMBER)] + b"\x00\x00\r\n"  # another bytecode magic
    for damaged in (
        b"",
        b"not a cache",
        HEADER + b"\x00 truncated",
        HEADER + marshal.dumps([1, 2]),  # not the table of methods
        HEADER + marshal.dumps({b"key": 3}),  # an entry that is not marshalled code
    ):
        path.write_bytes(damaged)
        result = run(path)
        assert result["compiled"] > 10
        assert result["repr"] == plain["repr"]
        assert run(path)["compiled"] == 0  # the file was replaced by a good one
    good = path.read_bytes()
    # Every entry of a good file damaged: each method is compiled again.
    entries = marshal.loads(good[len(HEADER) :])
    path.write_bytes(HEADER + marshal.dumps({key: b"\xffjunk" for key in entries}))
    result = run(path)
    assert result["compiled"] > 10
    assert result["repr"] == plain["repr"]
    # A good file under another interpreter's magic: its code objects are not loaded.
    path.write_bytes(foreign + good[len(HEADER) :])
    assert run(path)["compiled"] > 10


def test_nothing_is_written_where_bytecode_is_not(tmp_path: Path) -> None:
    path = tmp_path / "methods.bin"
    assert run(path, write_bytecode=False)["compiled"] > 10
    assert not path.exists()
    assert not list(tmp_path.iterdir())  # no partial file either


def test_a_place_that_cannot_be_written_costs_only_the_time(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    result = run(blocker / "methods.bin")  # saving at exit failed, quietly
    assert result["compiled"] > 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-a-directory"]
