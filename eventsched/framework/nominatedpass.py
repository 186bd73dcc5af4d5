"""The Filter pass's part for nominated pods (kube-scheduler v1.28 `findNodesThatFitPod`).

- `nominated_node_first`: a pod that preemption nominated to a node tries that node
  first (`evaluateNominatedNode`); if it passes, it is the only feasible node.
- `count_nominated`: after the batch pass over a chunk, the rows where pods of equal
  or higher priority are nominated are judged again with those pods counted
  (`RunFilterPluginsWithNominatedPods`, runtime/nominated.py). With no nominations
  the pass costs nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.runtime import Framework, Rejection
from eventsched.framework.runtime.nominated import nominated_rows, requested_with_nominated
from eventsched.framework.status import SUCCESS, Status
from eventsched.model import Indexes, NodeTable, Pod


@dataclass(frozen=True, slots=True)
class NominatedFirst:
    """The pod's nominated node and its status when evaluated before the pass."""

    node: str
    row: int
    status: Status

    def record(self) -> dict[str, Any]:
        """`filtered`'s `nominatedNode`."""
        out: dict[str, Any] = {"node": self.node, "passed": self.status.is_success}
        if not self.status.is_success:
            out["status"] = self.status.to_record()
        return out

    def rejection(self) -> Rejection:
        return Rejection(
            self.status.plugin,
            np.array([self.row], dtype=np.intp),
            np.zeros(1, dtype=np.int64),
            [self.status],
        )


def nominated_node_first(
    fw: Framework, state: CycleState, pod: Pod, table: NodeTable
) -> NominatedFirst | None:
    """The pod's nominated node evaluated alone; None when it has none (or it is gone).

    An error there is not the attempt's: upstream logs it and filters every node.
    """
    node = pod.nominated_node_name or table.nominated.node_of(pod.uid) or ""
    row = table.row_of(node) if node else None
    if row is None or not fw.has_filter_plugins():
        return None
    status = fw.run_filter_with_nominated_pods(state, pod, table, node)
    if not status.is_success and not status.is_rejected:
        return None
    return NominatedFirst(node, row, status)


def count_nominated(
    fw: Framework,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    chunk: Indexes,
    passed: Indexes,
    rejections: list[Rejection],
) -> tuple[Indexes, list[Rejection], Status]:
    """The batch verdicts of `chunk` with the rows that hold nominated pods judged again."""
    rows = nominated_rows(table, pod)
    if not rows:
        return passed, rejections, SUCCESS
    again = np.isin(chunk, rows)
    if not again.any():
        return passed, rejections, SUCCESS
    ok = np.isin(chunk, passed)
    judged = chunk[again]
    if fw.judged_by_requested_only(state):
        return _count_requested_only(fw, state, pod, table, chunk, ok, again, rejections)
    failed: list[Rejection] = []
    for i in np.flatnonzero(again).tolist():
        row = int(chunk[i])
        status = fw.run_filter_with_nominated_pods(state, pod, table, table.names[row])
        if not status.is_success and not status.is_rejected:
            return passed[:0], rejections, status
        ok[i] = status.is_success
        if not status.is_success:
            failed.append(
                Rejection(
                    status.plugin,
                    np.array([row], dtype=np.intp),
                    np.zeros(1, dtype=np.int64),
                    [status],
                )
            )
    kept = [r.keep(~np.isin(r.rows, judged)) for r in rejections]
    return chunk[ok], [r for r in kept if len(r)] + failed, SUCCESS


def _count_requested_only(
    fw: Framework,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    chunk: Indexes,
    ok: np.ndarray,
    again: np.ndarray,
    rejections: list[Rejection],
) -> tuple[Indexes, list[Rejection], Status]:
    """Every Filter reads only the requested columns: one batch pass over the rows with
    nominated pods, their requests added, decides them all (`requested_with_nominated`)."""
    judged = chunk[again]
    with table.requested_as(requested_with_nominated(table, pod)):
        passed, failed, status = fw.run_filter(state, pod, table, judged)
    if not status.is_success:
        return passed[:0], rejections, status
    ok[again] = np.isin(judged, passed)
    kept = [r.keep(~np.isin(r.rows, judged)) for r in rejections]
    return chunk[ok], [r for r in kept if len(r)] + failed, SUCCESS
