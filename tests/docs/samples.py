"""The docs' sample outputs are what the commands print now (docs/samples/generate.py
--check): one test case per log of generate.py, its logs shared out between two modules
(test_samples_a.py, test_samples_b.py) so that pytest-xdist's `--dist loadfile` runs them
on both workers."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
GENERATE = ROOT / "docs" / "samples" / "generate.py"


def _generate() -> ModuleType:
    """docs/samples/generate.py as a module (loaded once; its dataclasses need it in
    sys.modules)."""
    name = "docs_samples_generate"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, GENERATE)
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


def logs(share: int, shares: int) -> list[Any]:
    """Every `shares`-th log of generate.py from the `share`-th: its samples' names."""
    return [
        pytest.param(tuple(log.samples), id=next(iter(log.samples)))
        for i, log in enumerate(_generate().LOGS)
        if i % shares == share
    ]


def check(names: tuple[str, ...]) -> None:
    done = subprocess.run(
        [sys.executable, str(GENERATE), "--check", *names],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (
        f"{done.stderr}\nrun `python docs/samples/generate.py {' '.join(names)}` and look at "
        "the change"
    )
