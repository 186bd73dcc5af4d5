"""PodTopologySpread's PreFilter and Filter (`whenUnsatisfiable: DoNotSchedule`), as v1.28.

PreFilter counts, over *every* node of the snapshot, the matching pods per
topology domain of each constraint (`calPreFilterState`): only nodes that
carry every constraint's key count, and, per constraint, only those its
node inclusion policies admit. Filter then admits a node when, for each
constraint in order,

    matchNum(node's domain) + selfMatch - globalMinimum <= maxSkew

where the global minimum is the smallest domain count, or 0 when fewer
domains exist than `minDomains`. A node lacking a constraint's key is
UnschedulableAndUnresolvable ("missing required label"); a skew violation is
Unschedulable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from eventsched.framework import BatchFilterResult, Status
from eventsched.model import BoolArray, Indexes, IntArray, NodeTable, Pod
from eventsched.plugins.podtopologyspread.constraints import Constraint
from eventsched.plugins.podtopologyspread.counts import NodeMasks, domain_sums

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
#: Slots of the two statuses in every BatchFilterResult this module returns.
_MISSING_LABEL, _SKEWED = 0, 1


@dataclass(frozen=True, slots=True)
class HardSpread:
    """One constraint's part of kube-scheduler's `preFilterState`."""

    constraint: Constraint
    #: The key's values and their domain codes (`NodeTable.label_codes`).
    values: Mapping[str, int]
    #: Node row -> domain code of the constraint's key (-1: the node lacks the key).
    codes: IntArray
    #: Domain code -> matching pods (0 for domains no node counted in).
    counts: IntArray
    #: Domain code -> whether an eligible node is in it (`TpPairToMatchNum` has the pair).
    present: BoolArray
    #: The global minimum (`minMatchNum`); None when no domain is eligible, where
    #: upstream finds no domain count for the key and skips the constraint.
    min_match: int | None
    #: Whether the selector matches the incoming pod itself (`selfMatchNum`).
    self_match: bool

    @property
    def domains(self) -> int:
        """`TpKeyToDomainsNum`."""
        return int(self.present.sum())

    def match_nums(self) -> dict[str, int]:
        """`TpPairToMatchNum` for this constraint's key: value -> matching pods."""
        return {v: int(self.counts[c]) for v, c in self.values.items() if self.present[c]}


def hard_spread(
    pod: Pod, constraint: Constraint, table: NodeTable, masks: NodeMasks, eligible: BoolArray
) -> HardSpread:
    values, codes = table.label_codes(constraint.topology_key)
    included = eligible & masks.included(constraint)
    sums = domain_sums(codes, included, masks.matching(constraint), len(values))
    min_match: int | None = None
    if sums.domains:
        min_match = int(sums.counts[sums.present].min())
        if sums.domains < constraint.min_domains:
            min_match = 0
    return HardSpread(
        constraint,
        values,
        codes,
        sums.counts,
        sums.present,
        min_match,
        constraint.selector.matches(pod.labels),
    )


def pre_filter_state(
    pod: Pod, constraints: tuple[Constraint, ...], table: NodeTable
) -> tuple[HardSpread, ...]:
    """`calPreFilterState` over every node row of the table."""
    masks = NodeMasks(pod, table)
    eligible = masks.has_keys(constraints)
    return tuple(hard_spread(pod, c, table, masks, eligible) for c in constraints)


def filter_rows(spreads: tuple[HardSpread, ...], rows: Indexes) -> BatchFilterResult:
    """`Filter` for every candidate row: the first failing constraint decides, as upstream."""
    verdict = np.full(len(rows), -1, dtype=np.int64)
    for spread in spreads:
        codes = spread.codes[rows]
        undecided = verdict < 0
        missing = codes < 0
        verdict[undecided & missing] = _MISSING_LABEL
        if spread.min_match is None:
            continue
        match = spread.counts[np.where(missing, 0, codes)]
        skew = match + int(spread.self_match) - spread.min_match
        verdict[undecided & ~missing & (skew > spread.constraint.max_skew)] = _SKEWED
    return BatchFilterResult(
        verdict,
        [
            Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH),
            Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH),
        ],
    )
