"""NodeAffinity: `spec.nodeSelector` and node affinity, as kube-scheduler's plugin.

Filter: the node must match every nodeSelector label and one of the required
nodeSelectorTerms. Score: the summed weights of the preferred terms a node
matches, normalized so the best node gets 100. Matching is vectorized over
the NodeTable's cached label columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eventsched.framework import (
    MAX_NODE_SCORE,
    NODE_ADD,
    NODE_UPDATE,
    BatchFilterResult,
    ClusterEvent,
    Code,
    CycleState,
    Handle,
    PluginArgsError,
    PreFilterResult,
    Status,
    default_normalize_score,
)
from eventsched.model import BoolArray, Indexes, IntArray, NodeTable, Pod
from eventsched.model.nodeselector import NodeSelectorRequirement as Requirement

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
_STATE_KEY = "PreFilterNodeAffinity"
_SCORE_KEY = "PreScoreNodeAffinity"


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


class NodeAffinity:
    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        unknown = set(args) - {"addedAffinity"}
        if unknown:
            raise PluginArgsError(
                sorted(unknown)[0], "unknown field; NodeAffinity takes addedAffinity"
            )
        added = args.get("addedAffinity") or {}
        try:
            self.added_required = parse_required({}, {"nodeAffinity": added}) if added else None
            self.added_preferred = parse_preferred({"nodeAffinity": added}) if added else []
        except ValueError as exc:
            raise PluginArgsError("addedAffinity", str(exc)) from exc

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (NODE_ADD, NODE_UPDATE)

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        has_required = bool(
            (pod.affinity.get("nodeAffinity") or {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution"
            )
        )
        if not pod.node_selector and not has_required and self.added_required is None:
            return None, _skip()
        try:
            required = parse_required(pod.node_selector, pod.affinity)
        except ValueError as exc:
            return None, Status.unresolvable(f"invalid node affinity: {exc}")
        state.write(_STATE_KEY, required)
        names = required.node_names()
        return (PreFilterResult(names) if names is not None else None), None

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        required: RequiredAffinity | None = state.get(_STATE_KEY)
        passed = np.ones(len(rows), dtype=bool)
        if required is not None:
            passed &= required.matches(table, rows)
        if self.added_required is not None:
            passed &= self.added_required.matches(table, rows)
        return BatchFilterResult.from_mask(passed, Status.unresolvable(ERR_REASON_POD))

    def pre_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> Status | None:
        try:
            preferred = parse_preferred(pod.affinity) + self.added_preferred
        except ValueError as exc:
            return Status.as_error(f"invalid preferred node affinity: {exc}")
        if not preferred:
            return _skip()
        state.write(_SCORE_KEY, preferred)
        return None

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> IntArray:
        scores = np.zeros(len(rows), dtype=np.int64)
        for weight, term in state.get(_SCORE_KEY, []):
            scores += np.where(term.matches(table, rows), weight, 0)
        return scores

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: IntArray, rows: Indexes
    ) -> IntArray:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)


def _skip() -> Status:
    return Status(Code.SKIP)
