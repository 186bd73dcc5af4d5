"""Canonical JSON: what makes hashes and digests agree across SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eventsched.events import canonical_json, encode, normalize, plain_digest


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


# -- the canonical form is json.dumps's, byte for byte ---------------------------

_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    # where shortest-repr encoders choose between decimal and exponent spellings
    | st.floats(min_value=-1e-3, max_value=1e-3)
    | st.floats(min_value=1e-12, max_value=1e-4)
    | st.floats(min_value=1e15, max_value=1e17)
    | st.text(alphabet=st.characters(max_codepoint=0x7F))
    | st.text(),
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(
            st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=8), children, max_size=5
        )
    ),
    max_leaves=30,
)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(_json_values)
def test_canonical_json_is_json_dumps_byte_for_byte(value: object) -> None:
    """Every existing hash chain was computed with json.dumps: a faster encoder must not change a byte."""
    normalized = normalize(value)
    assert canonical_json(value) == json.dumps(
        normalized, sort_keys=True, separators=(",", ":"), allow_nan=False
    )


@pytest.mark.parametrize(
    "value",
    [
        {"mean": 381.16, "small": 3.7638590062681084e-05, "tiny": 5e-324},
        {"del": "a\x7fb", "ctl": "\x1f\n\t"},
        {"text": "zürich", "big": 2**64},
        [0.0001, 0.00012, 1e-05, 4503599627370495.5, -1.5e-7],
        # each alone, so that one value's slow path does not hide another's
        -1.5e-7,
        {"a": 2.5e-9, "node": "node-1"},
        {"sub": 1e-320},
        {"d": "\x7f"},
        [123.00001, 7.5e-5],
        {"ok": [1, "a", None, True], "nested": {"b": {"a": -(2**63)}}},
    ],
)
def test_canonical_json_where_faster_encoders_differ_from_json_dumps(value: object) -> None:
    assert canonical_json(value) == json.dumps(
        normalize(value), sort_keys=True, separators=(",", ":"), allow_nan=False
    )


# -- plain_digest: the digest of orjson's text, matching the log's only for its value --


_without_floats = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.text(alphabet=st.characters(max_codepoint=0x7F))
    | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=30,
)
_ascii_only = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.text(alphabet=st.characters(max_codepoint=0x7E)),
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(
            st.text(alphabet=st.characters(max_codepoint=0x7E), max_size=8), children, max_size=5
        )
    ),
    max_leaves=30,
)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(_without_floats, _without_floats)
def test_a_plain_digest_matches_only_the_value_the_log_digested(
    value: object, other: object
) -> None:
    """A match says the value is the one digested (the caller logs nothing), however the
    two were spelled; a value spelled otherwise may miss (the caller encodes it)."""
    for digested in (value, other):
        if plain_digest(value) == encode(digested).digest:
            assert normalize(value) == normalize(digested)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_ascii_only)
def test_ascii_values_without_floats_take_the_fast_path(value: object) -> None:
    """What listed records hold (ASCII text, 64-bit integers): the plain digest is the
    encoded one, so an unchanged record is recognized without normalizing it."""
    assert plain_digest(value) == encode(value).digest


@pytest.mark.parametrize(
    "value, encoded_as",
    [
        ({"cpu": 2.0}, {"cpu": 2}),  # normalize makes it 2; orjson spells it 2.0
        ({"big": 10.0**20}, {"big": 10**20}),
        ((1, 2), [1, 2]),  # a tuple is a list either way
    ],
)
def test_a_value_normalize_would_change_never_matches_another_digest(
    value: object, encoded_as: object
) -> None:
    plain = plain_digest(value)
    if isinstance(value, tuple):
        assert plain == encode(encoded_as).digest
    else:
        assert plain != encode(encoded_as).digest
        assert encode(value).digest == encode(encoded_as).digest


def test_values_spelled_otherwise_miss_and_values_orjson_refuses_give_none() -> None:
    from dataclasses import dataclass
    from datetime import datetime

    @dataclass
    class Point:
        x: int

    for spelled_otherwise in ({"text": "zürich"}, {"tiny": 1e-7}):  # json: \u00fc, 1e-07
        assert plain_digest(spelled_otherwise) is not None
        assert plain_digest(spelled_otherwise) != encode(spelled_otherwise).digest
    assert plain_digest({1: "a"}) is None
    assert plain_digest({"p": Point(1)}) is None
    assert plain_digest({"t": datetime(2026, 1, 1)}) is None
    assert plain_digest({"n": 2**70}) is None
    record = {"uid": "u", "requests": {"cpu": 100}, "labels": {"app": "x"}, "images": ["a"]}
    assert plain_digest(record) == encode(record).digest


@pytest.mark.parametrize(
    "value",
    [
        {"uid": "16d5752b-119e-4bdf-96fd-ac88b65fc785"},  # `9e-4`: a UID, not a number
        {"name": "pod-0.00001", "images": ["registry/app-1e-7:v2"]},
        ["a", "7.5e-5"],
    ],
)
def test_strings_shaped_like_exponents_keep_the_fast_path(value: object) -> None:
    """Only a number can be spelled otherwise; text that contains one's shape is the same
    in either encoder, so its plain digest is given (the restart's unchanged-pod check and
    every append take this path for most UIDs)."""
    assert plain_digest(value) == encode(value).digest
