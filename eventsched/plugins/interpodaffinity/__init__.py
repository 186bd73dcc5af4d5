"""InterPodAffinity: kube-scheduler v1.28's inter-pod affinity and anti-affinity, in batch form.

Filter (required terms): a node passes when, in its topology domain, some
placed pod matches every required affinity term of the pod (or no placed
pod anywhere does and the pod matches its own terms: the first pod of a
group), no placed pod matches a required anti-affinity term, and no placed
pod's required anti-affinity term selects the pod. Score (preferred terms,
both ways, and placed pods' required affinity weighted by
`hardPodAffinityWeight`) sums weights per topology domain, normalized to
0..100 between the lowest and highest scored node.

Terms are parsed once per pod (terms.py), the placed pods'
terms are grouped once per table generation (index.py), and
counting matching pods per domain is array work over the PodTable
(filtering.py, scoring.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from eventsched.framework import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    ASSIGNED_POD_UPDATE,
    LEGACY_FEATURES,
    NODE_ADD,
    NODE_UPDATE,
    SKIP,
    BatchFilterResult,
    ClusterEvent,
    CycleState,
    Features,
    Handle,
    PluginArgsError,
    Status,
    check_args,
)
from eventsched.model import Indexes, IntArray, NodeTable, Pod
from eventsched.model.podaffinity import PodTerms, TermError
from eventsched.plugins.interpodaffinity.filtering import FilterState, filter_rows, pre_filter_state
from eventsched.plugins.interpodaffinity.index import ExistingTerms, IndexHolder
from eventsched.plugins.interpodaffinity.scoring import (
    ScoreState,
    WeightedMerged,
    normalize,
    pre_score_state,
    score_rows,
)

NAME = "InterPodAffinity"
ARGS = ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods")
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
MIN_HARD_POD_AFFINITY_WEIGHT, MAX_HARD_POD_AFFINITY_WEIGHT = 0, 100
_FILTER_KEY = "PreFilter" + NAME
_SCORE_KEY = "PreScore" + NAME


class InterPodAffinity:
    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(NAME, args, ARGS)
        self.hard_pod_affinity_weight = _hard_pod_affinity_weight(args)
        self.ignore_preferred_terms_of_existing_pods = _ignore_preferred(args)
        self._index = IndexHolder()

    def events_to_register(self) -> Sequence[ClusterEvent]:
        """Upstream: Pod/All and Node/Add|UpdateNodeLabel; eventsched sees placed pods only."""
        return (ASSIGNED_POD_ADD, ASSIGNED_POD_UPDATE, ASSIGNED_POD_DELETE, NODE_ADD, NODE_UPDATE)

    # -- filter -----------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[None, Status | None]:
        existing = self._index.get(table).required_anti_affinity
        try:
            terms = self._index.incoming.terms(pod)
        except TermError as exc:
            return None, Status.unresolvable(f"parsing pod: {exc}")
        if not (terms.required_affinity or terms.required_anti_affinity or existing):
            return None, SKIP
        objects = table.objects
        filter_state = pre_filter_state(
            pod,
            table,
            [t.merged(objects) for t in terms.required_affinity],
            [t.merged(objects) for t in terms.required_anti_affinity],
            existing,
            _namespace_labels(pod, table),
        )
        if not (terms.required_affinity or terms.required_anti_affinity or filter_state.existing):
            return None, SKIP
        state.write(_FILTER_KEY, filter_state)
        return None, None

    def recount(self, state: CycleState, pod: Pod, table: NodeTable) -> Status | None:
        """PreFilter again over a table whose pods changed (upstream's AddPod/RemovePod)."""
        return self.pre_filter(state, pod, table)[1]

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        filter_state: FilterState | None = state.get(_FILTER_KEY)
        if filter_state is None:  # upstream TestPreFilterDisabled: Filter without PreFilter
            return BatchFilterResult.from_mask(
                np.zeros(len(rows), dtype=bool),
                Status.as_error(f'error reading "{_FILTER_KEY}" from cycleState: not found'),
            )
        return filter_rows(filter_state, rows)

    # -- score ------------------------------------------------------------------

    def pre_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> Status | None:
        if len(rows) == 0:
            return SKIP
        existing = self._index.get(table)
        try:
            terms = self._index.incoming.terms(pod)
        except TermError as exc:
            return Status.as_error(f"failed to parse pod: {exc}")
        if self.ignore_preferred_terms_of_existing_pods and not terms.has_preferred:
            return SKIP
        preferred = _merged_preferred(terms, table)
        if not preferred and not existing.preferred and not self._scores_required(existing):
            return SKIP
        score_state = pre_score_state(
            pod,
            table,
            preferred,
            existing,
            _namespace_labels(pod, table),
            self.hard_pod_affinity_weight,
        )
        if score_state is None:
            return SKIP
        state.write(_SCORE_KEY, score_state)
        return None

    def _scores_required(self, existing: ExistingTerms) -> bool:
        return self.hard_pod_affinity_weight > 0 and bool(existing.required_affinity)

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> IntArray:
        score_state: ScoreState = state.read(_SCORE_KEY)
        return score_rows(score_state, rows)

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: IntArray, rows: Indexes
    ) -> IntArray:
        if state.get(_SCORE_KEY) is None:
            return scores
        return normalize(scores)


def _namespace_labels(pod: Pod, table: NodeTable) -> Mapping[str, str]:
    """The incoming pod's namespace labels; an unknown namespace has none (upstream's nil set)."""
    return table.objects.namespace_labels(pod.namespace) or {}


def _merged_preferred(terms: PodTerms, table: NodeTable) -> list[WeightedMerged]:
    objects = table.objects
    return [WeightedMerged(w.term.merged(objects), w.weight) for w in terms.preferred_affinity] + [
        WeightedMerged(w.term.merged(objects), -w.weight) for w in terms.preferred_anti_affinity
    ]


def _hard_pod_affinity_weight(args: Mapping[str, Any]) -> int:
    """`hardPodAffinityWeight`: defaults to 1, validated in [0, 100] as upstream."""
    weight = args.get("hardPodAffinityWeight")
    if weight is None:
        return DEFAULT_HARD_POD_AFFINITY_WEIGHT
    if isinstance(weight, bool) or not isinstance(weight, int):
        raise PluginArgsError("hardPodAffinityWeight", f"must be an integer (got {weight!r})")
    if not MIN_HARD_POD_AFFINITY_WEIGHT <= weight <= MAX_HARD_POD_AFFINITY_WEIGHT:
        raise PluginArgsError(
            "hardPodAffinityWeight",
            f"Invalid value: {weight}: not in valid range "
            f"[{MIN_HARD_POD_AFFINITY_WEIGHT}, {MAX_HARD_POD_AFFINITY_WEIGHT}]",
        )
    return weight


def _ignore_preferred(args: Mapping[str, Any]) -> bool:
    value = args.get("ignorePreferredTermsOfExistingPods")
    if value is None:
        return False
    if not isinstance(value, bool):
        raise PluginArgsError(
            "ignorePreferredTermsOfExistingPods", f"must be true or false (got {value!r})"
        )
    return value
