"""Why no node fit: kube-scheduler's `Diagnosis` and `FitError`, as each version words it.

The per-node statuses are the Filter pass's rejections (arrays, runtime/results.py);
the nodes with no status of their own share one: the PreFilter rejection's, the one
nodes a PreFilter result left out get, or none. `message()` is `FitError.Error()`:

- v1.28: the PreFilter message, the histogram of the rejections (nodes a PreFilter
  result left out are not in it), and the PostFilter message, each followed by ".".
- v1.34 and later: the PreFilter message alone when there is one; else the histogram,
  where every node without a status of its own counts the shared status's reasons
  (`NodeToStatus.AbsentNodesStatus`: "node(s) didn't satisfy plugin(s) [X]"); then the
  PostFilter message with no "." added (so no ".." after preemption's own FitError).

`post_filter_statuses` is the `NodeToStatusReader` PostFilter plugins get.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from eventsched.framework.features import LEGACY, Features
from eventsched.framework.runtime import Rejection
from eventsched.framework.status import Code, Status
from eventsched.model import NodeTable, Pod

NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"
#: `NewDefaultNodeToStatus`'s status of a node without one (v1.34 and later).
DEFAULT_ABSENT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


@dataclass(slots=True)
class Diagnosis:
    num_all_nodes: int
    rejections: list[Rejection] = field(default_factory=list)
    #: Status of nodes a PreFilter result left out (or of every node, when PreFilter
    #: rejected the pod), and how many there were.
    absent_status: Status | None = None
    absent_count: int = 0
    #: Whether the absent nodes count in a v1.28 message: they do when PreFilter rejected
    #: the pod (every node has its status), not when a PreFilter result left them out
    #: (kube-scheduler v1.28 does not report those nodes at all). Later versions count
    #: every node without a status of its own (`counted_absent`).
    absent_in_message: bool = True
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    unschedulable_plugins: set[str] = field(default_factory=set)
    #: The version that words the message (and builds PostFilter's statuses).
    features: Features = LEGACY

    @property
    def rejected(self) -> int:
        return sum(len(r) for r in self.rejections)

    @property
    def counted_absent(self) -> int:
        """How many nodes the histogram counts with the absent status's reasons."""
        if self.absent_status is None:
            return 0
        if self.features.since("1.34"):
            # `NumAllNodes - NodeToStatus.Len()`: every node without a status of its own.
            return max(self.num_all_nodes - self.rejected, 0)
        return self.absent_count if self.absent_in_message else 0

    def reason_histogram(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        for rejection in self.rejections:
            for status, n in zip(rejection.statuses, rejection.counts(), strict=True):
                if not n:
                    continue  # a status a plugin offered but gave no node: not in the message
                for reason in status.reasons:
                    counts[reason] += int(n)
        absent = self.counted_absent
        if absent and self.absent_status is not None:
            for reason in self.absent_status.reasons:
                counts[reason] += absent
        return counts

    def message(self) -> str:
        """`FitError.Error()`, character for character, as the version words it."""
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        if self.pre_filter_msg:
            msg += f" {self.pre_filter_msg}."
        else:
            histogram = sorted(f"{n} {reason}" for reason, n in self.reason_histogram().items())
            if histogram:
                msg += f" {', '.join(histogram)}."
        if self.post_filter_msg:
            dot = "" if self.features.since("1.34") else "."
            msg += f" {self.post_filter_msg}{dot}"
        return msg

    def post_filter_statuses(self, table: NodeTable) -> dict[str, Status]:
        """Each node's status as PostFilter plugins read it (`NodeToStatusReader.Get`).

        v1.28: the rejected nodes' own statuses; when PreFilter rejected the pod, every
        node has its status "so that they can be handled in the preemption" (nodes a
        PreFilter result left out have none, which preemption reads as a node where it
        might help). v1.34 and later: every node, those without a status of their own
        with the absent status (UnschedulableAndUnresolvable when there is none).
        """
        names = table.names
        explicit = {names[row]: status for r in self.rejections for row, status in r.status_of()}
        if self.features.since("1.34"):
            absent = self.absent_status if self.absent_status is not None else DEFAULT_ABSENT
            if len(explicit) == len(names):
                return explicit
            return {**dict.fromkeys(names, absent), **explicit}
        if self.absent_in_message and self.absent_status is not None:
            return dict.fromkeys(names, self.absent_status)
        return explicit


class FitError(Exception):
    """No node fits the pod; `next_start_index` is where the next attempt starts looking."""

    def __init__(self, pod: Pod, diagnosis: Diagnosis, next_start_index: int) -> None:
        self.pod = pod
        self.diagnosis = diagnosis
        self.next_start_index = next_start_index
        super().__init__(diagnosis.message())
