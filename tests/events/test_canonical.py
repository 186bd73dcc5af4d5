"""Canonical JSON: what makes hashes and digests agree across SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from eventsched.events import canonical_json, normalize


def test_integral_floats_become_the_integers_jsonb_gives_back() -> None:
    assert normalize({"a": 1.0, "b": 1e20, "c": 1.5e300, "d": -0.0}) == {
        "a": 1,
        "b": 10**20,
        "c": 15 * 10**299,
        "d": 0,
    }
    assert normalize([0.1, 2.5, True, None, "x", (1, 2)]) == [0.1, 2.5, True, None, "x", [1, 2]]
    assert isinstance(normalize(True), bool)


def test_canonical_json_sorts_and_compacts() -> None:
    assert (
        canonical_json({"b": 1, "a": [1.0, {"d": None, "c": "é"}]})
        == '{"a":[1,{"c":"\\u00e9","d":null}],"b":1}'
    )


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), {1: 2}, {"a": {1, 2}}, b"bytes"])
def test_values_json_cannot_carry_are_refused(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        canonical_json(bad)


def test_subclasses_become_plain_json_values() -> None:
    from enum import Enum, IntEnum
    from types import MappingProxyType

    class Color(str, Enum):  # noqa: UP042 -- the mixin whose str() is "Color.RED"
        RED = "red"

    class Level(IntEnum):
        HIGH = 3

    value = normalize({Color.RED: [Color.RED, Level.HIGH], "m": MappingProxyType({"k": 2.0})})
    assert value == {"red": ["red", 3], "m": {"k": 2}}
    assert [type(v) for v in value["red"]] == [str, int]
    assert [type(k) for k in value] == [str, str]
