"""The hash chain verified while `eventsched run` runs, a little at a time.

`eventsched replay` verifies the whole chain, reading the whole log. A running scheduler
instead verifies, every `interval` seconds on a daemon thread, the batches appended
since its last check (by itself or by any other writer), starting from the head it found
when it started: what was there before is `replay`'s to audit. A check verifies whole
batches up to `max_events` events (MAX_EVENTS: about a quarter of a second of CPU), so
the watch costs little however fast the log grows; when appends outpace it, it falls
behind (`eventsched_log_chain_verified_position` against the log's head) and catches up
when they slow down. A batch whose events, hash
or link to the previous batch do not verify (an event edited, deleted or inserted after it
was appended) is reported once, with the first broken batch, and the watch stays on it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from eventsched.events.chain import ChainPoint, ChainReport
from eventsched.events.errors import EventStoreError
from eventsched.events.reader import EventReader

log = structlog.get_logger(__name__)

#: Events one check verifies at most (about 22 us each on a 2-core machine).
MAX_EVENTS = 10_000


@dataclass(frozen=True, slots=True)
class ChainCheck:
    """One check: `ok`, `broken` (see `report`) or `error` (the database did not answer)."""

    result: str
    reached: ChainPoint
    report: ChainReport | None = None


class StepThread:
    """A daemon thread that calls `step` until stopped: again at once while `step` says
    there is more to verify, else after `interval` seconds. The running scheduler's watch
    and the web page's chain check each run on one."""

    def __init__(self, step: Callable[[], bool], interval: float, name: str) -> None:
        self.step = step
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.is_set():
            if not self.step():
                self._stop.wait(self.interval)


class ChainWatch:
    """The running scheduler's check of what was appended since its last check."""

    def __init__(
        self,
        reader: EventReader,
        interval: float,
        on_check: Callable[[ChainCheck], None] | None = None,
        max_events: int = MAX_EVENTS,
    ) -> None:
        self.reader = reader
        self.max_events = max_events
        self.on_check = on_check
        self.point: ChainPoint | None = None
        self.broken: ChainReport | None = None
        self._thread = StepThread(self.step, interval, "chain-watch")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._thread.stop()

    def check(self) -> ChainCheck:
        """Verify what was appended since the last check (the first finds the head)."""
        try:
            if self.point is None:
                self.point = self.reader.chain_head()
                return self._told(ChainCheck("ok", self.point))
            report, reached = self.reader.verify_chain_since(self.point, self.max_events)
        except EventStoreError as exc:
            log.warning("could not verify the hash chain; retrying later", error=str(exc))
            return self._told(ChainCheck("error", self.point or ChainPoint()))
        if not report.ok:
            if self.broken is None:
                log.error(
                    "hash chain broken",
                    first_broken_batch=report.first_broken_batch,
                    detail=report.detail,
                )
            self.broken = report
            return self._told(ChainCheck("broken", reached, report))
        self.point = reached
        return self._told(ChainCheck("ok", reached, report))

    def _told(self, check: ChainCheck) -> ChainCheck:
        if self.on_check is not None:
            self.on_check(check)
        return check

    def step(self) -> bool:
        """One check per interval, however far behind it is (a check costs at most
        max_events events)."""
        self.check()
        return False
