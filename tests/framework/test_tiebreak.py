"""The tie-break draw is numpy's: logs written when numpy drew the tie-break replay the same.

`tiebreak.draw(seed, n)` must equal `numpy.random.default_rng(seed).integers(n)` for
every seed and count eventsched can meet; numpy itself is the reference here.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eventsched.framework.tiebreak import COUNT_LIMIT, SEED_LIMIT, draw


def numpy_draw(seed: int, count: int) -> int:
    return int(np.random.default_rng(seed).integers(count))


@pytest.mark.parametrize(
    ("seed", "count"),
    [
        (0, 2),
        (1, 2),
        (2**32 - 1, 3),  # one entropy word
        (2**32, 5),  # two
        (2**63 - 1, 7),  # the largest seed eventsched writes
        (2**96 + 12345, 500),  # four
        (SEED_LIMIT - 1, 11),
        (5, COUNT_LIMIT - 1),  # the largest count drawn by Lemire's method
        (7, 2**31 + 3),  # a count that rejects often (threshold near 2**31)
        (9, COUNT_LIMIT),  # a whole 32-bit word
        (42, 1),  # nothing to draw
    ],
)
def test_edge_cases_match_numpy(seed: int, count: int) -> None:
    assert draw(seed, count) == numpy_draw(seed, count)


@settings(max_examples=3000, deadline=None)
@given(
    seed=st.one_of(
        st.integers(0, 2**63 - 1), st.integers(0, SEED_LIMIT - 1), st.integers(0, 2**40)
    ),
    count=st.one_of(st.integers(1, 64), st.integers(1, 5000), st.integers(1, COUNT_LIMIT)),
)
def test_any_seed_and_count_match_numpy(seed: int, count: int) -> None:
    assert draw(seed, count) == numpy_draw(seed, count)


def test_rejection_loop_matches_numpy() -> None:
    """Counts just above 2**31 reject about half the first words: the spare half of a
    64-bit output, then further outputs, are drawn as numpy draws them."""
    count = 2**31 + 1
    seeds = range(300)
    assert [draw(s, count) for s in seeds] == [numpy_draw(s, count) for s in seeds]


@pytest.mark.parametrize(("seed", "count"), [(SEED_LIMIT, 3), (2**200 + 7, 9), (3, 2**40)])
def test_outside_the_plain_ranges_numpy_draws(seed: int, count: int) -> None:
    assert draw(seed, count) == numpy_draw(seed, count)


def test_a_negative_seed_is_refused_as_numpy_refuses_it() -> None:
    with pytest.raises(ValueError):
        draw(-1, 3)


def test_drawing_imports_no_numpy_random() -> None:
    """The point of the module: the scheduling process never loads numpy.random for it."""
    import subprocess

    code = (
        "import sys; from eventsched.framework.tiebreak import draw; draw(2**62 + 5, 37); "
        "print('numpy.random' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
