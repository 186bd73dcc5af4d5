"""A pod's node affinity (`nodeSelector` and `spec.affinity.nodeAffinity`) over the NodeTable.

NodeAffinity filters and scores by it; PodTopologySpread's node inclusion
policy counts only the nodes that match it (kube-scheduler shares
`nodeaffinity.GetRequiredNodeAffinity` between the two the same way).
A term that does not parse raises ValueError naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from eventsched.model.nodeselector import NodeSelectorRequirement as Requirement
from eventsched.model.nodetable import BoolArray, Indexes, NodeTable


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """matchFields: only `metadata.name` with In / NotIn, as upstream allows."""

    operator: str
    values: tuple[str, ...]

    def matches(self, table: NodeTable, rows: Indexes) -> BoolArray:
        names = np.array([table.names[r] for r in rows], dtype=object)
        hit = np.isin(names, self.values)
        return hit if self.operator == "In" else ~hit


@dataclass(frozen=True, slots=True)
class Term:
    expressions: tuple[Requirement, ...]
    fields: tuple[FieldRequirement, ...]

    def matches(self, table: NodeTable, rows: Indexes) -> BoolArray:
        if not self.expressions and not self.fields:
            return np.zeros(len(rows), dtype=bool)  # an empty term matches no node
        out = np.ones(len(rows), dtype=bool)
        requirements: tuple[Requirement | FieldRequirement, ...] = (*self.expressions, *self.fields)
        for requirement in requirements:
            out &= requirement.matches(table, rows)
        return out


@dataclass(frozen=True, slots=True)
class RequiredAffinity:
    selector: Mapping[str, str]
    terms: tuple[Term, ...] | None  # None: no required node affinity

    def matches(self, table: NodeTable, rows: Indexes) -> BoolArray:
        out = np.ones(len(rows), dtype=bool)
        for key, value in self.selector.items():
            out &= table.label_values(key)[rows] == value
        if self.terms is not None:
            any_term = np.zeros(len(rows), dtype=bool)
            for term in self.terms:
                any_term |= term.matches(table, rows)
            out &= any_term
        return out

    def node_names(self) -> frozenset[str] | None:
        """Nodes named by `metadata.name In` in every term: the only candidates (PreFilter)."""
        if not self.terms:
            return None
        names: set[str] = set()
        for term in self.terms:
            pinned = [f for f in term.fields if f.operator == "In"]
            if not pinned:
                return None
            term_names = set(pinned[0].values)
            for f in pinned[1:]:
                term_names &= set(f.values)
            names |= term_names
        return frozenset(names)


def _requirement(raw: Mapping[str, Any], where: str) -> Requirement:
    problem = Requirement.problem(raw)
    if problem is not None:
        raise ValueError(f"{where}{problem}")
    return Requirement.parse(raw)


def _term(raw: Mapping[str, Any], where: str) -> Term:
    expressions = tuple(
        _requirement(r, f"{where}.matchExpressions[{i}]")
        for i, r in enumerate(raw.get("matchExpressions") or [])
    )
    fields = []
    for i, r in enumerate(raw.get("matchFields") or []):
        if r.get("key") != "metadata.name" or r.get("operator") not in ("In", "NotIn"):
            raise ValueError(
                f"{where}.matchFields[{i}]: only metadata.name with In or NotIn is supported"
            )
        fields.append(
            FieldRequirement(str(r["operator"]), tuple(str(v) for v in r.get("values") or ()))
        )
    return Term(expressions, tuple(fields))


def parse_required(
    pod_selector: Mapping[str, str], affinity: Mapping[str, Any]
) -> RequiredAffinity:
    node_affinity = affinity.get("nodeAffinity") or {}
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = None
    if required is not None:
        terms = tuple(
            _term(t, f"requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]")
            for i, t in enumerate(required.get("nodeSelectorTerms") or [])
        )
    return RequiredAffinity(dict(pod_selector), terms)


def parse_preferred(affinity: Mapping[str, Any]) -> list[tuple[int, Term]]:
    node_affinity = affinity.get("nodeAffinity") or {}
    preferred = node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []
    out = []
    for i, item in enumerate(preferred):
        weight = int(item.get("weight", 0))
        if weight:
            out.append((weight, _term(item.get("preference") or {}, f"preferred[{i}].preference")))
    return out
