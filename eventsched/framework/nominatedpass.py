"""The Filter pass's part for nominated pods (kube-scheduler v1.28 `findNodesThatFitPod`).

- `nominated_node_first`: a pod that preemption nominated to a node tries that node
  first (`evaluateNominatedNode`); if it passes, it is the only feasible node.
- `NominatedCount`: after the batch pass over a chunk, the rows where pods of equal
  or higher priority are nominated are judged again with those pods counted
  (`RunFilterPluginsWithNominatedPods`, runtime/nominated.py); the rows are found
  once per attempt. With no nominations the pass costs nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.runtime import Framework, Rejection
from eventsched.framework.runtime.nominated import nominated_rows, requested_with_nominated
from eventsched.framework.status import SUCCESS, Status
from eventsched.model import Indexes, IntArray, NodeTable, Pod


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
        return one_row(self.row, self.status)


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


class NominatedCount:
    """The rows of one attempt's pass where the pod must count nominated pods, found once;
    `apply` judges a chunk's such rows again (`RunFilterPluginsWithNominatedPods`)."""

    def __init__(self, fw: Framework, state: CycleState, pod: Pod, table: NodeTable) -> None:
        self.fw = fw
        self.state = state
        self.pod = pod
        self.table = table
        self.rows = np.array(nominated_rows(table, pod), dtype=np.intp)
        #: `requested_with_nominated`, made on first need (the table is fixed for the attempt).
        self._requested: IntArray | None = None

    def __bool__(self) -> bool:
        return len(self.rows) > 0

    def apply(
        self, chunk: Indexes, passed: Indexes, rejections: list[Rejection]
    ) -> tuple[Indexes, list[Rejection], Status]:
        """The batch verdicts of `chunk` with the rows that hold nominated pods judged again."""
        again = np.isin(chunk, self.rows)
        if not again.any():
            return passed, rejections, SUCCESS
        judged = chunk[again]
        if self.fw.judged_by_requested_only(self.state):
            failed, status = self._in_batch(judged)
        else:
            failed, status = self._one_by_one(judged)
        if not status.is_success:
            return passed[:0], rejections, status
        ok = np.isin(chunk, passed)
        failing = [int(row) for r in failed for row in r.rows]
        ok[again] = ~np.isin(judged, failing)
        kept = [r.keep(~np.isin(r.rows, judged)) for r in rejections]
        return chunk[ok], [r for r in kept if len(r)] + failed, SUCCESS

    def _in_batch(self, judged: Indexes) -> tuple[list[Rejection], Status]:
        """Every Filter reads only the requested columns: one batch pass over the rows, the
        nominated pods' requests added, decides them all (`requested_with_nominated`)."""
        if self._requested is None:
            self._requested = requested_with_nominated(self.table, self.pod)
        with self.table.requested_as(self._requested):
            _, failed, status = self.fw.run_filter(self.state, self.pod, self.table, judged)
        return failed, status

    def _one_by_one(self, judged: Indexes) -> tuple[list[Rejection], Status]:
        failed: list[Rejection] = []
        for row in judged.tolist():
            status = self.fw.run_filter_with_nominated_pods(
                self.state, self.pod, self.table, self.table.names[row]
            )
            if not status.is_success and not status.is_rejected:
                return failed, status
            if not status.is_success:
                failed.append(one_row(row, status))
        return failed, SUCCESS


def one_row(row: int, status: Status) -> Rejection:
    """A Rejection of one row."""
    return Rejection(
        status.plugin, np.array([row], dtype=np.intp), np.zeros(1, dtype=np.int64), [status]
    )
