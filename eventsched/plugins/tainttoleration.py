"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule taints score.

Only rows with taints are visited (the NodeTable keeps a `tainted` mask),
so untainted clusters pay one array operation per pod.

The Filter's reason names the first untolerated taint until 1.33: "node(s) had
untolerated taint {key: value}"; from 1.34 it is "node(s) had untolerated taint(s)"
(kubernetes#134740, in 1.35.0 and cherry-picked to 1.34: v1.34.4 has it), so the
"0/N nodes" line no longer tells taints apart. From 1.37 it has a PreFilter that does
nothing for an ordinary pod (it Skips deferred resizes under
InPlacePodVerticalScalingSchedulerPreemption, alpha and off, not implemented here).
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
    BatchFilterResult,
    ClusterEvent,
    CycleState,
    Features,
    Handle,
    PreFilterResult,
    Status,
    check_args,
    default_normalize_score,
)
from eventsched.model import Indexes, IntArray, NodeTable, Pod, Taint, Toleration
from eventsched.model.taints import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, find_untolerated
from eventsched.model.taintsets import group_by_taint_set

_SCORE_KEY = "PreScoreTaintToleration"
#: The Filter's reason from 1.34.
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"


class TaintToleration:
    name = "TaintToleration"
    #: Its Filter reads the node and the requested/allocatable columns only (RequestedOnlyFilter).
    filter_reads_requested_only = True

    def __new__(
        cls, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> TaintToleration:
        """From 1.37 the plugin serves PreFilter as well (the subclass that has it)."""
        return super().__new__(_TaintTolerationWithPreFilter if features.since("1.37") else cls)

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args)
        self.names_taint = not features.since("1.34")

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (NODE_ADD, NODE_UPDATE)

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        verdict = np.full(len(rows), -1, dtype=np.int64)
        statuses: list[Status] = []
        slots: dict[str, int] = {}
        # Each taint set judged once, in the order the rows first show it (which orders the
        # statuses as a loop over the rows would).
        groups = group_by_taint_set(table, rows)
        groups.spread(
            [self._slot(t, pod, statuses, slots, self.names_taint) for t in groups.sets], verdict
        )
        # A row fails only with a status to name: none, and every row passed.
        return BatchFilterResult(verdict, statuses, all_passed=not statuses)

    @staticmethod
    def _slot(
        taints: tuple[Taint, ...],
        pod: Pod,
        statuses: list[Status],
        slots: dict[str, int],
        names_taint: bool,
    ) -> int:
        """-1 when the pod tolerates these taints, else the slot of the status saying so
        (naming the first untolerated taint before 1.34)."""
        taint = find_untolerated(taints, pod.tolerations, (NO_SCHEDULE, NO_EXECUTE))
        if taint is None:
            return -1
        reason = (
            f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
            if names_taint
            else ERR_REASON_UNTOLERATED
        )
        slot = slots.get(reason)
        if slot is None:
            slot = slots[reason] = len(statuses)
            statuses.append(Status.unresolvable(reason))
        return slot

    def pre_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> Status | None:
        tolerations = tuple(t for t in pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE))
        state.write(_SCORE_KEY, tolerations)
        return None

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> IntArray:
        tolerations: tuple[Toleration, ...] = state.get(_SCORE_KEY, ())
        scores = np.zeros(len(rows), dtype=np.int64)
        groups = group_by_taint_set(table, rows)
        # Per taint set: its PreferNoSchedule taints the pod does not tolerate.
        counts = [
            sum(
                1
                for taint in taints
                if taint.effect == PREFER_NO_SCHEDULE
                and not any(t.tolerates(taint) for t in tolerations)
            )
            for taints in groups.sets
        ]
        groups.spread(counts, scores)
        return scores

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: IntArray, rows: Indexes
    ) -> IntArray:
        return default_normalize_score(MAX_NODE_SCORE, True, scores)


class _TaintTolerationWithPreFilter(TaintToleration):
    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        """1.37: nothing to do for a pod whose resize is not deferred (every pod here)."""
        return None, None
