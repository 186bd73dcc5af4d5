"""The scheduling queue: activeQ, backoffQ and unschedulable pods, as in kube-scheduler.

- activeQ is ordered by the profile's QueueSort plugin.
- A pod rejected by plugins waits in the unschedulable pool until a cluster
  event that one of its rejecting plugins registered for, or 5 minutes.
- A pod that failed for an error, or was moved while still backing off,
  waits in backoffQ: 1 s doubled per attempt, at most 10 s by default.

Time is wall-clock seconds so backoff expiries can be logged and survive a
restart. The queue is used from the scheduling loop's thread only.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from eventsched.framework import WILDCARD_EVENT, ClusterEvent, QueuedPodInfo, Status
from eventsched.model import Pod

QueueName = Literal["active", "backoff", "unschedulable", "gated"]
QUEUE_NAMES: tuple[QueueName, ...] = ("active", "backoff", "unschedulable", "gated")

DEFAULT_INITIAL_BACKOFF = 1.0
DEFAULT_MAX_BACKOFF = 10.0
#: `podMaxInUnschedulablePodsDuration`.
DEFAULT_MAX_UNSCHEDULABLE = 300.0


class QueueObserver(Protocol):
    """kube-scheduler's queue metrics: pods entering a queue, by queue and event
    (`scheduler_queue_incoming_pods_total`), and the plugins that made a pod
    unschedulable, counted from its failure until it is popped again
    (`scheduler_unschedulable_pods`)."""

    def incoming(self, queue: str, event: str) -> None: ...

    def unschedulable(self, plugins: Iterable[str], profile: str, delta: int) -> None: ...


@dataclass(slots=True)
class Move:
    """A pod moved between queues, for the `requeued` event."""

    info: QueuedPodInfo
    source: QueueName
    to: QueueName
    event: str
    backoff_until: float | None = None


class _ActiveItem:
    __slots__ = ("info", "less")

    def __init__(self, info: QueuedPodInfo, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]):
        self.info = info
        self.less = less

    def __lt__(self, other: _ActiveItem) -> bool:
        return self.less(self.info, other.info)


class SchedulingQueue:
    def __init__(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        *,
        pre_enqueue: Callable[[Pod], Status] | None = None,
        clock: Callable[[], float] = time.time,
        initial_backoff: float = DEFAULT_INITIAL_BACKOFF,
        max_backoff: float = DEFAULT_MAX_BACKOFF,
        max_unschedulable: float = DEFAULT_MAX_UNSCHEDULABLE,
        observer: QueueObserver | None = None,
    ) -> None:
        self._less = less
        self._pre_enqueue = pre_enqueue
        self._clock = clock
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_unschedulable = max_unschedulable
        self._sequence = itertools.count()
        self._active: list[_ActiveItem] = []
        self._backoff: list[tuple[float, int, str]] = []
        #: uid -> (info, queue); the one source of truth, the heaps may hold stale entries.
        self._where: dict[str, tuple[QueuedPodInfo, QueueName]] = {}
        #: How many of `_where`'s entries name each queue, kept as they change: the pending
        #: gauges are set after every append, and walking every pending pod each time made
        #: the loop's cost grow with the backlog.
        self._counts: dict[QueueName, int] = dict.fromkeys(QUEUE_NAMES, 0)
        self._in_flight: set[str] = set()
        #: uid of a pod being scheduled -> the cluster events (with who registered which)
        #: that asked for moves meanwhile: upstream's in-flight events, checked against the
        #: plugins that reject it when it fails (`determineSchedulingHintForInFlightPod`).
        self._move_requested_during: dict[
            str, list[tuple[ClusterEvent, Mapping[str, list[ClusterEvent]]]]
        ] = {}
        #: The unschedulable pool on its own, so flushes and moves never walk all pending pods.
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        #: Told of pods entering a queue and leaving the unschedulable pool (metrics).
        self.observer = observer

    # -- adding -----------------------------------------------------------------

    def add(self, pod: Pod) -> QueueName | None:
        """A new pending pod. Returns the queue it entered, None if it was already queued."""
        if pod.uid in self._where or pod.uid in self._in_flight:
            return None
        now = self._clock()
        info = QueuedPodInfo(pod, now, next(self._sequence))
        return self._incoming(self._place_new(info), "PodAdd")

    def restore(self, pod: Pod, attempts: int, backoff_until: float) -> QueueName:
        """Re-enter a pod whose backoff state the log kept across a restart."""
        now = self._clock()
        info = QueuedPodInfo(pod, now, next(self._sequence), attempts=attempts)
        if self._gated(info):
            return "gated"
        if backoff_until > now:
            self._push_backoff(info, backoff_until)
            return self._incoming("backoff", "PodAdd")
        self._push_active(info)
        return self._incoming("active", "PodAdd")

    def _incoming(self, queue: QueueName, event: str) -> QueueName:
        """Count a pod entering activeQ, backoffQ or the unschedulable pool (not the
        gated pods, which upstream's Add does not count either)."""
        if self.observer is not None and queue != "gated":
            self.observer.incoming(queue, event)
        return queue

    def _place_new(self, info: QueuedPodInfo) -> QueueName:
        if self._gated(info):
            return "gated"
        self._push_active(info)
        return "active"

    def _gated(self, info: QueuedPodInfo) -> bool:
        if self._pre_enqueue is None:
            return False
        if self._pre_enqueue(info.pod).is_success:
            return False
        self._enter(info, "gated")
        return True

    def update(self, pod: Pod) -> Move | None:
        """A pending pod changed: keep its place, but a gated pod may now enter activeQ
        (its gates lifted) and an unschedulable one is tried again. The move, if any."""
        entry = self._where.get(pod.uid)
        if entry is None:
            if pod.uid not in self._in_flight:
                self.add(pod)
            return None
        info, queue = entry
        if queue == "active":
            # The sort key may have changed (priority, an importance annotation):
            # re-push a copy; the old heap item is now stale and pop skips it.
            self._push_active(replace(info, pod=pod))
            return None
        info.pod = pod
        if queue == "gated":
            self._leave(pod.uid)
            to = self._incoming(self._place_new(info), "PodUpdate")
            return Move(info, "gated", to, "PodUpdate") if to != "gated" else None
        if queue == "unschedulable":
            # An update to the pod itself may make it schedulable (kube: PodUpdate event).
            return self._move(info, "unschedulable", "PodUpdate")
        return None

    def delete(self, uid: str) -> QueueName | None:
        self._unschedulable.pop(uid, None)
        entry = self._leave(uid)
        self._in_flight.discard(uid)
        if entry is None:
            return None
        self._forget_unschedulable(entry[0])
        return entry[1]

    def __contains__(self, uid: str) -> bool:
        return uid in self._where or uid in self._in_flight

    # -- popping ----------------------------------------------------------------

    def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule, or None. The pod is in flight until done() or requeued."""
        while self._active:
            item = heapq.heappop(self._active)
            uid = item.info.pod.uid
            entry = self._where.get(uid)
            if entry is None or entry[1] != "active" or entry[0] is not item.info:
                continue
            self._leave(uid)
            self._in_flight.add(uid)
            info = item.info
            self._forget_unschedulable(info)
            info.attempts += 1
            if info.initial_attempt_timestamp is None:
                info.initial_attempt_timestamp = self._clock()
            return info
        return None

    def _forget_unschedulable(self, info: QueuedPodInfo) -> None:
        """The plugins that rejected the pod stop counting: it is tried again (upstream's
        Pop) or gone (upstream keeps counting a deleted pod; eventsched does not)."""
        if self.observer is not None and info.unschedulable_plugins:
            self.observer.unschedulable(info.unschedulable_plugins, info.pod.scheduler_name, -1)
        info.unschedulable_plugins = set()

    def done(self, uid: str) -> None:
        """The pod's scheduling cycle ended with a reservation: it leaves the queue."""
        self._in_flight.discard(uid)
        self._move_requested_during.pop(uid, None)

    # -- failures ---------------------------------------------------------------

    def backoff_duration(self, attempts: int) -> float:
        """Doubled per attempt up to the maximum (`calculateBackoffDuration`); doubling stops
        there, so a pod retried a thousand times (a Binding refused every time) does not
        overflow a float."""
        duration = self.initial_backoff
        for _ in range(max(attempts - 1, 0)):
            duration *= 2
            if duration > self.max_backoff:
                return self.max_backoff
        return duration

    def add_unschedulable(self, info: QueuedPodInfo, plugins: Iterable[str]) -> Move:
        """After a failed attempt: unschedulable pool, or backoffQ if it errored or a
        cluster event that a plugin rejecting it registered arrived while it was being
        scheduled (it may fit now; v1.28.0's queueing hints, enabled by default there)."""
        uid = info.pod.uid
        self._in_flight.discard(uid)
        self._rejected_by(info, set(plugins))
        info.timestamp = self._clock()
        moved = any(
            self._interested(info.unschedulable_plugins, event, registered)
            for event, registered in self._move_requested_during.pop(uid, [])
        )
        if info.errored or moved or not info.unschedulable_plugins:
            until = info.timestamp + self.backoff_duration(info.attempts)
            self._push_backoff(info, until)
            self._incoming("backoff", "ScheduleAttemptFailure")
            return Move(info, "active", "backoff", "ScheduleAttemptFailure", until)
        return self._push_unschedulable(info, "active")

    def park(self, uid: str, plugins: Iterable[str]) -> Move | None:
        """A pod waiting in activeQ or backoffQ goes to the unschedulable pool, rejected by
        `plugins`, as a failed attempt leaves it (a starting process that finishes an
        earlier process's preemption: the preemptor waits for its victims' deletion
        again). None if the pod is not waiting there, or no plugin is named."""
        entry = self._where.get(uid)
        rejected = set(plugins)
        if entry is None or entry[1] not in ("active", "backoff") or not rejected:
            return None
        info, source = entry
        self._rejected_by(info, rejected)
        return self._push_unschedulable(info, source)

    def _rejected_by(self, info: QueuedPodInfo, plugins: set[str]) -> None:
        """The plugins that made the pod unschedulable, counted until it is popped again."""
        info.unschedulable_plugins = plugins
        if self.observer is not None and plugins:
            self.observer.unschedulable(plugins, info.pod.scheduler_name, 1)

    def _push_unschedulable(self, info: QueuedPodInfo, source: QueueName) -> Move:
        self._enter(info, "unschedulable")
        self._unschedulable[info.pod.uid] = info
        self._incoming("unschedulable", "ScheduleAttemptFailure")
        return Move(info, source, "unschedulable", "ScheduleAttemptFailure")

    def requeue_after_binding_failure(self, info: QueuedPodInfo) -> Move:
        info.errored = True
        return self.add_unschedulable(info, ())

    # -- moving -----------------------------------------------------------------

    def move_on_event(
        self,
        event: ClusterEvent,
        plugin_events: Mapping[str, list[ClusterEvent]],
        label: str,
        only: Callable[[QueuedPodInfo], bool] | None = None,
    ) -> list[Move]:
        """`MoveAllToActiveOrBackoffQueue`: wake unschedulable pods whose rejecting
        plugins care about this event (of those `only` admits, when given: upstream's
        `movePodsToActiveOrBackoffQueue` over a chosen list). Pods in flight remember it
        (see add_unschedulable)."""
        for uid in self._in_flight:
            self._move_requested_during.setdefault(uid, []).append((event, plugin_events))
        moves = []
        for info in list(self._unschedulable.values()):
            if only is not None and not only(info):
                continue
            if self._interested(info.unschedulable_plugins, event, plugin_events):
                moves.append(self._move(info, "unschedulable", label))
        return moves

    @staticmethod
    def _interested(
        plugins: set[str], event: ClusterEvent, plugin_events: Mapping[str, list[ClusterEvent]]
    ) -> bool:
        if not plugins:
            return True
        for plugin in plugins:
            for registered in plugin_events.get(plugin, [WILDCARD_EVENT]):
                if registered.matches(event):
                    return True
        return False

    def _move(self, info: QueuedPodInfo, source: QueueName, label: str) -> Move:
        until = info.timestamp + self.backoff_duration(info.attempts)
        if until > self._clock():
            self._push_backoff(info, until)
            self._incoming("backoff", label)
            return Move(info, source, "backoff", label, until)
        self._push_active(info)
        self._incoming("active", label)
        return Move(info, source, "active", label)

    def flush(self) -> list[Move]:
        """Backoff expiries to activeQ; pods unschedulable for too long to activeQ/backoffQ."""
        now = self._clock()
        moves: list[Move] = []
        while self._backoff and self._backoff[0][0] <= now:
            _, _, uid = heapq.heappop(self._backoff)
            entry = self._where.get(uid)
            if entry is None or entry[1] != "backoff":
                continue
            self._push_active(entry[0])
            self._incoming("active", "BackoffComplete")
            moves.append(Move(entry[0], "backoff", "active", "BackoffComplete"))
        for info in list(self._unschedulable.values()):
            if now - info.timestamp >= self.max_unschedulable:
                moves.append(self._move(info, "unschedulable", "UnschedulableTimeout"))
        return moves

    def next_wakeup(self) -> float | None:
        """When flush() next has work: the earliest backoff expiry or unschedulable timeout."""
        times = [
            t for t, _, uid in self._backoff if self._where.get(uid, (None, ""))[1] == "backoff"
        ]
        for info in self._unschedulable.values():
            times.append(info.timestamp + self.max_unschedulable)
        return min(times) if times else None

    # -- internals --------------------------------------------------------------

    def _push_active(self, info: QueuedPodInfo) -> None:
        self._unschedulable.pop(info.pod.uid, None)
        self._enter(info, "active")
        heapq.heappush(self._active, _ActiveItem(info, self._less))

    def _push_backoff(self, info: QueuedPodInfo, until: float) -> None:
        self._unschedulable.pop(info.pod.uid, None)
        self._enter(info, "backoff")
        heapq.heappush(self._backoff, (until, next(self._sequence), info.pod.uid))

    def _enter(self, info: QueuedPodInfo, queue: QueueName) -> None:
        """`info` is now in `queue` (and out of any other it was in)."""
        uid = info.pod.uid
        entry = self._where.get(uid)
        if entry is not None:
            self._counts[entry[1]] -= 1
        self._where[uid] = (info, queue)
        self._counts[queue] += 1

    def _leave(self, uid: str) -> tuple[QueuedPodInfo, QueueName] | None:
        """Take the pod out of whichever queue holds it; its entry, None if none did."""
        entry = self._where.pop(uid, None)
        if entry is not None:
            self._counts[entry[1]] -= 1
        return entry

    def counts(self) -> dict[QueueName, int]:
        """How many pods each queue holds (a copy)."""
        return dict(self._counts)

    def backing_off(self) -> list[str]:
        """The uids of the pods waiting out a backoff."""
        return [uid for uid, (_, queue) in self._where.items() if queue == "backoff"]
