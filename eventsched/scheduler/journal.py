"""The log writer: one batch at a time, appended on a thread of its own.

While a group of attempts is being appended, the loop schedules the next
group; the decisions of a group start their binding cycles only once that
group is durable, so nothing reaches the cluster before the log has it.
Batches are appended in the order they were made: the next one is handed
over only after the previous one has been taken back.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from eventsched.events import EventRecord, EventStore, StoredEvent
from eventsched.framework import CycleState, Framework, QueuedPodInfo


@dataclass(slots=True)
class Decided:
    """A pod whose scheduling cycle chose a node: its binding cycle waits for the log."""

    fw: Framework
    state: CycleState
    info: QueuedPodInfo
    node: str
    attempt: str
    #: Permit said wait: the binding cycle waits for the verdict first.
    waited: bool


@dataclass(slots=True)
class Appended:
    stored: list[StoredEvent]
    seconds: float


@dataclass(slots=True)
class Append:
    """One batch on its way to the log, with what waits for it to be durable."""

    #: The pending batch's number (UnfoldedPlacements) when it was handed over.
    batch: int
    records: list[EventRecord]
    decided: list[Decided] = field(default_factory=list)
    #: Run on the loop once the batch is durable (Events, conditions, PostBind).
    actions: list[Callable[[], None]] = field(default_factory=list)
    future: Future[Appended] | None = None

    def result(self) -> Appended:
        """The stored events; raises what the append raised (EventStoreError)."""
        assert self.future is not None
        return self.future.result()


class LogWriter:
    def __init__(self, store: EventStore) -> None:
        self._store = store
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="log-writer")
        self._inflight: Append | None = None

    @property
    def busy(self) -> bool:
        return self._inflight is not None

    def submit(self, append: Append) -> None:
        if self._inflight is not None:
            raise RuntimeError("the previous append was not taken back")
        append.future = self._executor.submit(self._append, append.records)
        self._inflight = append

    def take(self, block: bool) -> Append | None:
        """The append in flight once it has finished (waiting for it if `block`), else None."""
        append = self._inflight
        if append is None or append.future is None:
            return None
        if not block and not append.future.done():
            return None
        append.future.exception()  # waits; the caller reads the outcome with result()
        self._inflight = None
        return append

    def shutdown(self) -> None:
        self._executor.shutdown(wait=True)

    def _append(self, records: list[EventRecord]) -> Appended:
        began = time.perf_counter()
        stored = self._store.append_stored(records) if records else []
        return Appended(stored, time.perf_counter() - began)
