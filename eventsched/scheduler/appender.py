"""The appender: one thread that appends the batches the loop hands it, one at a time.

Encoding a batch and waiting for its COMMIT took a third of the loop thread's busy
time at 5,000 nodes; on this thread the loop decides the next pods meanwhile (the
database wait releases the GIL). The journal hands it a batch only when the one
before is settled, so batches are appended in order and positions, batch numbers
and hashes are what one thread appending them in turn makes. The outcome (the
stored events, or the error) goes back to the loop, through its inbox, as an
`Appended`: the loop folds it, and only then acts on the decisions in it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from eventsched.events import EventRecord, EventStore, EventStoreError, StoredEvent


@dataclass(slots=True)
class Appended:
    """What became of one batch handed to the appender (the loop's inbox carries it)."""

    #: The records handed over: which batch this is.
    records: Sequence[EventRecord]
    #: The records as the log holds them now (empty when the append failed).
    stored: list[StoredEvent]
    #: Why the log could not be written; None when the batch is durable.
    error: EventStoreError | None
    #: Anything else the store raised: re-raised on the loop, as a synchronous append would.
    crash: BaseException | None
    #: How long the append took, encoding included (eventsched_log_append_seconds).
    seconds: float


class BatchAppender:
    """Appends to `store` on a thread of its own; tells `deliver` of each outcome."""

    def __init__(self, store: EventStore, deliver: Callable[[Appended], None]) -> None:
        self.store = store
        self.deliver = deliver
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="appender")

    def submit(self, records: Sequence[EventRecord]) -> Future[Appended]:
        """Append `records` as one batch; the future (and `deliver`) has the outcome."""
        return self._thread.submit(self._append, records)

    def shutdown(self) -> None:
        """Wait for a batch being appended, then end the thread."""
        self._thread.shutdown(wait=True)

    def _append(self, records: Sequence[EventRecord]) -> Appended:
        began = time.perf_counter()
        stored: list[StoredEvent] = []
        error: EventStoreError | None = None
        crash: BaseException | None = None
        try:
            stored = self.store.append_stored(records)
        except EventStoreError as exc:
            error = exc
        except BaseException as exc:  # handed to the loop and raised there
            crash = exc
        done = Appended(records, stored, error, crash, time.perf_counter() - began)
        self.deliver(done)
        return done
