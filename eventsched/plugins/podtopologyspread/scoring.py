"""PodTopologySpread's PreScore, Score and NormalizeScore (`ScheduleAnyway`), as v1.28.

PreScore (`initPreScoreState` + the count over all nodes):

- a filtered node lacking one of the constraints' keys is ignored (scored 0),
  unless the constraints are the system defaults (`requireAllTopologies`
  false): then a node without a zone still gets hostname spreading, and the
  nodes without the key form one more domain, the value "";
- each constraint's weight is log(size + 2), size being the number of its
  domains among the filtered, not ignored nodes (for the hostname key: the
  number of those nodes);
- per domain seen among the filtered nodes, the matching pods over *all*
  nodes the constraint's node inclusion policies admit.

Score sums, per constraint whose key the node has, count * weight +
(maxSkew - 1), the count being the node's own for the hostname key and its
domain's otherwise, rounded half away from zero (Go's math.Round).
NormalizeScore maps s to 100 * (max + min - s) / max (integer division),
ignored nodes to 0 and everyone to 100 when the highest raw score is 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from eventsched.framework import MAX_NODE_SCORE
from eventsched.model import BoolArray, Indexes, IntArray, NodeTable, Pod
from eventsched.plugins.podtopologyspread.constraints import LABEL_HOSTNAME, Constraint
from eventsched.plugins.podtopologyspread.counts import NodeMasks, domain_sums


@dataclass(frozen=True, slots=True)
class SoftSpread:
    """One constraint's part of kube-scheduler's `preScoreState`."""

    constraint: Constraint
    #: Node row -> whether the node carries the key (Score only credits those).
    has_key: BoolArray
    #: Node row -> domain code; nodes without the key share the code of the value "".
    domain: IntArray
    #: Domain code -> matching pods (`TopologyPairToPodCounts`); unused for the hostname key.
    counts: IntArray
    #: Node row -> matching pods on it (the hostname key counts per node).
    per_node: IntArray
    #: `TopologyNormalizingWeight`.
    weight: float

    @property
    def by_node(self) -> bool:
        return self.constraint.topology_key == LABEL_HOSTNAME


@dataclass(frozen=True, slots=True)
class PreScoreState:
    spreads: tuple[SoftSpread, ...]
    #: Node row -> ignored (a filtered node lacking a required key; `IgnoredNodes`).
    ignored: BoolArray


def topology_normalizing_weight(size: int) -> float:
    return math.log(size + 2)


def _domains(table: NodeTable, key: str) -> tuple[int, IntArray]:
    """Domain codes of `key` with the missing label read as the value "" (Go's map lookup)."""
    values, codes = table.label_codes(key)
    empty = values.get("")
    absent = len(values) if empty is None else empty
    return len(values) + 1, np.where(codes >= 0, codes, absent)


def _soft_spread(
    constraint: Constraint,
    table: NodeTable,
    masks: NodeMasks,
    kept: Indexes,
    eligible: BoolArray,
) -> SoftSpread:
    """One constraint: its domains among the kept filtered rows, their counts over all nodes."""
    num, domain = _domains(table, constraint.topology_key)
    has_key = table.label_codes(constraint.topology_key)[1] >= 0
    per_node = masks.matching(constraint)
    if constraint.topology_key == LABEL_HOSTNAME:
        counts = np.zeros(num, dtype=np.int64)
        size = len(kept)
    else:
        seen = np.bincount(domain[kept], minlength=num) > 0
        size = int(seen.sum())
        included = eligible & masks.included(constraint) & seen[domain]
        counts = domain_sums(domain, included, per_node, num).counts
    weight = topology_normalizing_weight(size)
    return SoftSpread(constraint, has_key, domain, counts, per_node, weight)


def pre_score_state(
    pod: Pod,
    constraints: tuple[Constraint, ...],
    table: NodeTable,
    rows: Indexes,
    require_all_topologies: bool,
) -> PreScoreState:
    masks = NodeMasks(pod, table)
    if require_all_topologies:
        eligible = masks.has_keys(constraints)
    else:
        eligible = np.ones(len(table), dtype=bool)
    ignored = np.zeros(len(table), dtype=bool)
    ignored[rows] = ~eligible[rows]
    kept = rows[eligible[rows]]
    spreads = tuple(_soft_spread(c, table, masks, kept, eligible) for c in constraints)
    return PreScoreState(spreads, ignored)


def go_round(values: np.ndarray) -> IntArray:
    """Go's math.Round for non-negative floats: halves away from zero, exactly."""
    whole = np.floor(values)
    return (whole + (values - whole >= 0.5)).astype(np.int64)


def score_rows(state: PreScoreState, rows: Indexes) -> IntArray:
    total = np.zeros(len(rows), dtype=np.float64)
    for spread in state.spreads:
        count = spread.per_node[rows] if spread.by_node else spread.counts[spread.domain[rows]]
        credit = count.astype(np.float64) * spread.weight + float(spread.constraint.max_skew - 1)
        total += np.where(spread.has_key[rows], credit, 0.0)
    scores = go_round(total)
    scores[state.ignored[rows]] = 0
    return scores


def normalize(state: PreScoreState, scores: IntArray, rows: Indexes) -> IntArray:
    ignored = state.ignored[rows]
    valid = scores[~ignored]
    if len(valid) == 0:
        scores[:] = 0
        return scores
    low, high = int(valid.min()), max(int(valid.max()), 0)
    if high == 0:
        scores[:] = MAX_NODE_SCORE
    else:
        scores[:] = MAX_NODE_SCORE * (high + low - scores) // high
    scores[ignored] = 0
    return scores
