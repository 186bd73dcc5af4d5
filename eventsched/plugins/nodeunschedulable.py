"""NodeUnschedulable (Filter): cordoned nodes take only pods that tolerate the cordon.

From 1.37 it has a PreFilter that does nothing for an ordinary pod (it Skips deferred
resizes under InPlacePodVerticalScalingSchedulerPreemption, alpha and off, which eventsched
does not implement).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eventsched.framework import (
    LEGACY_FEATURES,
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
)
from eventsched.model import Indexes, NodeTable, Pod, Taint

ERR_REASON = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


class NodeUnschedulable:
    name = "NodeUnschedulable"
    #: Its Filter reads the node and the requested/allocatable columns only (RequestedOnlyFilter).
    filter_reads_requested_only = True

    def __new__(
        cls, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> NodeUnschedulable:
        """From 1.37 the plugin serves PreFilter as well (the subclass that has it)."""
        return super().__new__(_NodeUnschedulableWithPreFilter if features.since("1.37") else cls)

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args)

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (NODE_ADD, NODE_UPDATE)

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        if any(t.tolerates(UNSCHEDULABLE_TAINT) for t in pod.tolerations):
            return BatchFilterResult.passing(len(rows))
        unschedulable = table.unschedulable[rows]
        if not unschedulable.any():
            return BatchFilterResult.passing(len(rows))
        return BatchFilterResult.from_mask(~unschedulable, Status.unresolvable(ERR_REASON))


class _NodeUnschedulableWithPreFilter(NodeUnschedulable):
    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        """1.37: nothing to do for a pod whose resize is not deferred (every pod here)."""
        return None, None
