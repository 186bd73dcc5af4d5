"""Half of the docs' sample outputs (samples.py says which and how)."""

from __future__ import annotations

import pytest

from tests.docs.samples import check, logs


@pytest.mark.parametrize("names", logs(1, 2))
def test_sample_outputs_match_what_the_commands_print(names: tuple[str, ...]) -> None:
    check(names)
