"""The cluster and the queue as the log had them at a position: what a decision saw.

`ViewAt.at(position)` folds the events up to and including `position` onto the
log's base with the very fold the scheduler keeps its own view with
(`ClusterView.apply`), plus the queue's events (`QueueBook`). Only the kinds
that change either are read. Folding a big log takes a while (reading and
decoding is most of it: about 35 µs an event folded on PostgreSQL here), so
the folder keeps what makes the next answer short:

- checkpoints: the view's saved form (`ClusterView.to_state`, as compact JSON
  bytes, so that they weigh on neither memory nor the garbage collector) every
  `checkpoint_every` events folded;
- a few live folds (cursors), the most recently used: a position asked again
  costs nothing, a later one folds on from the nearest cursor or checkpoint.

One `ViewAt` serves one thread at a time (the web page holds it under a lock):
the view `at` returns is the folder's own, valid until the next call, and must
not be changed.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from eventsched.audit.base import loaded
from eventsched.audit.queuebook import QUEUE_KINDS, QueueBook
from eventsched.events.reader import EventReader
from eventsched.events.retention import read_base
from eventsched.view import FOLDED_KINDS, ClusterView

#: Every kind the folder reads.
READ_KINDS = frozenset(FOLDED_KINDS | QUEUE_KINDS)
#: Live folds kept (each a whole view).
CURSORS = 3


class FoldError(ValueError):
    """An event the fold cannot apply (a record missing what the fold reads)."""


@dataclass(slots=True)
class Folded:
    """The view and the queue after the event at `position` (and every one before it)."""

    position: int
    view: ClusterView
    queue: QueueBook


@dataclass(frozen=True, slots=True)
class _Checkpoint:
    position: int
    state: bytes
    queue: QueueBook

    def restored(self) -> Folded:
        view = ClusterView.from_state(orjson.loads(self.state))
        return Folded(self.position, view, self.queue.copy())


class ViewAt:
    """Folds the log to any position, keeping checkpoints so that the next fold is short."""

    def __init__(
        self,
        reader: EventReader,
        checkpoint_every: int = 10_000,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.reader = reader
        self.checkpoint_every = checkpoint_every
        #: Told (position reached, position wanted) while folding.
        self.progress = progress
        self._cursors: list[Folded] = []
        self._checkpoints: list[_Checkpoint] = []

    @property
    def folded_to(self) -> int:
        """The furthest position any fold has reached."""
        return max((c.position for c in self._cursors), default=0)

    def at(self, position: int) -> Folded:
        """The view after the event at `position`: what an attempt starting just after saw."""
        return self._fold(self._start_for(position), position)

    def _start_for(self, position: int) -> Folded:
        """The nearest fold at or before `position`: a cursor, else a checkpoint restored."""
        usable = [c for c in self._cursors if c.position <= position]
        cursor = max(usable, key=lambda c: c.position, default=None)
        keys = [c.position for c in self._checkpoints]
        i = bisect.bisect_right(keys, position) - 1
        point = self._checkpoints[i] if i >= 0 else None
        if cursor is not None and (point is None or point.position <= cursor.position):
            self._cursors.remove(cursor)
        else:
            cursor = point.restored() if point is not None else self._from_base()
            if len(self._cursors) >= CURSORS:
                self._cursors.pop(0)  # the least recently used
        self._cursors.append(cursor)
        return cursor

    def _from_base(self) -> Folded:
        base = read_base(self.reader)
        view, _ = loaded(base)
        return Folded(base.position if base is not None else 0, view, QueueBook())

    def _fold(self, folded: Folded, position: int) -> Folded:
        since_checkpoint = 0
        for event in self.reader.read(after=folded.position, until=position, kinds=READ_KINDS):
            try:
                folded.view.apply(event)
                folded.queue.apply(event)
            except (KeyError, TypeError, ValueError) as exc:
                self._cursors.remove(folded)  # half-applied: never reused
                raise FoldError(
                    f"the log's {event.kind} at position {event.position} cannot be folded "
                    f"({type(exc).__name__}: {exc})"
                ) from exc
            folded.position = event.position
            since_checkpoint += 1
            if since_checkpoint >= self.checkpoint_every:
                since_checkpoint = 0
                self._checkpoint(folded)
                if self.progress is not None:
                    self.progress(event.position, position)
        folded.position = max(folded.position, position)
        return folded

    def _checkpoint(self, folded: Folded) -> None:
        if self._checkpoints and self._checkpoints[-1].position >= folded.position:
            return
        state = orjson.dumps(folded.view.to_state())
        self._checkpoints.append(_Checkpoint(folded.position, state, folded.queue.copy()))
