"""One `NodeSelectorRequirement` (a node selector term's `matchExpressions` entry) over the NodeTable.

Read by NodeAffinity (a pod's node affinity) and by the volume plugins (a
PersistentVolume's node affinity): In, NotIn, Exists, DoesNotExist, Gt, Lt
against each node's label, for many rows at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eventsched.model.nodetable import BoolArray, Indexes, NodeTable

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


@dataclass(frozen=True, slots=True)
class NodeSelectorRequirement:
    key: str
    operator: str
    values: tuple[str, ...]

    def matches(self, table: NodeTable, rows: Indexes) -> BoolArray:
        column = table.label_values(self.key)[rows]
        present = np.fromiter((v is not None for v in column), dtype=bool, count=len(column))
        if self.operator == "In":
            return present & np.isin(column, self.values)
        if self.operator == "NotIn":
            return ~(present & np.isin(column, self.values))
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return ~present
        bound = int(self.values[0])
        parsed = [as_int(v) for v in column]
        known = np.fromiter((v is not None for v in parsed), dtype=bool, count=len(parsed))
        out = np.zeros(len(rows), dtype=bool)
        if known.any():
            vals = np.array([v for v in parsed if v is not None], dtype=np.int64)
            out[known] = vals > bound if self.operator == "Gt" else vals < bound
        return out

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> NodeSelectorRequirement:
        """A requirement `problem(raw)` found nothing wrong with."""
        values = tuple(str(v) for v in raw.get("values") or ())
        return cls(str(raw.get("key") or ""), str(raw.get("operator", "")), values)

    @staticmethod
    def problem(raw: Mapping[str, Any]) -> str | None:
        """What is wrong with `raw`, as `.FIELD: PROBLEM` (None: nothing)."""
        operator = str(raw.get("operator", ""))
        if operator not in OPERATORS:
            return f".operator: must be one of {', '.join(OPERATORS)} (got {operator!r})"
        values: Sequence[Any] = raw.get("values") or []
        if operator in ("Exists", "DoesNotExist") and values:
            return f".values: must be empty for {operator}"
        if operator in ("In", "NotIn") and not values:
            return f".values: must be non-empty for {operator}"
        if operator in ("Gt", "Lt") and (len(values) != 1 or as_int(values[0]) is None):
            return f".values: must be a single integer for {operator}"
        return None


def as_int(value: object) -> int | None:
    """A label value as Gt and Lt read it: an integer, or None when it is not one."""
    if value is None:
        return None
    try:
        return int(str(value))
    except ValueError:
        return None
