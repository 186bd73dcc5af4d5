"""PodTopologySpread: kube-scheduler v1.28's plugin, over the NodeTable in batch form.

Hard constraints (`whenUnsatisfiable: DoNotSchedule`) filter in PreFilter and
Filter (`filtering.py`); soft ones (`ScheduleAnyway`) score in PreScore, Score
and NormalizeScore (`scoring.py`), both over the counting primitives of
`counts.py`. A pod without constraints of its own gets the default
constraints of the args (`constraints.py`; `System`: hostname maxSkew 3 and
zone maxSkew 5, both ScheduleAnyway; `List`: `defaultConstraints`) with the
selector of the Services and controller that select it; none when nothing
selects it.

PreFilterExtensions (AddPod/RemovePod, for preemption and nominated pods) is
`recount`: PreFilter again over the changed table. Not here: QueueingHints,
which v1.28 does not have for this plugin.

Versions. Each constraint is counted on its own, as v1.33 on count them
(`TpValueToMatchNum` per constraint); v1.28 to v1.32 keyed the counts by topology key,
so two constraints with one key shared them. Only two constraints with the same key and
the same `whenUnsatisfiable` could tell the difference, and the API server refuses such a
pod (as `constraints.py` does), so no version's decisions differ. From 1.34 the API
server merges `matchLabelKeys` into the selector when it creates the pod
(MatchLabelKeysInPodTopologySpreadSelectorMerge; model/admission.py, which `eventsched
simulate` applies to manifest pods); the plugin merges them again as upstream's does (the
same pods selected), and validates the constraints as that API server does
(`ValidateMatchLabelKeysAndMismatchLabelKeys`: the merged key is not a duplicate).
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
    NODE_DELETE,
    NODE_UPDATE,
    SKIP,
    BatchFilterResult,
    ClusterEvent,
    CycleState,
    Features,
    Handle,
    PreFilterResult,
    Status,
    check_args,
)
from eventsched.model import Indexes, IntArray, NodeTable, Pod
from eventsched.plugins.podtopologyspread.constraints import (
    DO_NOT_SCHEDULE,
    SCHEDULE_ANYWAY,
    Constraint,
    SpreadError,
    SpreadSpec,
    constraints_for,
    parse_args,
    pod_specs,
)
from eventsched.plugins.podtopologyspread.filtering import HardSpread, filter_rows, pre_filter_state
from eventsched.plugins.podtopologyspread.scoring import (
    PreScoreState,
    normalize,
    pre_score_state,
    score_rows,
)

NAME = "PodTopologySpread"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ARGS = ("defaultConstraints", "defaultingType")


class PodTopologySpread:
    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args, ARGS)
        self.args = parse_args(args)
        #: Pods come with matchLabelKeys merged into their selectors by the API server
        #: (from 1.34; model/admission.py), and are validated as such.
        self.merged_selectors = (
            features.match_label_keys_in_pod_topology_spread
            and features.match_label_keys_in_pod_topology_spread_selector_merge
        )
        self.merges_match_label_keys = features.match_label_keys_in_pod_topology_spread

    def events_to_register(self) -> Sequence[ClusterEvent]:
        """Pod All and Node Add|Delete|UpdateNodeLabel, as v1.28 (a node update covers labels)."""
        return (
            ASSIGNED_POD_ADD,
            ASSIGNED_POD_UPDATE,
            ASSIGNED_POD_DELETE,
            NODE_ADD,
            NODE_DELETE,
            NODE_UPDATE,
        )

    def _constraints(
        self, pod: Pod, table: NodeTable, action: str
    ) -> tuple[tuple[Constraint, ...], Status | None]:
        try:
            own: tuple[SpreadSpec, ...] = pod_specs(pod, self.merged_selectors)
        except SpreadError as exc:
            return (), Status.unresolvable(f"invalid topology spread constraint: {exc}")
        return constraints_for(
            pod, own, self.args, table.objects, action, self.merges_match_label_keys
        ), None

    # -- filter -----------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        constraints, status = self._constraints(pod, table, DO_NOT_SCHEDULE)
        if status is not None:
            return None, status
        if not constraints:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, pre_filter_state(pod, constraints, table))
        return None, None

    def recount(self, state: CycleState, pod: Pod, table: NodeTable) -> Status | None:
        """PreFilter again over a table whose pods changed (upstream's AddPod/RemovePod)."""
        return self.pre_filter(state, pod, table)[1]

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        spreads: tuple[HardSpread, ...] | None = state.get(PRE_FILTER_STATE_KEY)
        if spreads is None:
            return BatchFilterResult(
                np.zeros(len(rows), dtype=np.int64),
                [Status.as_error(f"reading {PRE_FILTER_STATE_KEY!r} from cycleState: not found")],
            )
        return filter_rows(spreads, rows)

    # -- score ------------------------------------------------------------------

    def pre_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> Status | None:
        if len(rows) == 0 or len(table) == 0:
            return SKIP
        constraints, status = self._constraints(pod, table, SCHEDULE_ANYWAY)
        if status is not None:
            return status
        if not constraints:
            return SKIP
        # Nodes need every key unless the constraints are the system defaults,
        # so that nodes without a zone label still get hostname spreading.
        require_all = bool(pod.topology_spread) or not self.args.system_defaulted
        rows = np.asarray(rows, dtype=np.intp)
        state.write(
            PRE_SCORE_STATE_KEY, pre_score_state(pod, constraints, table, rows, require_all)
        )
        return None

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> IntArray:
        scored: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if scored is None:
            raise RuntimeError(f"reading {PRE_SCORE_STATE_KEY!r} from cycleState: not found")
        return score_rows(scored, np.asarray(rows, dtype=np.intp))

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: IntArray, rows: Indexes
    ) -> IntArray:
        scored: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if scored is None:
            return scores
        return normalize(scored, scores, np.asarray(rows, dtype=np.intp))
