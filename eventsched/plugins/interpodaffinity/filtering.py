"""InterPodAffinity's PreFilter and Filter (upstream filtering.go) over the NodeTable.

PreFilter counts, per topology domain (`table.label_codes(topologyKey)`):

- `affinity`: placed pods matching *all* of the incoming pod's required
  affinity terms, for each term's key (`affinityCounts`);
- `anti`: placed pods matching each required anti-affinity term (`antiAffinityCounts`);
- `existing`: placed pods whose required anti-affinity terms select the
  incoming pod (`existingAntiAffinityCounts`).

A placed pod counts only when its node has the term's topology key, as
upstream's counters hold (key, value) pairs. Counting is a selector over
the PodTable and one bincount of the pods' domain codes per term; Filter is
then an array lookup per key over the candidate rows, checked in upstream's
order: affinity, anti-affinity, existing pods' anti-affinity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from eventsched.framework import BatchFilterResult, Status
from eventsched.model import BoolArray, Indexes, NodeTable, Pod
from eventsched.model.podaffinity import MergedTerm
from eventsched.plugins.interpodaffinity.domains import DomainTally, DomainValues
from eventsched.plugins.interpodaffinity.index import TermGroup

ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
#: Slots of `STATUSES`, in the order Filter checks them.
AFFINITY_SLOT, ANTI_AFFINITY_SLOT, EXISTING_SLOT = 0, 1, 2
STATUSES = (
    Status.unresolvable(ERR_REASON_AFFINITY),
    Status.unschedulable(ERR_REASON_ANTI_AFFINITY),
    Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY),
)


@dataclass(frozen=True, slots=True)
class FilterState:
    #: One entry per distinct key of the required affinity terms (none: no such terms).
    affinity: tuple[DomainValues, ...]
    #: Upstream's `len(affinityCounts) == 0 && podMatchesAllAffinityTerms(pod)`.
    first_of_group: bool
    anti: tuple[DomainValues, ...]
    existing: tuple[DomainValues, ...]


def pre_filter_state(
    pod: Pod,
    table: NodeTable,
    affinity: Sequence[MergedTerm],
    anti_affinity: Sequence[MergedTerm],
    existing_anti: Sequence[TermGroup],
    namespace_labels: Mapping[str, str],
) -> FilterState:
    return FilterState(
        *_affinity_counts(pod, table, affinity),
        _anti_affinity_counts(table, anti_affinity),
        _existing_counts(pod, table, existing_anti, namespace_labels),
    )


def _affinity_counts(
    pod: Pod, table: NodeTable, terms: Sequence[MergedTerm]
) -> tuple[tuple[DomainValues, ...], bool]:
    if not terms:
        return (), False
    domains = DomainTally(table)
    placed = table.placed
    matching_all = placed.matching(terms[0].selector, terms[0].namespaces)
    for term in terms[1:]:
        matching_all &= placed.matching(term.selector, term.namespaces)
    for term in terms:
        domains.add_pods(term.topology_key, matching_all)
    counts = domains.frozen()
    no_match_anywhere = not any(c.any for c in counts)
    first_of_group = no_match_anywhere and all(t.matches(pod) for t in terms)
    return counts, first_of_group


def _anti_affinity_counts(
    table: NodeTable, terms: Sequence[MergedTerm]
) -> tuple[DomainValues, ...]:
    domains = DomainTally(table)
    for term in terms:
        domains.add_pods(term.topology_key, table.placed.matching(term.selector, term.namespaces))
    return tuple(c for c in domains.frozen() if c.any)


def _existing_counts(
    pod: Pod,
    table: NodeTable,
    groups: Sequence[TermGroup],
    namespace_labels: Mapping[str, str],
) -> tuple[DomainValues, ...]:
    domains = DomainTally(table)
    for group in groups:
        if group.term.matches(pod, namespace_labels):
            domains.add_nodes(group.term.topology_key, group.node_rows)
    return tuple(c for c in domains.frozen() if c.any)


def filter_rows(state: FilterState, rows: Indexes) -> BatchFilterResult:
    """Upstream's Filter over `rows`: the first of the three checks a node fails names it."""
    verdict = np.full(len(rows), -1, dtype=np.int64)
    if state.affinity:
        verdict[~_satisfies_affinity(state, rows)] = AFFINITY_SLOT
    for slot, counts in ((ANTI_AFFINITY_SLOT, state.anti), (EXISTING_SLOT, state.existing)):
        if counts:
            failing = _in_counted_domain(counts, rows) & (verdict < 0)
            verdict[failing] = slot
    return BatchFilterResult(verdict, list(STATUSES))


def _satisfies_affinity(state: FilterState, rows: Indexes) -> BoolArray:
    """`satisfyPodAffinity`: every key present, and a matching pod in each domain
    (or the pod is the first of a group that selects itself)."""
    has_keys = np.ones(len(rows), dtype=bool)
    pods_exist = np.ones(len(rows), dtype=bool)
    for counts in state.affinity:
        present, count = counts.at(rows)
        has_keys &= present
        pods_exist &= count > 0
    return has_keys & (pods_exist | state.first_of_group)


def _in_counted_domain(counts: Sequence[DomainValues], rows: Indexes) -> BoolArray:
    hit = np.zeros(len(rows), dtype=bool)
    for domain in counts:
        hit |= domain.at(rows)[1] > 0
    return hit
