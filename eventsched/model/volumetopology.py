"""Where a volume can be used: PV node affinity and StorageClass allowedTopologies, over the NodeTable.

- `NodeSelector`: a PersistentVolume's `spec.nodeAffinity.required`, matched
  as `volume.CheckNodeAffinity` matches it (`MatchNodeSelectorTerms` against a
  node that has the labels but no name, so a `matchFields` term compares
  against ""), over every row of the NodeTable at once.
- `topology_mask`: `MatchTopologySelectorTerms` (allowedTopologies).
- `zone_values`: `LabelZonesToSet` (`us-east-1a__us-east-1b`).
- `local_node_names`: `GetLocalPersistentVolumeNodeNames`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eventsched.model.nodetable import BoolArray, NodeTable
from eventsched.model.volumes import TopologyRequirement

HOSTNAME_LABEL = "kubernetes.io/hostname"
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...]

    def mask(self, table: NodeTable) -> BoolArray:
        column = table.label_values(self.key)
        if self.operator == "In":
            return np.isin(column, self.values)
        if self.operator == "NotIn":
            return ~np.isin(column, self.values)
        present = np.fromiter((v is not None for v in column), dtype=bool, count=len(column))
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return ~present
        bound = int(self.values[0])
        parsed = [_as_int(v) for v in column]
        if self.operator == "Gt":
            return np.fromiter((v is not None and v > bound for v in parsed), bool, len(parsed))
        return np.fromiter((v is not None and v < bound for v in parsed), bool, len(parsed))


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """A `matchFields` entry: the nameless node's every field is ""."""

    operator: str
    value: str

    def matches(self) -> bool:
        return (self.value == "") == (self.operator == "In")


@dataclass(frozen=True, slots=True)
class Term:
    expressions: tuple[Requirement, ...]
    fields: tuple[FieldRequirement, ...]

    def mask(self, table: NodeTable) -> BoolArray:
        if not self.expressions and not self.fields:
            return np.zeros(len(table), dtype=bool)  # an empty term matches no node
        if not all(f.matches() for f in self.fields):
            return np.zeros(len(table), dtype=bool)
        out = np.ones(len(table), dtype=bool)
        for requirement in self.expressions:
            out &= requirement.mask(table)
        return out


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """Required node selector terms, ORed; a term that does not parse matches no node."""

    terms: tuple[Term, ...]

    @classmethod
    def compile(cls, raw: Sequence[Mapping[str, Any]]) -> NodeSelector:
        return cls(tuple(t for t in (_term(r) for r in raw) if t is not None))

    def mask(self, table: NodeTable) -> BoolArray:
        out = np.zeros(len(table), dtype=bool)
        for term in self.terms:
            out |= term.mask(table)
        return out


def _as_int(value: object) -> int | None:
    try:
        return int(str(value)) if value is not None else None
    except ValueError:
        return None


def _term(raw: Mapping[str, Any]) -> Term | None:
    """A term as `nodeaffinity.newNodeSelectorTerm` parses it; None when it has an error."""
    expressions = []
    for expr in raw.get("matchExpressions") or []:
        requirement = _requirement(expr)
        if requirement is None:
            return None
        expressions.append(requirement)
    fields = []
    for expr in raw.get("matchFields") or []:
        if not isinstance(expr, Mapping):
            return None
        values = expr.get("values") or []
        if expr.get("operator") not in ("In", "NotIn") or len(values) != 1:
            return None
        fields.append(FieldRequirement(str(expr["operator"]), str(values[0])))
    return Term(tuple(expressions), tuple(fields))


def _requirement(expr: Any) -> Requirement | None:
    if not isinstance(expr, Mapping) or expr.get("operator") not in _OPERATORS:
        return None
    operator = str(expr["operator"])
    values = expr.get("values") or []
    if not isinstance(values, list):
        return None
    if operator in ("In", "NotIn") and not values:
        return None
    if operator in ("Exists", "DoesNotExist") and values:
        return None
    if operator in ("Gt", "Lt") and (len(values) != 1 or _as_int(values[0]) is None):
        return None
    return Requirement(str(expr.get("key") or ""), operator, tuple(str(v) for v in values))


def topology_mask(terms: Sequence[Sequence[TopologyRequirement]], table: NodeTable) -> BoolArray:
    """`MatchTopologySelectorTerms`: no term allows every node; an empty term allows none."""
    if not terms:
        return np.ones(len(table), dtype=bool)
    out = np.zeros(len(table), dtype=bool)
    for term in terms:
        if not term or any(not r.values for r in term):
            continue  # an empty term, or one that is no valid selector, allows no node
        matched = np.ones(len(table), dtype=bool)
        for requirement in term:
            matched &= np.isin(table.label_values(requirement.key), requirement.values)
        out |= matched
    return out


def zone_values(label: str) -> frozenset[str] | None:
    """`LabelZonesToSet`: the `__`-separated zones, trimmed; None when one is empty."""
    zones = [zone.strip() for zone in label.split("__")]
    if any(not zone for zone in zones):
        return None
    return frozenset(zones)


def local_node_names(terms: Sequence[Mapping[str, Any]] | None) -> frozenset[str]:
    """`GetLocalPersistentVolumeNodeNames`: per term, the values of its
    `kubernetes.io/hostname In` expressions (intersected), unioned over the terms."""
    result: set[str] = set()
    for term in terms or ():
        nodes: set[str] | None = None
        for expr in term.get("matchExpressions") or []:
            if not isinstance(expr, Mapping):
                continue
            if expr.get("key") == HOSTNAME_LABEL and expr.get("operator") == "In":
                values = {str(v) for v in expr.get("values") or []}
                nodes = values if nodes is None else nodes & values
        result |= nodes or set()
    return frozenset(result)
