"""The log writer: the pending batch, group commit, an in-doubt append settled, snapshots.

Everything the scheduler decides or observes joins the pending batch and is
applied to its view at once (`ClusterView.apply`, the fold replay uses); the
batch is appended as one transaction, and only then folded into the
projections and acted on. An append whose COMMIT went unanswered is settled
(committed or not) before anything is appended again, so no event is ever
written twice.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import structlog

from eventsched.events import (
    AppendInDoubtError,
    EventRecord,
    EventStore,
    EventStoreError,
    LogTailLostError,
    Projections,
    StoredEvent,
    rebuild_counted,
    save_snapshot,
)
from eventsched.metrics import SchedulerMetrics
from eventsched.scheduler.appender import Appended, BatchAppender
from eventsched.scheduler.batch import Batch
from eventsched.scheduler.unfolded import UnfoldedPlacements
from eventsched.view import FOLDED_KINDS, ClusterView

log = structlog.get_logger(__name__)

#: Longest wait between two tries while the log cannot be written: a database back
#: (a standby promoted) is written again within this much.
MAX_RETRY = 4.0


@dataclass(slots=True)
class Sealed:
    """A batch taken from pending to be appended: kept until it is durable."""

    records: list[EventRecord]
    #: What runs once the batch is durable (`Journal.after`).
    actions: list[Callable[[], None]]
    #: The overlay's number of the last pending batch taken into it (UnfoldedPlacements).
    number: int
    #: When its oldest record joined the pending batch (eventsched_log_lag_seconds).
    first_added: float | None


class Journal:
    def __init__(
        self,
        store: EventStore,
        view: ClusterView,
        instance: str,
        *,
        snapshot_every: int,
        log_retry: float,
        deliver: Callable[[Appended], None],
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        self.store = store
        self.view = view
        self.instance = instance
        self.snapshot_every = snapshot_every
        self.metrics = metrics
        #: What the durable log says beyond the view: first placements, open
        #: reservations, backoff, last observations (folded once appended).
        self.projections = Projections()
        #: First placements as the pending events will make them (StickyNode reads them).
        self.unfolded = UnfoldedPlacements(lambda identity: self.projections.first_node(identity))
        #: When the oldest record of the pending batch was added (eventsched_log_lag_seconds).
        self._first_added: float | None = None
        self.pending = self._new_batch()
        #: True while appends fail; the scheduler stops scheduling until one succeeds.
        self.down = False
        #: Called after each successful flush with the events it appended (durable and
        #: folded), which may be none when a settled in-doubt append already held them.
        self.on_durable: Callable[[Sequence[StoredEvent]], None] | None = None
        self._first_retry = log_retry
        self._retry = log_retry
        #: An append whose COMMIT went unanswered: settled before anything is appended again.
        self._in_doubt: AppendInDoubtError | None = None
        #: The log lost what this process appended last (a failover): the scheduler
        #: resynchronises (`forget_lost_tail`, then a relist) and clears it.
        self.tail_lost: LogTailLostError | None = None
        self._actions: list[Callable[[], None]] = []
        #: A batch taken from pending and not durable yet: with the appender, or to be
        #: retried (with what is pending then) after its append failed.
        self._sealed: Sealed | None = None
        #: The sealed batch's append on the appender's thread, until its outcome is taken.
        self._appending: Future[Appended] | None = None
        self._appender = BatchAppender(store, deliver)
        #: The number of the last batch that is durable (`batch` when its records joined).
        self.durable_batch = 0
        self._since_snapshot = 0
        self._snapshotter = ThreadPoolExecutor(1, thread_name_prefix="snapshot")
        self._snapshot_writing: Future[None] | None = None

    # -- starting and stopping -------------------------------------------------------

    def rebuild(self) -> None:
        """The projections from the last snapshot and the events after it."""
        started = time.monotonic()
        self.projections, folded = rebuild_counted(self.store)
        log.info(
            "state rebuilt from the log",
            position=self.projections.position,
            first_placements=len(self.projections.first_placements),
            open_reservations=len(self.projections.open_reservations),
            backoff=len(self.projections.backoff),
            seconds=round(time.monotonic() - started, 3),
        )
        if folded >= self.snapshot_every:
            # A process that died before its first snapshot left this much to fold
            # again; snapshot now so the next start does not fold it a third time.
            self._write_snapshot(self.projections)

    def close(self) -> None:
        """Wait for a snapshot being written, then save the last one."""
        self._appender.shutdown()
        self._snapshotter.shutdown(wait=True)
        try:
            save_snapshot(self.store, self.projections)
        except EventStoreError as exc:
            log.warning("could not save a snapshot on shutdown", error=str(exc))

    # -- appending -------------------------------------------------------------------

    def _new_batch(self) -> Batch:
        self.unfolded.new_batch()
        return Batch(self.instance, observer=self._added)

    def _added(self, record: EventRecord) -> None:
        """An event joined the pending batch: the view and the sticky overlay follow it now,
        so the next decision sees it, by the same fold replay applies it with."""
        if self._first_added is None:
            self._first_added = time.perf_counter()
        kind = record.kind
        if kind in FOLDED_KINDS:  # most of an attempt's records change nothing here
            self.view.apply(record)
            if kind in UnfoldedPlacements.KINDS:
                self.unfolded.note(record)

    @property
    def batch(self) -> int:
        """The number of the batch records join now: durable once `durable_batch` reaches it."""
        return self.unfolded.batch

    @property
    def appending(self) -> bool:
        """A batch is with the appender."""
        return self._appending is not None

    @property
    def unwritten(self) -> int:
        """Records not durable yet: pending, with the appender, or to be appended again."""
        sealed = self._sealed
        return len(self.pending) + (len(sealed.records) if sealed is not None else 0)

    def hand_off(self) -> bool:
        """Give what is pending to the appender and return at once; True if it was given.

        Its outcome comes to `appended` (through the loop's inbox). Nothing is given while
        a batch is with the appender (the next waits for it) or one failed (`flush`
        retries it, settling an in-doubt append first).
        """
        if not self.pending or self._sealed is not None or self.down or self.tail_lost is not None:
            return False
        sealed = self._seal()
        self._appending = self._appender.submit(sealed.records)
        return True

    def appended(self, done: Appended) -> None:
        """On the loop: the appender's outcome. One `flush` already took is ignored."""
        sealed = self._sealed
        if self._appending is None or sealed is None or done.records is not sealed.records:
            return
        self._appending = None
        self._outcome(sealed, done)

    def flush(self) -> bool:
        """Append what is pending and wait; True when it is durable (or there was nothing).

        A batch with the appender is waited for first (False if it failed).
        """
        if self._appending is not None:
            done = self._appending.result()
            self._appending = None
            assert self._sealed is not None  # set while a batch is with the appender
            if not self._outcome(self._sealed, done):
                return False
        if not self.pending and self._sealed is None:
            return True
        sealed = self._seal()
        began = time.perf_counter()
        try:
            if self._in_doubt is not None:
                self._settle_in_doubt(self._in_doubt, sealed)
            stored = self.store.append_stored(sealed.records) if sealed.records else []
        except EventStoreError as exc:
            return self._failed(exc)
        return self._durable(sealed, stored, time.perf_counter() - began)

    def _seal(self) -> Sealed:
        """Take what is pending to append it: after a batch that failed, as its tail."""
        sealed = self._sealed
        if sealed is None:
            sealed = Sealed(self.pending.records, self._actions, self.batch, self._first_added)
            self._sealed = sealed
        else:
            sealed.records.extend(self.pending.records)
            sealed.actions.extend(self._actions)
            sealed.number = self.batch
        self.pending = self._new_batch()
        self._actions = []
        self._first_added = None
        return sealed

    def _outcome(self, sealed: Sealed, done: Appended) -> bool:
        if done.crash is not None:
            raise done.crash
        if done.error is not None:
            return self._failed(done.error)
        return self._durable(sealed, done.stored, done.seconds)

    def _failed(self, exc: EventStoreError) -> bool:
        """The sealed batch was not appended: it stays sealed, to be appended again."""
        if isinstance(exc, LogTailLostError):
            if self.tail_lost is None:
                self._said_tail_lost(exc)
            self.tail_lost = exc
            return False
        if isinstance(exc, AppendInDoubtError):
            self._in_doubt = exc
        if self.metrics is not None:
            self.metrics.log_append_failures.inc()
            self.metrics.log_unreachable.set(1)
        self.down = True
        log.error("cannot write the event log; scheduling paused", error=str(exc))
        return False

    def _durable(self, sealed: Sealed, stored: Sequence[StoredEvent], seconds: float) -> bool:
        """The sealed batch is in the log: fold it, then act on it."""
        if self.down:
            log.info("event log writable again; scheduling resumes")
            self.down = False
        self._sealed = None
        self._retry = self._first_retry
        if self.metrics is not None:
            self._observe_append(stored, seconds, sealed.first_added)
        self._fold(stored)
        self.unfolded.folded(sealed.number)
        self.durable_batch = sealed.number
        if self.on_durable is not None:
            self.on_durable(stored)  # even empty: a settled in-doubt append held them all
        for action in sealed.actions:
            try:
                action()
            except Exception:
                log.exception("action after append failed")
        return True

    def _said_tail_lost(self, exc: LogTailLostError) -> None:
        log.error(
            "event log tail lost after a database failover; resynchronising with the cluster",
            appended_batch=exc.appended.batch,
            appended_position=exc.appended.position,
            appended_hash=exc.appended.hash,
            log_batch=exc.head.batch,
            log_position=exc.head.position,
            lost_events=max(0, exc.appended.position - exc.head.position),
            url=exc.url,
        )
        if self.metrics is not None:
            self.metrics.log_append_failures.inc()

    def forget_lost_tail(self) -> None:
        """Take the log as it is now: the projections are folded again from it (what the
        lost tail folded into them is gone with it), and appends continue after its head.

        A snapshot written past the head (before the failover, on the old primary, or
        replicated ahead of nothing) would bring the lost state back: those are dropped.
        """
        self._snapshotter.submit(lambda: None).result()  # the one being written, if any
        head = self.store.last_position()
        self.store.drop_snapshots_after(head)
        self.store.appender.appended = None
        self.rebuild()
        self._since_snapshot = 0

    def pending_age(self) -> float:
        """Seconds since the oldest pending record joined the batch (0 when none is)."""
        first = self._first_added
        return 0.0 if first is None else time.perf_counter() - first

    def after(self, action: Callable[[], None]) -> None:
        """Run `action` once what is pending now is durable (tell the cluster only then)."""
        self._actions.append(action)

    def retry_delay(self) -> float:
        """How long to wait before the next try: doubles up to MAX_RETRY while appends fail."""
        delay = self._retry
        self._retry = min(self._retry * 2, MAX_RETRY)
        return delay

    def _settle_in_doubt(self, doubt: AppendInDoubtError, sealed: Sealed) -> None:
        """Find out whether the unanswered append was committed, so it is never appended twice.

        Raises EventStoreError while the database still does not answer. If
        it was committed, its records (the head of the sealed batch: what
        joined it since is at the end) are durable: fold them and drop them
        from it. The decisions among them start their binding cycles with the
        rest of the batch, once that is appended too.
        """
        committed = self.store.batch_committed(doubt.batch, doubt.batch_hash)
        self._in_doubt = None
        if not committed:
            log.info("the unanswered append was not committed; appending it again")
            return
        log.warning(
            "the unanswered append was committed; not appending it again",
            batch=doubt.batch,
            events=len(doubt.stored),
        )
        del sealed.records[: len(doubt.stored)]
        self._fold(doubt.stored)

    def _observe_append(
        self, stored: Sequence[StoredEvent], seconds: float, first_added: float | None
    ) -> None:
        metrics = self.metrics
        assert metrics is not None
        metrics.log_append_duration.observe(seconds)
        metrics.log_batch_events.observe(len(stored))
        metrics.log_unreachable.set(0)
        if first_added is not None:
            metrics.log_lag.observe(time.perf_counter() - first_added)
        metrics.log_bytes.inc(sum(len(event.data_json or "") for event in stored))
        for kind, count in Counter(event.kind for event in stored).items():
            metrics.child(metrics.log_events, kind).inc(count)

    # -- folding and snapshots -------------------------------------------------------

    def _fold(self, stored: Sequence[StoredEvent]) -> None:
        if stored and stored[0].position > self.projections.position + 1:
            self._fold_others(stored[0].position - 1)
        self.projections.apply_all(stored)
        self._since_snapshot += len(stored)
        if self._since_snapshot >= self.snapshot_every:
            self._save_snapshot()

    def _fold_others(self, until: int) -> None:
        """Fold what other writers appended since our last batch (`sticky forget`, a former leader).

        Skipping them would lose them for good: the next snapshot would be
        taken past their positions.
        """
        try:
            for event in self.store.read(after=self.projections.position, until=until):
                self.view.apply(event)
                self.projections.apply(event)
        except EventStoreError as exc:
            log.warning("could not read events appended by others", error=str(exc))

    def _save_snapshot(self) -> None:
        """Write a snapshot of the projections as they are now, off the loop.

        Packing a million first placements and writing them takes seconds;
        the loop only copies what changed since the last load (the overlay)
        and goes on. If the previous snapshot is still being written this
        one is skipped: the next interval writes a newer one.
        """
        self._since_snapshot = 0
        if self._snapshot_writing is not None and not self._snapshot_writing.done():
            return
        self._snapshot_writing = self._snapshotter.submit(
            self._write_snapshot_and_partitions, self.projections.copy()
        )

    def _write_snapshot_and_partitions(self, projections: Projections) -> None:
        self._write_snapshot(projections)
        # Days ahead for the log, off the loop too: making one may wait for readers.
        self.store.ensure_partitions()

    def _write_snapshot(self, projections: Projections) -> None:
        try:
            save_snapshot(self.store, projections)
        except EventStoreError as exc:
            log.warning("snapshot failed; will try again later", error=str(exc))
