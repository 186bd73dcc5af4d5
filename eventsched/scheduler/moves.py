"""Queue moves, each logged: the queue decides where a pod goes, the log says so.

Every move between activeQ, backoffQ and the unschedulable pool (a cluster event that
a rejecting plugin registered, a backoff that ended, a failed Binding) is recorded as
`requeued`, so the queue a restarted process rebuilds, and the one replay shows, is the
one this process had.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from eventsched.framework import ClusterEvent, QueuedPodInfo
from eventsched.model import Pod
from eventsched.model.podaffinity import has_pod_affinity, parse_existing_terms
from eventsched.scheduler.journal import Journal
from eventsched.scheduler.queue import Move, SchedulingQueue


class QueueMoves:
    """Moves the queue's pods and logs each move as `requeued`."""

    def __init__(
        self,
        queue: SchedulingQueue,
        journal: Journal,
        plugin_events: Mapping[str, list[ClusterEvent]],
    ) -> None:
        self.queue = queue
        self.journal = journal
        #: Which cluster events may make each plugin's rejections go away (Profiles).
        self.plugin_events = plugin_events

    def on_event(self, event: ClusterEvent, label: str) -> None:
        """A cluster event: the pods whose rejecting plugins registered it move."""
        self.record(self.queue.move_on_event(event, self.plugin_events, label))

    def on_assigned_pod(
        self, event: ClusterEvent, pod: Pod, namespace_labels: Mapping[str, str]
    ) -> None:
        """`AssignedPodAdded` / `AssignedPodUpdated` (v1.28): of the unschedulable pods, only
        those with a required pod-affinity term `pod` matches are candidates
        (`getUnschedulablePodsWithMatchingAffinityTerm`); of them, those whose rejecting
        plugins registered the event move. Pods in flight remember the event either way."""
        only = waiting_for(pod, namespace_labels)
        self.record(self.queue.move_on_event(event, self.plugin_events, "AssignedPodAdd", only))

    def flush(self) -> None:
        """Backoffs that ended and pods too long unschedulable move (the loop, every turn)."""
        self.record(self.queue.flush())

    def record(self, moves: Sequence[Move]) -> None:
        for move in moves:
            data: dict[str, object] = {"from": move.source, "to": move.to, "event": move.event}
            if move.backoff_until is not None:
                data["backoffUntil"] = move.backoff_until
            self.journal.pending.add(
                "requeued", data, pod=move.info.pod, scheduler=move.info.pod.scheduler_name
            )


def waiting_for(
    assigned: Pod, namespace_labels: Mapping[str, str]
) -> Callable[[QueuedPodInfo], bool]:
    """Whether a queued pod has a required pod-affinity term that `assigned` (in a namespace
    with these labels) matches; a term list that does not parse counts as none, as the
    queue's PodInfo drops it."""

    def matches(info: QueuedPodInfo) -> bool:
        if not has_pod_affinity(info.pod):
            return False
        terms = parse_existing_terms(info.pod).required_affinity
        return any(term.matches(assigned, namespace_labels) for term in terms)

    return matches
