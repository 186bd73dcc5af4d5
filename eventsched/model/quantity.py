"""Kubernetes resource quantities as integers.

The scheduler compares quantities millions of times, so they are parsed once
into integers: CPU in millicores, everything else in base units (bytes,
counts). This mirrors what kube-scheduler's `framework.Resource` keeps.
"""

from __future__ import annotations

import functools
import math
import re
from decimal import ROUND_CEILING, Decimal, InvalidOperation

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}
_QUANTITY = re.compile(
    r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$"
)


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


def _parse(value: str | int | float) -> Decimal:
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity")
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise QuantityError(f"{value!r} is not a quantity")  # YAML's .inf, .nan
        return Decimal(str(value))
    text = str(value).strip()
    match = _QUANTITY.match(text)
    if not match:
        raise QuantityError(
            f"{value!r} is not a Kubernetes quantity (examples: 500m, 2, 1.5Gi, 128Mi)"
        )
    number, suffix = match.group(1), match.group(2) or ""
    try:
        amount = Decimal(number)
    except InvalidOperation as exc:
        raise QuantityError(f"{value!r} is not a Kubernetes quantity") from exc
    if suffix in _BINARY:
        return amount * _BINARY[suffix]
    return amount * _DECIMAL[suffix]


def parse_quantity(value: str | int | float) -> int:
    """Parse to base units, rounding up as the API server does for fractions."""
    if isinstance(value, str):
        return _base_units(value)
    return int(_parse(value).to_integral_value(rounding=ROUND_CEILING))


def parse_milli(value: str | int | float) -> int:
    """Parse to thousandths (CPU millicores), rounding up."""
    if isinstance(value, str):
        return _thousandths(value)
    return int((_parse(value) * 1000).to_integral_value(rounding=ROUND_CEILING))


# Parsed strings are kept: a cluster's pods and nodes repeat a few quantities ("100m",
# "128Mi") thousands of times, and every pod read from the API parses its requests. A
# string that is no quantity raises each time (lru_cache keeps no exception).


@functools.lru_cache(maxsize=4096)
def _base_units(text: str) -> int:
    return int(_parse(text).to_integral_value(rounding=ROUND_CEILING))


@functools.lru_cache(maxsize=4096)
def _thousandths(text: str) -> int:
    return int((_parse(text) * 1000).to_integral_value(rounding=ROUND_CEILING))


def format_cpu_of(used: int, total: int) -> str:
    """`used/total` millicores in one unit: whole cores when both are, else millicores."""
    if used % 1000 == 0 and total % 1000 == 0:
        return f"{used // 1000}/{total // 1000}"
    return f"{used}m/{total}m"


def format_bytes_of(used: int, total: int) -> str:
    """`used/total` bytes in the largest binary unit that divides both."""
    for suffix, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if (used or total) and used % size == 0 and total % size == 0:
            return f"{used // size}{suffix}/{total // size}{suffix}"
    return f"{used}/{total}"
