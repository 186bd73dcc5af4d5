"""NodeDeclaredFeatures: a pod that needs a node feature goes only where the node declares it.

kube-scheduler 1.35 on (`plugins/nodedeclaredfeatures`; in the default profile where the
NodeDeclaredFeatures gate is on: beta in 1.36, GA in 1.37). With the gate off the plugin
does nothing (PreFilter Skip, no events), as upstream's.

PreFilter: the features the pod's spec requires (model/nodefeatures.py) among those the
version's component-helpers registers; none (the usual case: every triggering field is
behind an alpha or beta API gate) is Skip. Filter, per node, UnschedulableAndUnresolvable
where the node's `status.declaredFeatures` lacks one:

- 1.35: the declared names as a set; "node declared features check failed - unsatisfied
  requirements: NAME, ..." (1.35 infers one feature at most, so the order of Go's map
  does not show);
- 1.36 on: the declared names mapped onto the registry by a merge walk that assumes both
  sorted (`TryMap`; an unregistered name is dropped, an unsorted list may lose some);
  "node(s) didn't match Pod's required features".

The deferred-resize Skips of 1.37 (InPlacePodVerticalScalingSchedulerPreemption, alpha,
off) are not implemented.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from eventsched.framework import (
    LEGACY_FEATURES,
    NODE_ADD,
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
from eventsched.model import Indexes, NodeTable, Pod
from eventsched.model.nodefeatures import REGISTERED, declared_set

NAME = "NodeDeclaredFeatures"
ERR_REASON = "node(s) didn't match Pod's required features"
ERR_REASON_1_35 = "node declared features check failed - unsatisfied requirements: "
_STATE_KEY = "PreFilter" + NAME


class NodeDeclaredFeatures:
    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args)
        self.enabled = features.since("1.35") and features.node_declared_features
        self.walks_sorted = features.since("1.36")
        newest = max(REGISTERED, key=lambda v: int(v.split(".")[1]))
        self.registered = REGISTERED.get(features.version, REGISTERED[newest])

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (NODE_ADD, NODE_UPDATE) if self.enabled else ()

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not self.enabled:
            return None, SKIP
        required = tuple(f for f in pod.required_node_features if f in self.registered)
        if not required:
            return None, SKIP
        state.write(_STATE_KEY, required)
        return None, None

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        required: tuple[str, ...] | None = state.get(_STATE_KEY)
        if not self.enabled or not required:
            return BatchFilterResult.passing(len(rows))
        verdict = np.full(len(rows), -1, dtype=np.int64)
        statuses: list[Status] = []
        slots: dict[str, int] = {}
        for i, row in enumerate(rows):
            missing = self.missing(required, table.node(int(row)).declared_features)
            if not missing:
                continue
            reason = ERR_REASON if self.walks_sorted else ERR_REASON_1_35 + ", ".join(missing)
            if reason not in slots:
                slots[reason] = len(statuses)
                statuses.append(Status.unresolvable(reason))
            verdict[i] = slots[reason]
        return BatchFilterResult(verdict, statuses, all_passed=not statuses)

    def missing(self, required: Sequence[str], declared: Sequence[str]) -> list[str]:
        """The required features the node does not declare, as the version reads its list."""
        if self.walks_sorted:
            found = declared_set(declared, self.registered)
        else:
            found = frozenset(declared)
        return [f for f in required if f not in found]
