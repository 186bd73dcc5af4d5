"""InterPodAffinity's PreScore, Score and NormalizeScore (upstream scoring.go) over the NodeTable.

PreScore sums weights per topology domain (upstream's `topologyScore`):

- the incoming pod's preferred affinity (+weight) and anti-affinity
  (-weight) terms, once per placed pod they select;
- each placed pod's required affinity terms that select the incoming pod
  (+hardPodAffinityWeight, when above 0), and its preferred affinity
  (+weight) and anti-affinity (-weight) terms that select it.

A contribution lands in the domain of the placed pod's node, and only when
that node has the term's topology key. Score is then the sum, over the
keys, of the domain score of each candidate node; NormalizeScore maps the
lowest score of the scored nodes to 0 and the highest to 100 with upstream's
float64 arithmetic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from eventsched.framework import MAX_NODE_SCORE
from eventsched.model import Indexes, IntArray, NodeTable, Pod
from eventsched.model.podaffinity import MergedTerm
from eventsched.plugins.interpodaffinity.domains import DomainTally, DomainValues
from eventsched.plugins.interpodaffinity.index import ExistingTerms, TermGroup


@dataclass(frozen=True, slots=True)
class WeightedMerged:
    """An incoming pod's preferred term after the namespace merge; weight < 0 for anti-affinity."""

    term: MergedTerm
    weight: int


@dataclass(frozen=True, slots=True)
class ScoreState:
    keys: tuple[DomainValues, ...]


def pre_score_state(
    pod: Pod,
    table: NodeTable,
    preferred: Sequence[WeightedMerged],
    existing: ExistingTerms,
    namespace_labels: Mapping[str, str],
    hard_pod_affinity_weight: int,
) -> ScoreState | None:
    """The topology scores; None when nothing contributed (upstream's Skip)."""
    topology = DomainTally(table)
    for weighted in preferred:
        term = weighted.term
        selected = table.placed.matching(term.selector, term.namespaces)
        topology.add_pods(term.topology_key, selected, weighted.weight)
    if hard_pod_affinity_weight > 0:
        _add_existing(
            topology, existing.required_affinity, pod, namespace_labels, hard_pod_affinity_weight
        )
    _add_existing(topology, existing.preferred, pod, namespace_labels, None)
    return ScoreState(topology.frozen()) if topology.touched else None


def _add_existing(
    topology: DomainTally,
    groups: Sequence[TermGroup],
    pod: Pod,
    namespace_labels: Mapping[str, str],
    weight: int | None,
) -> None:
    for group in groups:
        if group.term.matches(pod, namespace_labels):
            topology.add_nodes(
                group.term.topology_key, group.node_rows, group.weight if weight is None else weight
            )


def score_rows(state: ScoreState, rows: Indexes) -> IntArray:
    scores = np.zeros(len(rows), dtype=np.int64)
    for key in state.keys:
        scores += key.at(rows)[1]
    return scores


def normalize(scores: IntArray) -> IntArray:
    """Upstream's NormalizeScore: `int64(float64(MaxNodeScore) * (float64(s-min) / float64(max-min)))`."""
    if len(scores) == 0:
        return scores
    low, high = int(scores.min()), int(scores.max())
    spread = high - low
    if spread <= 0:
        scores[:] = 0
        return scores
    fraction = (scores - low).astype(np.float64) / np.float64(spread)
    scores[:] = (np.float64(MAX_NODE_SCORE) * fraction).astype(np.int64)
    return scores
