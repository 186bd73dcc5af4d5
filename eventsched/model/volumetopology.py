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

from eventsched.model.nodeselector import NodeSelectorRequirement
from eventsched.model.nodetable import BoolArray, NodeTable
from eventsched.model.selectors import DOES_NOT_EXIST, EXISTS, IN, LabelSelector
from eventsched.model.volumes import TopologyRequirement

HOSTNAME_LABEL = "kubernetes.io/hostname"


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """A `matchFields` entry: the nameless node's every field is ""."""

    operator: str
    value: str

    def matches(self) -> bool:
        return (self.value == "") == (self.operator == "In")


@dataclass(frozen=True, slots=True)
class Term:
    expressions: tuple[NodeSelectorRequirement, ...]
    fields: tuple[FieldRequirement, ...]

    def mask(self, table: NodeTable) -> BoolArray:
        if not self.expressions and not self.fields:
            return np.zeros(len(table), dtype=bool)  # an empty term matches no node
        if not all(f.matches() for f in self.fields):
            return np.zeros(len(table), dtype=bool)
        out = np.ones(len(table), dtype=bool)
        rows = np.arange(len(table))
        for requirement in self.expressions:
            out &= requirement.matches(table, rows)
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


def _requirement(expr: Any) -> NodeSelectorRequirement | None:
    if not isinstance(expr, Mapping) or not isinstance(expr.get("values") or [], list):
        return None
    if NodeSelectorRequirement.problem(expr) is not None:
        return None
    return NodeSelectorRequirement.parse(expr)


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


def selector_mask(selector: LabelSelector, table: NodeTable) -> BoolArray:
    """Where the label selector matches the node's labels, over every row."""
    if selector.nothing:
        return np.zeros(len(table), dtype=bool)
    out = np.ones(len(table), dtype=bool)
    for requirement in selector.requirements:
        values = table.label_values(requirement.key)
        present = np.array([v is not None for v in values], dtype=bool)
        if requirement.operator == EXISTS:
            out &= present
        elif requirement.operator == DOES_NOT_EXIST:
            out &= ~present
        else:
            inside = np.isin(values, list(requirement.values)) & present
            out &= inside if requirement.operator == IN else ~inside
    return out
