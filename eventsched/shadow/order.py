"""The order kube-scheduler decided its pods in, recovered from what the watch shows.

kube-scheduler decides one pod at a time, popping the first of its queue (PrioritySort:
higher priority first, then the earlier entry into the queue), and binds each on a
goroutine of its own. At a client QPS of 5000 the Bindings of a burst complete, and the
watch delivers them, out of the order the pods were decided in. A pod decided after
another saw the other assumed on its node: deciding them in the watch's order gives
the later one a view without the other, or the earlier one a view with a pod it had
not seen (on a generated burst of 400 pods, one verdict in seven differed so).

What the queue's order implies is kept, and the rest estimated:

- pods of one priority are popped in the order they entered the queue (first seen
  pending, or seen failed: a failed pod enters again), whatever the Bindings' order;
  an outcome waits for those of the pods of its priority (or higher) that entered
  before it and are not decided yet (at most MAX_WAIT past when it was seen);
- between priorities, the outcome seen first is the likeliest to have been popped
  first; the first of each other priority that entered before it was seen may have
  been (`candidates`: the shadow asks kube-scheduler's decisions which).

What the watch shows is held for `window` seconds, so that what was decided before it
(and is seen later) can go first; then it is decided in that order.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from collections import deque
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")
#: Seconds an outcome waits, past when it was seen, for the outcomes of pods that entered
#: the queue before it (popped before it, so seen soon): a pod kube-scheduler has not
#: decided by then is taken to wait in its queue for a change (or never to be decided).
MAX_WAIT = 5.0
#: Outcomes seen with no order (a restarted shadow's) tried as the next one, at most.
UNORDERED_CANDIDATES = 16


@dataclass(slots=True)
class _Entry:
    sequence: int
    at: float
    priority: int = 0


@dataclass(slots=True)
class _Item(Generic[T]):
    uid: str
    priority: int
    entered: _Entry
    arrived: float
    value: T = field(compare=False)
    taken: bool = False
    #: Seen with nothing to tell its order (a restarted shadow lists what was placed
    #: while it was down): any such outcome may come next.
    unordered: bool = False


class QueueOrder(Generic[T]):
    """Outcomes held back for `window` seconds, released in the order they were decided."""

    def __init__(self, window: float, max_wait: float = MAX_WAIT) -> None:
        self.window = window
        self.max_wait = max_wait
        self._sequence = itertools.count()
        #: Each pending pod's entry into the queue (first seen pending, or last failed).
        self._entered: dict[str, _Entry] = {}
        #: The outcomes held, by priority, each in the order its pod entered the queue.
        self._fifos: dict[int, list[_Item[T]]] = {}
        #: The same, in the order seen (taken ones are dropped from the front lazily).
        self._arrivals: deque[_Item[T]] = deque()
        self._holding: dict[str, int] = {}
        #: Pods in the queue whose first outcome is not seen yet.
        self._undecided: dict[str, _Entry] = {}
        #: The same by priority, earliest entry first (lazily: an entry no longer in
        #: `_undecided` is dropped when it comes first).
        self._first_undecided: dict[int, list[tuple[int, str]]] = {}

    def __len__(self) -> int:
        return sum(len(fifo) for fifo in self._fifos.values())

    def entered(self, uid: str, at: float, priority: int = 0, undecided: bool = True) -> None:
        """The pod is pending, in the queue since `at` unless it already was; `undecided`:
        no outcome of it was seen yet (it is not gated, nor seen failed)."""
        if uid not in self._entered:
            entry = self._entered[uid] = _Entry(next(self._sequence), at, priority)
            if undecided:
                self._undecided[uid] = entry
                heapq.heappush(
                    self._first_undecided.setdefault(priority, []), (entry.sequence, uid)
                )

    def reentered(self, uid: str, at: float) -> None:
        """The pod failed and went back to the queue at `at`."""
        self._entered[uid] = _Entry(next(self._sequence), at)

    def forget(self, uid: str) -> None:
        self._entered.pop(uid, None)
        self._undecided.pop(uid, None)

    def holding(self, uid: str) -> bool:
        """Whether an outcome of the pod is held."""
        return uid in self._holding

    def hold(
        self, uid: str, priority: int, arrived: float, value: T, *, unordered: bool = False
    ) -> None:
        """The pod's outcome (`value`), seen at `arrived`; `unordered`: nothing tells when
        it came (see _Item)."""
        self.entered(uid, arrived, priority, undecided=False)
        self._undecided.pop(uid, None)
        item = _Item(uid, priority, self._entered[uid], arrived, value, unordered=unordered)
        fifo = self._fifos.setdefault(priority, [])
        if fifo and fifo[-1].entered.sequence > item.entered.sequence:
            bisect.insort(fifo, item, key=lambda i: i.entered.sequence)
        else:
            fifo.append(item)
        self._arrivals.append(item)
        self._holding[uid] = self._holding.get(uid, 0) + 1

    def any_due(self, now: float) -> bool:
        """Whether an outcome has been held `window` seconds."""
        arrivals = self._arrivals
        while arrivals and arrivals[0].taken:
            arrivals.popleft()
        return bool(arrivals) and now - arrivals[0].arrived >= self.window

    def blocked(self, value: T, now: float) -> bool:
        """Whether the outcome (the likeliest candidate) waits for a pod kube-scheduler
        popped before it and whose outcome is not seen yet (for at most `max_wait` past
        the outcome): one of its priority that entered the queue before it, or one of a
        higher priority that entered before the outcome was seen."""
        item = next(fifo[0] for fifo in self._fifos.values() if fifo[0].value is value)
        if now - item.arrived >= self.max_wait:
            return False
        for priority in list(self._first_undecided):
            if priority < item.priority:
                continue
            first = self._first(priority)
            if first is None:
                continue
            if priority == item.priority and first.sequence < item.entered.sequence:
                return True
            if priority > item.priority and first.at < item.arrived:
                return True
        return False

    def _first(self, priority: int) -> _Entry | None:
        """The undecided pod of `priority` that entered the queue first."""
        heap = self._first_undecided[priority]
        while heap:
            sequence, uid = heap[0]
            entry = self._undecided.get(uid)
            if entry is not None and entry.sequence == sequence:
                return entry
            heapq.heappop(heap)
        del self._first_undecided[priority]
        return None

    def candidates(self) -> list[T]:
        """The outcomes whose pod kube-scheduler may have popped next, the likeliest first.

        The likeliest is, of the first of each priority to enter, the one seen first; the
        others are the first of each higher priority that entered before the likeliest's
        outcome was seen, then the first of each lower priority that entered before the
        likeliest did (popped before it entered, its outcome may still come later: a
        Binding takes longer than the status write of a failure). When the likeliest was
        seen with no order, so may the next UNORDERED_CANDIDATES unordered ones."""
        heads = [fifo[0] for fifo in self._fifos.values()]
        if not heads:
            return []
        likeliest = self._next(heads)
        if likeliest.unordered:
            pool = sorted(
                (i for fifo in self._fifos.values() for i in fifo if i.unordered),
                key=lambda i: (-i.priority, i.entered.sequence),
            )
            pool = [i for i in pool if i is not likeliest][: UNORDERED_CANDIDATES - 1]
            return [likeliest.value, *(i.value for i in pool)]
        higher = [
            h for h in heads if h.priority > likeliest.priority and h.entered.at < likeliest.arrived
        ]
        lower = [
            h
            for h in heads
            if h.priority < likeliest.priority and h.entered.at < likeliest.entered.at
        ]
        others = sorted(higher, key=lambda i: i.arrived) + sorted(lower, key=lambda i: i.arrived)
        return [likeliest.value, *(item.value for item in others)]

    def take(self, value: T) -> None:
        """The outcome (one of `candidates`) is decided: no longer held."""
        for priority, fifo in self._fifos.items():
            index = next((i for i, item in enumerate(fifo) if item.value is value), None)
            if index is not None:
                item = fifo.pop(index)
                if not fifo:
                    del self._fifos[priority]
                break
        else:
            raise ValueError("not held")
        item.taken = True
        count = self._holding.pop(item.uid) - 1
        if count:
            self._holding[item.uid] = count

    def _next(self, heads: list[_Item[T]]) -> _Item[T]:
        """Of the first pod of each priority, the one the queue popped first by the
        estimate: the one whose outcome was seen first."""
        return min(heads, key=lambda item: item.arrived)
