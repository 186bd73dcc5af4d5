"""The breadth suite's chunk files 6 and 7 (generated_replay.py says how they are replayed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.differential.generated_replay import replay_slice, slices


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("generated-c")


@pytest.mark.parametrize(("chunk", "first"), slices(range(6, 8)))
def test_generated_slice(chunk: int, first: int, workdir: Path) -> None:
    replay_slice(chunk, first, workdir)
