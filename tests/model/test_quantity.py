"""Quantities as integers: the API server's units and rounding, and the refusals."""

from __future__ import annotations

import pytest

from eventsched.model.quantity import QuantityError, parse_milli, parse_quantity


@pytest.mark.parametrize(
    ("text", "base", "milli"),
    [
        ("100m", 1, 100),
        ("1.5", 2, 1500),
        ("128Mi", 128 * 2**20, 128 * 2**20 * 1000),
        ("1k", 1000, 1_000_000),
        ("1e3", 1000, 1_000_000),
        ("2", 2, 2000),
        ("0.0001", 1, 1),  # rounded up, as the API server rounds fractions
    ],
)
def test_strings_parse_to_base_units_and_thousandths(text: str, base: int, milli: int) -> None:
    # Twice: the second answer comes from the cache of parsed strings.
    for _ in range(2):
        assert parse_quantity(text) == base
        assert parse_milli(text) == milli


def test_numbers_parse_as_their_decimal_text() -> None:
    assert parse_quantity(3) == 3 and parse_milli(0.25) == 250


@pytest.mark.parametrize("bad", ["abc", "1Xi", "", True, [1], {"cpu": 1}])
def test_what_is_no_quantity_is_refused_every_time(bad: object) -> None:
    for _ in range(2):  # a refusal is not kept: the same bad string is refused again
        with pytest.raises(QuantityError, match="is not a"):
            parse_quantity(bad)  # type: ignore[arg-type]
        with pytest.raises(QuantityError, match="is not a"):
            parse_milli(bad)  # type: ignore[arg-type]
