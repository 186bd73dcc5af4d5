"""Where a pending pod stands in the queue, who is ahead of it, and what would move it.

From the queue the log had at a position (`QueueBook`, folded by `ViewAt`): the
pod's queue and since when, the pods in the same queue ahead of it (higher
priority, or the same priority and in the queue longer, as PrioritySort orders
the active queue), and the cluster events its last attempt's rejecting plugins
registered (kube-scheduler's EnqueueExtensions): the events that move it to
the active queue.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from eventsched.audit.queuebook import IN_CYCLE, QueueEntry
from eventsched.audit.viewat import Folded
from eventsched.framework import ClusterEvent, Framework, Handle, Registry

#: Pods ahead listed by name (the count covers them all).
AHEAD_SHOWN = 10

_RESOURCES = {
    "Node": "a node",
    "AssignedPod": "a pod on a node",
    "Pod": "a pod",
    "*": "any object",
}
_ACTIONS = {"Add": "added", "Update": "updated", "Delete": "deleted", "*": "changed"}


@dataclass(frozen=True, slots=True)
class Ahead:
    pod: str
    priority: int
    since: str


@dataclass(slots=True)
class QueueStanding:
    """A pending pod's place in the queue at `position` (the log's head when asked)."""

    position: int
    queue: str
    since: str
    #: Why it went there: the cluster event or step ("PodAdd", "NodeAdd", "failed ...").
    reason: str
    priority: int
    #: 1 + how many pods of the same queue are ahead of it (0: in a scheduling cycle).
    place: int
    in_queue: int
    ahead: list[Ahead] = field(default_factory=list)
    #: The cluster events that would move it, in words, with the plugins that asked.
    moved_by: list[str] = field(default_factory=list)
    backoff_until: str | None = None


def queue_standing(
    folded: Folded,
    uid: str,
    registry: Registry | None,
    config_digest: str,
    rejecting: Iterable[str],
) -> QueueStanding | None:
    """The pod's standing, or None when it is in no queue (bound, removed, never queued)."""
    entry = folded.queue.get(uid)
    if entry is None:
        return None
    pods = folded.view.pods

    def priority_of(pod_uid: str) -> int:
        pod = pods.get(pod_uid)
        return pod.priority if pod is not None else 0

    priority = priority_of(uid)
    same = [e for e in folded.queue if e.queue == entry.queue and e.uid != uid]
    ahead = sorted(
        (e for e in same if _ahead(e, priority_of(e.uid), entry, priority)),
        key=lambda e: (-priority_of(e.uid), e.since, e.position),
    )
    return QueueStanding(
        position=folded.position,
        queue=entry.queue,
        since=entry.since.isoformat(),
        reason=entry.event,
        priority=priority,
        place=0 if entry.queue == IN_CYCLE else len(ahead) + 1,
        in_queue=len(same) + 1,
        ahead=[Ahead(e.key, priority_of(e.uid), e.since.isoformat()) for e in ahead[:AHEAD_SHOWN]],
        # Cluster events move pods out of the unschedulable pool (kube's queueing hints).
        moved_by=_moved_by(folded, registry, config_digest, set(rejecting))
        if entry.queue == "unschedulable"
        else [],
        backoff_until=entry.backoff_until,
    )


def _ahead(other: QueueEntry, other_priority: int, entry: QueueEntry, priority: int) -> bool:
    if other_priority != priority:
        return other_priority > priority
    return (other.since, other.position) < (entry.since, entry.position)


def _moved_by(
    folded: Folded, registry: Registry | None, digest: str, rejecting: set[str]
) -> list[str]:
    profile = folded.view.profiles.get(digest)
    if registry is None or profile is None or not rejecting:
        return []
    framework = Framework(profile, registry, Handle(folded.view.table))
    asked: dict[str, list[str]] = {}
    for plugin, events in framework.events_to_register().items():
        if plugin not in rejecting:
            continue
        for event in events:
            asked.setdefault(describe(event), []).append(plugin)
    return [
        f"{what} ({', '.join(sorted(set(plugins)))})" for what, plugins in sorted(asked.items())
    ]


def describe(event: ClusterEvent) -> str:
    """A cluster event in words: "a node added", "a pod on a node deleted"."""
    what = _RESOURCES.get(event.resource, f"a {event.resource}")
    return f"{what} {_ACTIONS.get(event.action, event.action.lower())}"
