"""The order kube-scheduler decided its pods in, recovered from what the watch shows.

kube-scheduler decides one pod at a time, popping the first of its queue (PrioritySort:
higher priority first, then the earlier entry into the queue), and binds each on a
goroutine of its own. At a client QPS of 5000 the Bindings of a burst complete, and the
watch delivers them, out of the order the pods were decided in. A pod decided after
another saw the other assumed on its node: deciding them in the watch's order gives
the later one a view without the other, or the earlier one a view with a pod it had
not seen (on a generated burst of 400 pods, one verdict in seven differed so).

What the queue's order implies is recovered, and the rest estimated:

- pods of one priority are popped in the order they entered the queue (first seen
  pending, or seen failed: a failed pod enters again), whatever the Bindings' order;
- a pod of higher priority goes before one of lower priority that was popped after it
  entered; when the lower one was popped is estimated from when its outcome was seen,
  less the quickest outcome seen lately (a pod popped as soon as it entered).

What the watch shows is held for `window` seconds, so that what was decided before it
(and is seen later) can go first; then it is decided in that order.
"""

from __future__ import annotations

import bisect
import itertools
from collections import deque
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")
#: Outcomes whose latency (seen outcome less entry) estimates the quickest one.
LATENCY_SAMPLES = 200


@dataclass(slots=True)
class _Entry:
    sequence: int
    at: float


@dataclass(slots=True)
class _Item(Generic[T]):
    uid: str
    priority: int
    entered: _Entry
    arrived: float
    value: T = field(compare=False)
    taken: bool = False


class QueueOrder(Generic[T]):
    """Outcomes held back for `window` seconds, released in the order they were decided."""

    def __init__(self, window: float) -> None:
        self.window = window
        self._sequence = itertools.count()
        #: Each pending pod's entry into the queue (first seen pending, or last failed).
        self._entered: dict[str, _Entry] = {}
        #: The outcomes held, by priority, each in the order its pod entered the queue.
        self._fifos: dict[int, list[_Item[T]]] = {}
        #: The same, in the order seen (taken ones are dropped from the front lazily).
        self._arrivals: deque[_Item[T]] = deque()
        self._holding: dict[str, int] = {}
        self._latencies: deque[float] = deque(maxlen=LATENCY_SAMPLES)

    def __len__(self) -> int:
        return sum(len(fifo) for fifo in self._fifos.values())

    def entered(self, uid: str, at: float) -> None:
        """The pod is pending, in the queue since `at` unless it already was."""
        if uid not in self._entered:
            self._entered[uid] = _Entry(next(self._sequence), at)

    def reentered(self, uid: str, at: float) -> None:
        """The pod failed and went back to the queue at `at`."""
        self._entered[uid] = _Entry(next(self._sequence), at)

    def forget(self, uid: str) -> None:
        self._entered.pop(uid, None)

    def holding(self, uid: str) -> bool:
        """Whether an outcome of the pod is held."""
        return uid in self._holding

    def hold(self, uid: str, priority: int, arrived: float, value: T) -> None:
        """The pod's outcome (`value`), seen at `arrived`."""
        self.entered(uid, arrived)
        item = _Item(uid, priority, self._entered[uid], arrived, value)
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

    def candidates(self) -> list[T]:
        """The outcomes whose pod kube-scheduler may have popped next, the likeliest first.

        The likeliest is the first of its priority to enter, from the priority whose turn
        it was by the estimate above; the others are the first of each other priority
        that entered before the likeliest's outcome was seen (so might have been popped
        before it, had it been popped later than estimated)."""
        heads = [fifo[0] for fifo in self._fifos.values()]
        if not heads:
            return []
        likeliest = self._next(heads)
        others = sorted(
            (h for h in heads if h is not likeliest and h.entered.at < likeliest.arrived),
            key=lambda item: item.arrived,
        )
        return [likeliest.value, *(item.value for item in others)]

    def take(self, value: T) -> None:
        """The outcome (one of `candidates`) is decided: no longer held."""
        for priority, fifo in self._fifos.items():
            if fifo[0].value is value:
                item = fifo.pop(0)
                if not fifo:
                    del self._fifos[priority]
                break
        else:
            raise ValueError("not a candidate")
        item.taken = True
        count = self._holding.pop(item.uid) - 1
        if count:
            self._holding[item.uid] = count
        self._latencies.append(max(0.0, item.arrived - item.entered.at))

    def _next(self, heads: list[_Item[T]]) -> _Item[T]:
        """Of the first pod of each priority, the one the queue popped first by the estimate:
        the one seen first, unless one of higher priority entered before that one was
        popped (its outcome seen less the quickest outcome seen lately)."""
        quickest = min(self._latencies, default=0.0)
        first = min(heads, key=lambda item: item.arrived)
        popped = first.arrived - quickest
        before = [h for h in heads if h.priority > first.priority and h.entered.at < popped]
        return max(before, key=lambda item: item.priority) if before else first
