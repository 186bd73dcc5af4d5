"""The hash chain's status for the overview, verified on a thread a little at a time.

The first pass starts at the log's base (genesis, or a pruned log's last dropped
batch) and verifies up to MAX_EVENTS events per step until it reaches the head;
after that it verifies what was appended since, every `interval` seconds. A page
never waits for it: it shows how far the check got.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from eventsched.events.chain import ChainPoint
from eventsched.events.chainwatch import MAX_EVENTS, StepThread
from eventsched.events.reader import EventReader
from eventsched.events.retention import read_base


@dataclass(frozen=True, slots=True)
class ChainStatus:
    #: "checking" (not at the head yet), "ok", "broken" or "unavailable".
    state: str
    verified_position: int
    head_position: int
    detail: str = ""
    #: The first batch that does not verify (state "broken").
    broken_batch: int | None = None


class ChainChecker:
    """The overview's check of the whole chain, a slice a step, on its own thread."""

    def __init__(self, reader: EventReader, interval: float = 10.0) -> None:
        self.reader = reader
        self._point: ChainPoint | None = None
        self._status = ChainStatus("checking", 0, 0)
        self._lock = threading.Lock()
        self._thread = StepThread(self.step, interval, "ui-chain")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._thread.stop()

    @property
    def status(self) -> ChainStatus:
        with self._lock:
            return self._status

    def _set(self, status: ChainStatus) -> None:
        with self._lock:
            self._status = status

    def step(self) -> bool:
        """Verify one slice; True when there is more to verify right away (never once the
        chain is found broken: the status stays on the first broken batch)."""
        if self.status.state == "broken":
            return False
        try:
            if self._point is None:
                base = read_base(self.reader)
                self._point = (
                    ChainPoint(base.batch, base.position, base.hash) if base else ChainPoint()
                )
            head = self.reader.last_position()
            if self._point.position >= head:
                self._set(ChainStatus("ok", self._point.position, head))
                return False
            report, reached = self.reader.verify_chain_since(self._point, MAX_EVENTS)
        except Exception as exc:  # the database is down or refuses: say so, retry later
            text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self._set(ChainStatus("unavailable", self._verified(), 0, text))
            return False
        if not report.ok:
            # report.events: the events of the batches that verified before the broken one.
            self._set(
                ChainStatus(
                    "broken",
                    self._point.position + report.events,
                    head,
                    f"batch {report.first_broken_batch}: {report.detail}",
                    report.first_broken_batch,
                )
            )
            return False
        self._point = reached
        more = reached.position < head and report.events > 0
        self._set(ChainStatus("checking" if more else "ok", reached.position, head))
        return more

    def _verified(self) -> int:
        return self._point.position if self._point is not None else 0
