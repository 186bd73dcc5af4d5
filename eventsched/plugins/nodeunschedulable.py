"""NodeUnschedulable (Filter): cordoned nodes take only pods that tolerate the cordon."""

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
