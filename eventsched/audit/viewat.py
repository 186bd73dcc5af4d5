"""The cluster and the queue as the log had them at a position: what a decision saw.

`ViewAt.at(position)` folds the events up to and including `position` onto the
log's base with the very fold the scheduler keeps its own view with
(`ClusterView.apply`), plus the queue's events (`QueueBook`). Only the kinds
that change either are read. Folding a big log is seconds (about 20 µs an
event folded), so the folder keeps checkpoints: the saved form of the view
every `checkpoint_every` events folded, and the view it folded last. A later
position folds on from the last view; an earlier one from the nearest
checkpoint before it. One `ViewAt` serves one thread at a time (the web page
holds it under a lock): the view `at` returns is the folder's own, valid until
the next call, and must not be changed.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eventsched.audit.base import loaded
from eventsched.audit.queuebook import QUEUE_KINDS, QueueBook
from eventsched.events.reader import EventReader
from eventsched.events.retention import read_base
from eventsched.view import FOLDED_KINDS, ClusterView

#: Every kind the folder reads.
READ_KINDS = frozenset(FOLDED_KINDS | QUEUE_KINDS)


@dataclass(slots=True)
class Folded:
    """The view and the queue after the event at `position` (and every one before it)."""

    position: int
    view: ClusterView
    queue: QueueBook


@dataclass(frozen=True, slots=True)
class _Checkpoint:
    position: int
    state: dict[str, Any]
    queue: QueueBook


class ViewAt:
    """Folds the log to any position, keeping checkpoints so that the next fold is short."""

    def __init__(
        self,
        reader: EventReader,
        checkpoint_every: int = 5_000,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.reader = reader
        self.checkpoint_every = checkpoint_every
        #: Told (position reached, position wanted) while folding.
        self.progress = progress
        self._base_position = -1
        self._last: Folded | None = None
        self._checkpoints: list[_Checkpoint] = []

    def at(self, position: int) -> Folded:
        """The view after the event at `position`: what an attempt starting just after saw."""
        start = self._start_for(position)
        return self._fold(start, position)

    def _start_for(self, position: int) -> Folded:
        """The nearest fold at or before `position`: the last view or a checkpoint."""
        last = self._last
        keys = [c.position for c in self._checkpoints]
        i = bisect.bisect_right(keys, position) - 1
        point = self._checkpoints[i] if i >= 0 else None
        last_fits = last is not None and last.position <= position
        if last is not None and last_fits and (point is None or point.position <= last.position):
            return last
        if point is not None:
            return Folded(point.position, ClusterView.from_state(point.state), point.queue.copy())
        return self._from_base()

    def _from_base(self) -> Folded:
        base = read_base(self.reader)
        view, _ = loaded(base)
        self._base_position = base.position if base is not None else 0
        return Folded(self._base_position, view, QueueBook())

    def _fold(self, folded: Folded, position: int) -> Folded:
        since_checkpoint = 0
        for event in self.reader.read(after=folded.position, until=position, kinds=READ_KINDS):
            folded.view.apply(event)
            folded.queue.apply(event)
            folded.position = event.position
            since_checkpoint += 1
            if since_checkpoint >= self.checkpoint_every:
                since_checkpoint = 0
                self._checkpoint(folded)
                if self.progress is not None:
                    self.progress(event.position, position)
        folded.position = max(folded.position, position)
        self._last = folded
        return folded

    def _checkpoint(self, folded: Folded) -> None:
        if self._checkpoints and self._checkpoints[-1].position >= folded.position:
            return
        self._checkpoints.append(
            _Checkpoint(folded.position, folded.view.to_state(), folded.queue.copy())
        )
