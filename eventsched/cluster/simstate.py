"""What the simulated cluster's parts share: its objects and records under one lock, and
the feed its changes go out on.

`SimulatedCluster` (sim.py) builds one `SimState` and hands it to its parts, the pod
status writes (simstatus.py) and the volume requests (simvolumes.py); each changes the
state under `lock`, queues the change on `feed` while it holds it (so the order of the
changes is the state's), and delivers once it has let go.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import structlog

from eventsched.cluster.types import ChangeType, ClusterChange, SimEvent
from eventsched.model import Node, Pod
from eventsched.model.objects import ClusterObject

log = structlog.get_logger(__name__)

OnChange = Callable[[ClusterChange], None]


@dataclass(frozen=True, slots=True)
class _Synced:
    """Queued after the initial list: delivering it means the cache has everything."""


class ChangeFeed:
    """The cluster's changes, delivered like an informer's: in order, one at a time, never
    from inside the cluster's lock. The scheduler's observer takes its own locks in the
    callback; calling it while holding ours would let a binder thread and the scheduling
    thread deadlock each other.

    The queue is guarded by the cluster's lock, which `enqueue` and `open_locked` expect
    their caller to hold.
    """

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock
        self._on_change: OnChange | None = None
        self._pending: deque[ClusterChange | _Synced] = deque()
        # Held by the one thread delivering; never waited for (see deliver).
        self._delivering = threading.Lock()
        self._synced = threading.Event()

    def open_locked(
        self, on_change: OnChange, listed: Iterable[Node | Pod | ClusterObject]
    ) -> None:
        """Queue every object of `listed` as ADDED for `on_change`, then the mark that the
        list is delivered; the caller holds the lock."""
        if self._on_change is not None:
            raise RuntimeError("SimulatedCluster.start() called twice without stop()")
        self._on_change = on_change
        self._synced.clear()
        self._pending.clear()
        self._pending.extend(ClusterChange("ADDED", obj) for obj in listed)
        self._pending.append(_Synced())

    def relist_locked(self, listed: Iterable[Node | Pod | ClusterObject]) -> None:
        """Queue every object of `listed` as ADDED again, after what is queued, then the mark
        that the list is delivered; the caller holds the lock."""
        if self._on_change is None:
            raise RuntimeError("SimulatedCluster.relist() called before start()")
        self._synced.clear()
        self._pending.extend(ClusterChange("ADDED", obj) for obj in listed)
        self._pending.append(_Synced())

    def close(self) -> None:
        """Deliver nothing more; a change already being delivered finishes."""
        with self._lock:
            self._on_change = None
            self._pending.clear()

    def wait_synced(self, timeout: float | None = None) -> bool:
        """True once the initial list has been delivered (at once, after `open_locked`)."""
        with self._lock:
            started = self._on_change is not None
        return started and self._synced.wait(timeout)

    def enqueue(self, change_type: ChangeType, obj: Node | Pod | ClusterObject) -> None:
        """Queue a change for delivery; the caller holds the lock, so order is the state's."""
        if self._on_change is not None:
            self._pending.append(ClusterChange(change_type, obj))

    def deliver(self) -> None:
        """Run the callback for queued changes, in order, outside the state lock.

        One thread delivers at a time. A thread that finds another delivering
        returns at once and leaves its changes to it, instead of waiting: so a
        callback that itself changes the cluster cannot deadlock, and the
        callback is never run concurrently with itself. The deliverer checks
        the queue again after letting go, so no change is left behind.
        """
        while True:
            if not self._delivering.acquire(blocking=False):
                return
            try:
                while (item := self._next_pending()) is not None:
                    change, on_change = item
                    if isinstance(change, _Synced):
                        self._synced.set()
                        continue
                    try:
                        on_change(change)
                    except Exception:
                        # As an informer does: a failing handler must not stop the stream.
                        log.exception("cluster change handler failed", change=change.type)
            finally:
                self._delivering.release()
            with self._lock:
                if not self._pending or self._on_change is None:
                    return

    def _next_pending(self) -> tuple[ClusterChange | _Synced, OnChange] | None:
        with self._lock:
            if not self._pending or self._on_change is None:
                return None
            return self._pending.popleft(), self._on_change


@dataclass(slots=True)
class SimState:
    """A simulated cluster's objects and records, each read and changed under `lock`."""

    lock: threading.Lock
    #: The changes to the objects, queued under `lock`.
    feed: ChangeFeed
    nodes: dict[str, Node] = field(default_factory=dict)
    #: Pods by `namespace/name`.
    pods: dict[str, Pod] = field(default_factory=dict)
    #: Namespaces, workloads and storage objects by key (see model/objects.py).
    objects: dict[str, ClusterObject] = field(default_factory=dict)
    #: Core Events the scheduler wrote (for tests and the CLI summary).
    events: list[SimEvent] = field(default_factory=list)
    #: The PodScheduled condition by pod key.
    conditions: dict[str, dict[str, str]] = field(default_factory=dict)
    #: (pod key, node) in bind order.
    bindings: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def empty(cls) -> SimState:
        """No objects, and a feed guarded by the state's lock."""
        lock = threading.Lock()
        return cls(lock, ChangeFeed(lock))
