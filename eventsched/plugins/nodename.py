"""NodeName (Filter): a pod that names its node (`spec.nodeName`) may only go there.

From 1.37 it has a PreFilter too, which names that node as the only candidate
(`PreFilterResult{spec.nodeName}`; nothing for a pod that names none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

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
from eventsched.model import Indexes, NodeTable, Pod

ERR_REASON = "node(s) didn't match the requested node name"


class NodeName:
    name = "NodeName"
    #: Its Filter reads the node and the requested/allocatable columns only (RequestedOnlyFilter).
    filter_reads_requested_only = True

    def __new__(
        cls, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> NodeName:
        """From 1.37 the plugin serves PreFilter as well (the subclass that has it)."""
        return super().__new__(_NodeNameWithPreFilter if features.since("1.37") else cls)

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args)

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (NODE_ADD, NODE_UPDATE)

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        if not pod.node_name:
            return BatchFilterResult.passing(len(rows))
        wanted = table.row_of(pod.node_name)
        passed = rows == wanted if wanted is not None else np.zeros(len(rows), dtype=bool)
        return BatchFilterResult.from_mask(passed, Status.unresolvable(ERR_REASON))


class _NodeNameWithPreFilter(NodeName):
    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        """1.37: a pod that names its node has that node as its only candidate."""
        if pod.node_name:
            return PreFilterResult(frozenset({pod.node_name})), None
        return None, None
