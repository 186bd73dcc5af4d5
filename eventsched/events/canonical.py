"""One JSON spelling per value, whatever database the value went through.

Hashes (the batch chain) and digests (skipping identical observations)
are computed once from the Python value being appended and again from the
value read back. PostgreSQL's JSONB does not give back what it was given:
it stores numbers as `numeric`, so `1.0` may come back as `1` and `1e20`
as `100000000000000000000`. Hashing `json.dumps` of the raw value would then
break the chain on PostgreSQL but not on SQLite. `normalize` maps every
value to the form that survives both databases, so the same history
hashes the same on either (and a log copied from one to the other still
verifies).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import orjson

from eventsched.model.valueclass import value_class

_SCALARS = (str, int, bool, type(None))


def normalize(value: Any) -> Any:
    """The JSON value as any of our databases will give it back.

    Integral floats become ints, spelled from their shortest decimal form
    (what JSONB's `numeric` keeps), not from their binary value. Tuples
    become lists. NaN, infinities and non-string keys are refused, because
    JSON cannot carry them faithfully.

    This runs for every appended event, before the append lock: exact
    built-in types take a fast path, anything else the general one.
    """
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        out: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                key = _check_key(key)
            out[key] = item if type(item) in _SCALARS else normalize(item)
        return out
    if kind is list or kind is tuple:
        return [item if type(item) in _SCALARS else normalize(item) for item in value]
    return _normalize_other(value)


def _normalize_other(value: Any) -> Any:
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)  # IntEnum and friends: JSON keeps the number
    if isinstance(value, str):
        return str.__str__(value)  # the characters, not an Enum's "Cls.MEMBER"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} cannot be stored in JSON")
        if value.is_integer():
            return int(Decimal(repr(value)))
        return float(value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out[_check_key(key)] = normalize(item)
        return out
    if isinstance(value, (list, tuple)):
        return [normalize(item) for item in value]
    raise TypeError(f"{type(value).__name__} is not JSON data: {value!r}")


def _check_key(key: Any) -> str:
    if not isinstance(key, str):
        raise TypeError(f"JSON object keys must be strings, not {key!r}")
    return str.__str__(key)


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, normalized numbers: equal values give equal strings."""
    return dumps_normalized(normalize(value))


#: Digits as `0`, so that a number's shape can be looked for with `in`.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")

#: The shapes (digits as `0`) of the numbers orjson spells otherwise than `json.dumps`: a
#: negative exponent (json pads it: `1e-07`) and a float under 1e-4 (json `1e-05`,
#: orjson `0.00001`).
_SHAPES_SPELLED_OTHERWISE = (b"0e-", b"0.0000")
#: What precedes a number in compact JSON (or the text's start).
_BEFORE_A_NUMBER = b":,["
_NUMBER_CHARACTERS = b"0123456789."


def _spelled_as_json_does(raw: bytes) -> bool:
    """Whether orjson's `raw` is what `json.dumps` gives (the canonical spelling, which
    logs already hashed use). They differ on characters outside ASCII and DEL (json
    escapes them) and on the numbers above. Their shape is looked for first; where it
    is found, whether it is a number's or only a string's (a UID's `119e-4bdf`) is told
    by what precedes it (a string holding `:1e-5` takes the slow path, which gives the
    same text)."""
    if not raw.isascii() or b"\x7f" in raw:
        return False
    shape = raw.translate(_DIGITS_AS_ZERO)
    for pattern in _SHAPES_SPELLED_OTHERWISE:
        if pattern in shape and _in_number_position(raw, shape, pattern):
            return False
    return True


def _in_number_position(raw: bytes, shape: bytes, pattern: bytes) -> bool:
    """Whether `pattern` occurs in `shape` inside a number of `raw`."""
    at = shape.find(pattern)
    while at != -1:
        start = at
        while start > 0 and raw[start - 1] in _NUMBER_CHARACTERS:
            start -= 1
        if start > 0 and raw[start - 1] == ord("-"):
            start -= 1
        if start == 0 or raw[start - 1] in _BEFORE_A_NUMBER:
            return True
        at = shape.find(pattern, at + 1)
    return False


def dumps_normalized(value: Any) -> str:
    """`canonical_json` of a value that `normalize` already returned: `json.dumps` with
    sorted keys and no spaces, written by orjson when its spelling is the same (about
    four times faster; tests/events/test_canonical.py checks the two agree)."""
    try:
        raw = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # an int beyond 64 bits
        return _json_dumps(value)
    if _spelled_as_json_does(raw):
        return raw.decode("ascii")
    return _json_dumps(value)


def _json_dumps(value: Any) -> str:
    # normalize made fresh containers from the value, so there is no cycle to look for.
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), allow_nan=False, check_circular=False
    )


@value_class
class Encoded:
    """A value normalized and spelled once: what is stored, hashed and digested.

    An observation is encoded before the scheduler knows whether it changed
    (the digest says), and the same text is what the store writes and the
    projections digest: the value is never walked or dumped a second time.
    """

    data: Any
    text: str

    @property
    def digest(self) -> str:
        return text_digest(self.text)


def encode(value: Any) -> Encoded:
    """Normalize and dump `value` (TypeError or ValueError if it is not JSON data)."""
    data = normalize(value)
    return Encoded(data, dumps_normalized(data))


#: orjson refuses these instead of writing them its own way (normalize refuses them too).
_PLAIN_ONLY = (
    orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
)


def plain_digest(value: Any) -> str | None:
    """The digest of orjson's text of the raw value (sorted keys, not normalized); None
    when orjson refuses the value.

    For comparing with a digest the log holds, about 3x cheaper than `encode`. Equal
    digests mean equal texts, and a text reads back as one JSON value, so a match says
    the value is the one the log digested, however it was spelled. A value orjson spells
    otherwise than the canonical text (a float normalize would make an int, `2.0`; text
    outside ASCII, which json escapes; a small exponent) gives a digest no log holds for
    it: no match, and the caller encodes it as it would anyway. Not checking the
    spelling first is what keeps an unchanged record's check this cheap.
    """
    try:
        raw = orjson.dumps(value, option=_PLAIN_ONLY)
    except (TypeError, orjson.JSONEncodeError):
        return None
    return hashlib.sha1(raw).hexdigest()


def digest(data: Any) -> str:
    """SHA-1 of the canonical JSON: cheap identity of an observation, not a security hash."""
    return text_digest(canonical_json(data))


def digest_normalized(data: Any) -> str:
    """`digest` of data `normalize` already returned (as every stored event's data is)."""
    return text_digest(dumps_normalized(data))


def text_digest(text: str) -> str:
    """`digest` of a value from its canonical JSON text (one definition for every path)."""
    return hashlib.sha1(text.encode()).hexdigest()
