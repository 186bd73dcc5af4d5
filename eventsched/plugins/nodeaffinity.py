"""NodeAffinity: `spec.nodeSelector` and node affinity, as kube-scheduler's plugin.

Filter: the node must match every nodeSelector label and one of the required
nodeSelectorTerms. Score: the summed weights of the preferred terms a node
matches, normalized so the best node gets 100. Matching is vectorized over
the NodeTable's cached label columns.

PreScore Skips a pod without preferred terms (its own or `addedAffinity`'s), so the
plugin is not in its score table: upstream's since 1.30 (`node_affinity.go` PreScore).
v1.28 and v1.29 score such a pod 0 on every node instead; eventsched has always Skipped,
which changes no total, only the `scored` event (NodeAffinity listed as skipped).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from eventsched.framework import (
    LEGACY_FEATURES,
    MAX_NODE_SCORE,
    NODE_ADD,
    NODE_UPDATE,
    SKIP,
    BatchFilterResult,
    ClusterEvent,
    CycleState,
    Features,
    Handle,
    PluginArgsError,
    PreFilterResult,
    Status,
    default_normalize_score,
)
from eventsched.model import Indexes, IntArray, NodeTable, Pod
from eventsched.model.nodeaffinity import RequiredAffinity, parse_preferred, parse_required

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
#: PreFilter: every required term names nodes by `metadata.name In`, and together none.
ERR_REASON_CONFLICT = "pod affinity terms conflict"
_STATE_KEY = "PreFilterNodeAffinity"
_SCORE_KEY = "PreScoreNodeAffinity"


class NodeAffinity:
    name = NAME
    #: Its Filter reads the node and the requested/allocatable columns only (RequestedOnlyFilter).
    filter_reads_requested_only = True

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
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
            return None, SKIP
        try:
            required = parse_required(pod.node_selector, pod.affinity)
        except ValueError as exc:
            return None, Status.unresolvable(f"invalid node affinity: {exc}")
        state.write(_STATE_KEY, required)
        names = required.node_names()
        if names is None:
            return None, None
        if not names:
            return None, Status.unresolvable(ERR_REASON_CONFLICT)
        return PreFilterResult(names), None

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
            return SKIP
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
