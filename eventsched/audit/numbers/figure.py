"""`Figure`: one line of numbers behind a reason, and how amounts are written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eventsched.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY

_BYTES = (MEMORY, EPHEMERAL_STORAGE)


@dataclass(frozen=True, slots=True)
class Figure:
    """The numbers behind one reason: which plugin, about which node, as text and values."""

    plugin: str
    text: str
    node: str = ""
    values: dict[str, Any] = field(default_factory=dict)


def amount(resource: str, value: int) -> str:
    """A quantity as a person reads it: cores for cpu (millicores kept), binary units for
    bytes, a count for the rest (pods, extended resources)."""
    if resource == CPU:
        return _trimmed(value / 1000, 3)
    if resource in _BYTES or resource.startswith("hugepages-"):
        for suffix, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if abs(value) >= size:
                return _trimmed(value / size, 2) + suffix
        return str(value)
    return str(value)


def _trimmed(number: float, places: int) -> str:
    text = f"{number:.{places}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text
