"""The page's fold of the log (`ViewAt`), shared by its requests one at a time.

A thread folds the log to its head when the server starts, a slice at a
time, so that the checkpoints are there before the first page asks; a page
that asks for a position the thread has not reached folds on to it itself
(under the same lock, so the work is done once).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from eventsched.audit.viewat import ViewAt
from eventsched.events.chainwatch import StepThread
from eventsched.events.reader import EventReader

#: Positions folded per step of the warming thread (the lock is let go between steps).
STEP = 20_000


class SharedFold:
    """One `ViewAt` behind a lock, warmed to the log's head on a thread."""

    def __init__(self, reader: EventReader, interval: float = 10.0) -> None:
        self.reader = reader
        self._views = ViewAt(reader)
        self._lock = threading.Lock()
        self._warmed = 0
        self._thread = StepThread(self.step, interval, "ui-fold")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._thread.stop()

    @contextmanager
    def views(self) -> Iterator[ViewAt]:
        """The fold, held for the caller until the block ends."""
        with self._lock:
            yield self._views

    def step(self) -> bool:
        """Fold one slice further towards the head; True while there is more."""
        try:
            head = self.reader.last_position()
        except Exception:  # the database is down: the pages say so, the thread retries
            return False
        if self._warmed >= head:
            return False
        target = min(head, self._warmed + STEP)
        with self._lock:
            self._views.at(target)
        self._warmed = target
        return target < head
