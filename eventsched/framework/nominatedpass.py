"""The Filter pass's part for nominated pods (kube-scheduler v1.28 `findNodesThatFitPod`).

- `nominated_node_first`: a pod that preemption nominated to a node tries that node
  first (`evaluateNominatedNode`); if it passes, it is the only feasible node.
- `NominatedCount`: the Filter pass over a chunk with pods of equal or higher
  priority nominated to its nodes counted (`RunFilterPluginsWithNominatedPods`,
  runtime/nominated.py). When only requested-only Filters judge the pod, one batch
  pass over `requested` with the nominated pods' requests added decides every row
  (the pass with them added is the one that decides, as fewer pods never make such
  a Filter fail). Otherwise the batch pass runs as placed and the rows with
  nominated pods are judged again one by one; those rows are found once per attempt.
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
    """One attempt's Filter pass over chunks, nominated pods counted (`filter`)."""

    def __init__(self, fw: Framework, state: CycleState, pod: Pod, table: NodeTable) -> None:
        self.fw = fw
        self.state = state
        self.pod = pod
        self.table = table
        self.rows = np.array(nominated_rows(table, pod), dtype=np.intp)
        #: `requested_with_nominated` when requested-only Filters decide every row, else None.
        self._requested: IntArray | None = None
        if len(self.rows) and fw.judged_by_requested_only(state):
            self._requested = requested_with_nominated(table, pod)

    def filter(self, chunk: Indexes) -> tuple[Indexes, list[Rejection], Status]:
        """`Framework.run_filter` over `chunk`, with the nominated pods counted."""
        if self._requested is not None:
            with self.table.requested_as(self._requested):
                return self.fw.run_filter(self.state, self.pod, self.table, chunk)
        passed, rejections, status = self.fw.run_filter(self.state, self.pod, self.table, chunk)
        if not status.is_success or not len(self.rows):
            return passed, rejections, status
        again = np.isin(chunk, self.rows)
        if not again.any():
            return passed, rejections, status
        judged = chunk[again]
        failed, status = self._one_by_one(judged)
        if not status.is_success:
            return passed[:0], rejections, status
        ok = np.isin(chunk, passed)
        failing = [int(row) for r in failed for row in r.rows]
        ok[again] = ~np.isin(judged, failing)
        kept = [r.keep(~np.isin(r.rows, judged)) for r in rejections]
        return chunk[ok], [r for r in kept if len(r)] + failed, SUCCESS

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
