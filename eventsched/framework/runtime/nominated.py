"""Filter on one node with nominated pods counted (kube-scheduler's
`RunFilterPluginsWithNominatedPods`, `addNominatedPods`, `RunPreFilterExtensionAddPod`).

The batch Filter pass sees the NodeTable as placed; a node that has pods
nominated to it (preemptors waiting for their victims to go) is judged again
here, one node at a time, as upstream judges every node:

1. with the nominated pods of equal or higher priority (other than the pod
   itself) added to the node, and the PreFilter state of the plugins that count
   placed pods (`PodCountingPreFilter`) computed again for that;
2. if that passes and pods were added, once more without them (filters such as
   pod affinity may pass only with them);

the status is the last pass's. Preemption's dry run asks the same question with
some pods taken off the node first (`removed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.interface import PodCountingPreFilter
from eventsched.framework.runtime.guarded import PluginFailed, guarded
from eventsched.framework.runtime.results import Rejection
from eventsched.framework.status import SUCCESS, Status
from eventsched.model import Indexes, IntArray, NodeTable, Pod


class Filters(Protocol):
    """What a pass with nominated pods runs of its profile (the Framework): the PreFilters
    that count placed pods, to count them again, and the Filters over rows."""

    @property
    def counting_pre_filters(self) -> Sequence[PodCountingPreFilter]: ...

    def run_filter(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> tuple[Indexes, list[Rejection], Status]: ...


def nominated_to_count(table: NodeTable, pod: Pod, node_name: str) -> list[Pod]:
    """The pods nominated to `node_name` that `pod` must leave room for: equal or
    higher priority, not `pod` itself (`addNominatedPods`)."""
    return [
        p
        for p in table.nominated.pods_on(node_name)
        if p.priority >= pod.priority and p.uid != pod.uid
    ]


def requested_with_nominated(table: NodeTable, pod: Pod) -> IntArray:
    """A copy of `requested` with the nominated pods `pod` must leave room for in their
    nodes' rows: what Filters that read only the requested columns see in the first of
    `RunFilterPluginsWithNominatedPods`' passes, the one that decides for them (fewer
    pods never make such a Filter fail)."""
    requested = table.requested.copy()
    for name in table.nominated.nodes():
        row = table.row_of(name)
        if row is not None:
            for nominee in nominated_to_count(table, pod, name):
                requested[row] += table.request_vector(nominee)
    return requested


def nominated_rows(table: NodeTable, pod: Pod) -> list[int]:
    """Rows of the nodes where `pod` has nominated pods to count."""
    rows: list[int] = []
    for name in table.nominated.nodes():
        row = table.row_of(name)
        if row is not None and nominated_to_count(table, pod, name):
            rows.append(row)
    return rows


def run_filter_with_nominated_pods(
    fw: Filters,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    node_name: str,
    removed: Sequence[Pod] = (),
) -> Status:
    """`pod`'s Filter status on `node_name` once `removed` are off it, nominated pods counted."""
    nominated = nominated_to_count(table, pod, node_name)
    status = SUCCESS
    for added in (nominated, ()):
        if added is not nominated and (not nominated or not status.is_success):
            break
        status = _filter_changed(fw, state, pod, table, node_name, removed, added)
        if not status.is_success and not status.is_rejected:
            return status
    return status


def _filter_changed(
    fw: Filters,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    node_name: str,
    removed: Sequence[Pod],
    added: Sequence[Pod],
) -> Status:
    if not removed and not added:
        return filter_one(fw, state, pod, table, table.index[node_name])
    with table.changed_pods(node_name, removed, added) as row:
        changed, status = recount(fw, state, pod, table)
        if not status.is_success:
            return status
        return filter_one(fw, changed, pod, table, row)


def recount(
    fw: Filters, state: CycleState, pod: Pod, table: NodeTable
) -> tuple[CycleState, Status]:
    """A copy of `state` whose pod-counting PreFilter states are those of `table` now
    (the same `state` when no such plugin ran PreFilter for this pod)."""
    counting = [p for p in fw.counting_pre_filters if p.name not in state.skip_filter]
    if not counting:
        return state, SUCCESS
    copy = state.clone()
    for plugin in counting:
        try:
            status = guarded("PreFilter", plugin.name, plugin.recount, copy, pod, table)
        except PluginFailed as failed:
            return state, failed.status
        if status is not None and status.is_skip:
            copy.skip_filter.add(plugin.name)  # nothing left to count: its Filter passes all
        elif status is not None and not status.is_success:
            # upstream's AddPod/RemovePod only fail with an error
            return state, Status.as_error(
                f'running AddPod on PreFilter plugin "{plugin.name}": {status.message}'
            )
    return copy, SUCCESS


def filter_one(fw: Filters, state: CycleState, pod: Pod, table: NodeTable, row: int) -> Status:
    """Every Filter plugin on one row: the first failing plugin's status, or Success."""
    _, rejections, status = fw.run_filter(state, pod, table, np.array([row], dtype=np.intp))
    if not status.is_success:
        return status
    if rejections:
        rejection = rejections[0]
        return rejection.statuses[int(rejection.slots[0])]
    return SUCCESS
