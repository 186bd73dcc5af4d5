"""The time bounds the log's commands take (`replay --since`, `export --until`,
`db prune --before`): a time, a duration back from now, or a log position.

Its own module, so that `db` and `export` parse them without importing `replay`'s.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eventsched.audit.replay import Bound

#: The accepted forms of a time bound, as help and error messages spell them.
FORMS = (
    "RFC 3339 / ISO 8601 (2026-11-23T10:00:00Z, with an offset like +01:00, or a date "
    "2026-11-23 = midnight UTC; no offset means UTC) or a duration back from now "
    "(30s, 30m, 2h, 7d, 1h30m)"
)
_DURATION = re.compile(r"(?:\d+(?:\.\d+)?[smhd])+", re.ASCII)
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhd])", re.ASCII)
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_bound(text: str, now: datetime | None = None) -> Bound:
    """A --since/--until value: a plain integer is a log position, anything else a time.

    Durations count back from `now` (default: this moment), as `kubectl logs
    --since` does; times without an offset are UTC, like the log's own.
    """
    value = text.strip()
    if re.fullmatch(r"\d+", value, re.ASCII):
        return int(value)
    if _DURATION.fullmatch(value):
        seconds = sum(float(n) * _UNIT[unit] for n, unit in _PART.findall(value))
        try:
            return (now or datetime.now(UTC)) - timedelta(seconds=seconds)
        except OverflowError:
            raise ValueError(f"duration {text!r} reaches before year 1") from None
    try:
        # fromisoformat takes "Z" and offsets (3.11+); RFC 3339 also allows "t" and "z".
        moment = datetime.fromisoformat(value.upper())
    except ValueError:
        raise ValueError(f"invalid value {text!r}") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def bound_parser(flag: str) -> Callable[[str], Bound]:
    """An argparse type for `flag`: its errors name the flag (argparse adds it) and the forms."""

    def parse(text: str) -> Bound:
        try:
            return parse_bound(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(
                f"{err}: give a log position (a non-negative integer) or a time: {FORMS}"
            ) from None

    return parse


def time_parser(flag: str) -> Callable[[str], datetime]:
    """An argparse type for `flag`, which takes a time and not a log position."""

    def parse(text: str) -> datetime:
        try:
            value = parse_bound(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(f"{err}: give a time: {FORMS}") from None
        if isinstance(value, int):
            raise argparse.ArgumentTypeError(f"{flag} takes a time, not a position: {FORMS}")
        return value

    return parse
