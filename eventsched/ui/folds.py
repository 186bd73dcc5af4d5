"""The page's fold of the log (`ViewAt`), shared by its requests one at a time.

A thread folds the log to its head when the server starts, a slice at a time,
then follows the head. A page that needs the fold at a position the thread
has not reached yet waits for it a little (`WAIT` seconds), then, rather than
hang on a big log's first fold (half a minute for a million events), renders
without it and says how far the fold has got. Without the thread (`start` not
called: tests, the benchmark's cold run) a page folds on to its position itself.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import structlog

from eventsched.audit.viewat import FoldError, ViewAt
from eventsched.events.chainwatch import StepThread
from eventsched.events.reader import EventReader

log = structlog.get_logger(__name__)

#: Positions folded per step of the thread (the lock is let go between steps).
STEP = 20_000
#: How long a page waits for the thread to reach the position it needs.
WAIT = 2.0


class SharedFold:
    """One `ViewAt` behind a lock, warmed to the log's head on a thread."""

    def __init__(self, reader: EventReader, interval: float = 2.0) -> None:
        self.reader = reader
        self._views = ViewAt(reader)
        self._lock = threading.Lock()
        self._reached = threading.Condition()
        self._warmed = 0
        self._running = False
        self._thread = StepThread(self.step, interval, "ui-fold")

    @property
    def warmed(self) -> int:
        """How far the thread has folded."""
        return self._warmed

    def start(self) -> None:
        self._running = True
        self._thread.start()

    def stop(self) -> None:
        self._thread.stop()
        self._running = False

    @contextmanager
    def views(self, position: int) -> Iterator[ViewAt | None]:
        """The fold, held until the block ends; None when the thread is still short of
        `position` after WAIT seconds."""
        with self._reached:
            ready = self._reached.wait_for(
                lambda: not self._running or self._warmed >= position, timeout=WAIT
            )
        if not ready:
            yield None
            return
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
            try:
                self._views.at(target)
            except FoldError as exc:
                # Pages fold on their own from here, and each says why it has no numbers.
                log.warning("the page's fold of the log stopped", error=str(exc))
                with self._reached:
                    self._running = False
                    self._reached.notify_all()
                return False
        with self._reached:
            self._warmed = target
            self._reached.notify_all()
        return target < head
