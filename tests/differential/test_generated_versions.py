"""The breadth suite at each newer version recorded (answers/v<V>/generated/), one case per
slice of a chunk file (generated_versions.py says how they are replayed and judged)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.differential.generated_versions import replay_slice, slices


@pytest.mark.parametrize(("version", "chunk", "first"), slices())
def test_generated_slice(version: str, chunk: int, first: int, tmp_path: Path) -> None:
    replay_slice(version, chunk, first, tmp_path)
