"""The scheduler and its loop: kube-scheduler's `scheduler.go`.

`Scheduler` wires the parts, as kube-scheduler's `New` does, each given what it uses:
`Profiles` (a framework per schedulerName), the `Journal` (the log writer) and the
`ClusterView` it folds into, the `SchedulingQueue` and `QueueMoves`, `EventHandlers`
(cluster changes become events, the view follows them, the queue moves),
`SchedulingCycle` (schedule_one.py), `BindingCycles`, `Failures` and `Attempts`. Then
it runs the loop. Every state change goes through the log first. The loop thread owns
the view and the queue; cluster watchers, binder threads and an extender's HTTP
threads only put messages in the inbox. Each drain of the inbox and each group of
attempts becomes one append, and nothing reaches the cluster before its batch is
durable. The append runs on the appender's thread while the loop decides the next
pods; its outcome (`Appended`) comes back through the inbox.
"""

from __future__ import annotations

import queue as stdqueue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol

import structlog

from eventsched.events import EventStore, EventStoreError, Projections, StoredEvent
from eventsched.framework import Framework, Handle, Profile, Registry
from eventsched.metrics import SchedulerMetrics
from eventsched.model import Pod
from eventsched.model.cache import Cache
from eventsched.scheduler.appender import Appended
from eventsched.scheduler.attempts import Attempts
from eventsched.scheduler.binding import BindingDone, bind_status
from eventsched.scheduler.bindingcycles import BindingCycles
from eventsched.scheduler.eventhandlers import EventHandlers
from eventsched.scheduler.eviction import await_victims, settle_open_preemptions
from eventsched.scheduler.failure import Failures
from eventsched.scheduler.idle import Changes
from eventsched.scheduler.journal import Journal
from eventsched.scheduler.moves import QueueMoves
from eventsched.scheduler.options import SchedulerOptions, Stats
from eventsched.scheduler.ports import Cluster, ClusterChange
from eventsched.scheduler.profiles import Profiles
from eventsched.scheduler.queue import SchedulingQueue
from eventsched.scheduler.reconcile import reconcile_reservations, record_listed, record_start
from eventsched.scheduler.schedule_one import SchedulingCycle
from eventsched.view import ClusterView

__all__ = ["LoopTask", "Scheduler", "SchedulerOptions", "Stats"]

log = structlog.get_logger(__name__)


class LoopTask(Protocol):
    """Work handed to the loop thread by another thread (an extender call), run there in
    inbox order with the cluster's changes and the binding cycles' outcomes."""

    def run(self) -> None: ...


#: What the loop's inbox carries.
Message = ClusterChange | BindingDone | Appended | LoopTask


class Scheduler:
    """The scheduler's parts, wired as kube-scheduler's `New` wires them, and its loop.

    The loop thread owns the view, the queue and the journal; the cluster's watchers,
    the binder threads and an extender's HTTP threads only put messages in the inbox.
    `queue_pending` False: another scheduler decides our profiles' pods (the extender),
    so a pending pod is observed and never queued.
    """

    def __init__(
        self,
        store: EventStore,
        cluster: Cluster,
        profiles: Sequence[Profile],
        registry: Registry,
        options: SchedulerOptions | None = None,
        clock: Callable[[], float] = time.time,
        metrics: SchedulerMetrics | None = None,
        *,
        queue_pending: bool = True,
    ) -> None:
        self.store = store
        self.cluster = cluster
        self.options = options = options or SchedulerOptions()
        self.clock = clock
        self.metrics = metrics
        self.stats = Stats()
        #: Told of the counts after each outcome the cluster hears of (progress bars).
        self.on_progress: Callable[[Stats], None] | None = None
        #: Called with the last position after an append is durable when the view holds
        #: exactly the log up to it, nothing pending (tests compare it with replay's view).
        self.on_durable: Callable[[int], None] | None = None
        #: Called on the loop thread with each cluster change before the event handlers
        #: fold it (the shadow decides a pod there, against the view before its placement);
        #: False: the caller holds the change back and folds it later itself.
        self.before_change: Callable[[ClusterChange], bool] | None = None
        #: The view decisions read: changed only by the events this process adds to the
        #: journal's pending batch, applied as they are added, as replay applies them.
        self.view = ClusterView()
        self.inbox: stdqueue.SimpleQueue[Message] = stdqueue.SimpleQueue()
        self.journal = Journal(
            store,
            self.view,
            options.instance,
            snapshot_every=options.snapshot_every,
            log_retry=options.log_retry,
            deliver=self.inbox.put,
            metrics=metrics,
        )
        self.journal.on_durable = self._appended
        self.handle = Handle(self.view.table, clock=clock)
        self.handle.bind = lambda pod, node: bind_status(cluster.bind(pod, node))
        self.handle.first_placement = self.journal.unfolded.first_node
        self.handle.emit_event = cluster.emit_event
        self.handle.volumes = cluster
        self.profiles = Profiles(profiles, registry, self.handle, metrics)
        self.queue = SchedulingQueue(
            self.profiles.queue_less(),
            pre_enqueue=lambda pod: self.profiles.run_pre_enqueue(pod, self.journal.pending),
            clock=clock,
            initial_backoff=options.initial_backoff,
            max_backoff=options.max_backoff,
            max_unschedulable=options.max_unschedulable,
            observer=metrics,
        )
        self.changes = Changes()
        self.moves = QueueMoves(self.queue, self.journal, self.profiles.plugin_events)
        self.attempts = Attempts(self.journal, self.view, self.profiles.digests, metrics)
        self.failures = Failures(
            self.journal,
            self.view,
            self.queue,
            cluster,
            self.handle,
            self.attempts,
            self.changes,
            self.stats,
            metrics,
            self._progress,
        )
        self.handlers = EventHandlers(
            self.journal,
            self.view,
            self.queue,
            self.moves,
            self.profiles,
            cluster,
            self.handle,
            self.attempts,
            self.failures,
            queue_pending=queue_pending,
        )
        self.binding = BindingCycles(
            self.journal,
            self.queue,
            self.moves,
            self.handlers,
            self.failures,
            self.attempts,
            cluster,
            self.inbox.put,
            workers=options.binder_workers,
            instance=options.instance,
            clock=clock,
            stats=self.stats,
            metrics=metrics,
            progress=self._progress,
        )
        self.cycle = SchedulingCycle(
            self.profiles,
            self.view,
            self.queue,
            self.attempts,
            self.failures,
            self.binding,
            self.changes,
            self.stats,
            metrics,
        )
        if metrics is not None:
            metrics.watch_cache(self.view.cache.sizes)
        self._ready = False

    # -- what drivers and tests read --------------------------------------------

    @property
    def frameworks(self) -> dict[str, Framework]:
        return self.profiles.frameworks

    @property
    def cache(self) -> Cache:
        """Nodes and placed pods as this process's view holds them."""
        return self.view.cache

    @property
    def projections(self) -> Projections:
        """What the durable log says beyond the view (first placements, reservations, ...)."""
        return self.journal.projections

    @property
    def last_failure(self) -> dict[str, tuple[Pod, str]]:
        """Pods whose latest attempt failed, with the message their FailedScheduling carries."""
        return self.failures.last_failure

    @property
    def ignored(self) -> dict[str, tuple[Pod, str]]:
        """Pods that set a field no plugin of their profile honours, with the warning given."""
        return self.handlers.ignored

    @property
    def bindings(self) -> int:
        """Binding cycles (and an extender's Bindings) running."""
        return self.binding.running

    def schedule_one(self) -> bool:
        """One scheduling cycle (SchedulingCycle.schedule_one). False when activeQ is empty."""
        return self.cycle.schedule_one()

    def post(self, task: LoopTask) -> None:
        """From any thread: run `task` on the loop thread, in inbox order."""
        self.inbox.put(task)

    def _progress(self) -> None:
        if self.on_progress is not None:
            self.on_progress(self.stats)

    # -- lifecycle --------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Started, not stopped, and the log writable (readiness probe)."""
        return self._ready and not self.journal.down

    @property
    def log_down(self) -> bool:
        """True while appends fail; scheduling is paused until one succeeds."""
        return self.journal.down

    def start(self, stop: threading.Event | None = None) -> bool:
        """Rebuild state from the log, record the configuration, sync with the cluster.

        The cluster's lists are asked for first: the API server prepares them, and
        its answers are read and decoded, while the log is read. What they deliver
        waits in the inbox until `scheduler_started` is durable.

        False when `stop` was set before the cluster's initial lists arrived.
        """
        self.cluster.start(self.inbox.put)
        self.journal.rebuild()
        self.store.ensure_partitions()
        record_start(self.journal, self.options.instance, self.frameworks, self.profiles.digests)
        self._flush_until_durable()
        if not self._await_lists(stop):
            return False
        record_listed(self.journal)
        reconcile_reservations(self.journal)
        features = {name: fw.profile.features for name, fw in self.frameworks.items()}
        for finished in settle_open_preemptions(
            self.cluster, self.journal, self.handle, self.metrics, features
        ):
            await_victims(finished, self.journal, self.queue, self.moves, self.cluster)
        self._flush_until_durable()
        self._ready = True
        return True

    def _await_lists(self, stop: threading.Event | None) -> bool:
        """Handle what the cluster lists until its lists are in; False if `stop` came first."""
        began, said = time.monotonic(), 0
        while not self.cluster.wait_synced(0.05):
            if stop is not None and stop.is_set():
                return False
            # What is listed so far is handled (gathered, logged if changed) meanwhile.
            self._drain_inbox()
            waited = time.monotonic() - began
            if waited >= 10 * (said + 1):
                said = int(waited // 10)
                log.info("waiting for the cluster's nodes and pods to sync", seconds=round(waited))
        self._drain_inbox()
        return True

    def _resynchronise(self, stop: threading.Event) -> None:
        """The log lost its tail (a failover to a replica that had not received it): do
        what a start does, in this process. The projections are folded again from the
        log as it is; `scheduler_started` and a relist of the cluster make the view what
        the cluster shows, logging as `pod_observed` the placements the lost tail made
        (the log holds no `bound` for them), and reservations the log still holds open are
        settled from the cluster. Binding cycles in flight finish first, so that none is
        settled while its Binding is on the way."""
        waited = time.monotonic() + 10
        while self.bindings and time.monotonic() < waited and not stop.is_set():
            self._wait_for_inbox(0.05)
        self.journal.forget_lost_tail()
        record_start(self.journal, self.options.instance, self.frameworks, self.profiles.digests)
        self.cluster.relist()
        if not self._await_lists(stop):
            return
        record_listed(self.journal)
        reconcile_reservations(self.journal)
        self._flush_until_durable()
        self.journal.tail_lost = None
        log.info("resynchronised with the cluster after the event log lost its tail")

    def stop(self) -> None:
        """Stop taking pods; let binding cycles finish and log them; snapshot."""
        self._ready = False
        self.handle.shutting_down.set()
        self.cluster.stop()
        for waiting in list(self.handle.waiting_pods):
            waiting.reject("", "scheduler is shutting down")
        self._flush_until_durable(attempts=5)
        self.binding.shutdown(wait=True)
        self._drain_inbox()
        self._flush_until_durable(attempts=5)
        self.journal.close()

    def abandon(self) -> None:
        """The lease is lost: stop at once, as kube-scheduler exits at once. No new attempt;
        the decisions pending are appended (one try); binding cycles in flight and queued
        status and Event writes are left behind, as a crash would leave them: the leader
        that follows settles the open reservations from what the API shows. Waiting for
        them could let a late write from this deposed leader land after the new leader's."""
        self._ready = False
        self.binding.abandoned = True
        self.handle.shutting_down.set()
        self.cluster.stop(abandon=True)
        for waiting in list(self.handle.waiting_pods):
            waiting.reject("", "scheduler lost its lease")
        self._flush_until_durable(attempts=1)
        self.binding.shutdown(wait=False)

    # -- the loop ---------------------------------------------------------------

    def run(self, stop: threading.Event | None = None, until_idle: bool = False) -> None:
        """The loop. `until_idle` returns once nothing can be scheduled without a cluster change."""
        stop = stop or threading.Event()
        while not stop.is_set():
            self._drain_inbox()
            self.moves.flush()
            if self.journal.tail_lost is not None:
                try:
                    self._resynchronise(stop)
                except EventStoreError as exc:
                    log.warning("resynchronising failed; will try again", error=str(exc))
                    stop.wait(self.journal.retry_delay())
                continue
            if self.journal.down and not self._flush():
                stop.wait(self.journal.retry_delay())
                continue
            if self.schedule_one():
                if self.cycle.group_full(
                    self.options.group_commit_attempts, self.options.group_commit_wait
                ):
                    self._hand_off()
                continue
            deferred = self._flush_deferred()
            if deferred is not None:
                self._wait_for_inbox(deferred)
                continue
            self._hand_off()
            if until_idle and self._idle():
                return
            self._wait_for_inbox()

    def _flush_deferred(self) -> float | None:
        """How long the idle loop may still wait before appending what is pending; None:
        append now.

        A binding waits for its decision's append, so while a decision waits to be
        bound (`decided`) the append is not put off. Anything else pending (what
        happened, such as `bound` after each Binding and observations, and attempts
        that ended without a node) and what is done once it is durable (PostBind,
        Events, status writes, evictions) joins one group commit, as it does while
        pods are scheduled, for at most `group_commit_wait` from its first record. At
        a client QPS of 50 this made one append per Binding (each a transaction of
        its own) one per group.
        """
        if self.binding.decided or not self.journal.pending:
            return None
        left = self.options.group_commit_wait - self.journal.pending_age()
        return left if left > 0 else None

    def _idle(self) -> bool:
        """Nothing left that could end differently without a change from outside (idle.py)."""
        counts = self.queue.counts()
        if counts["active"] or self.bindings or not self.inbox.empty() or self.journal.unwritten:
            return False
        return self.changes.settled(self.queue.backing_off())

    def _wait_for_inbox(self, at_most: float | None = None) -> None:
        timeout = (
            self.options.idle_wait if at_most is None else min(at_most, self.options.idle_wait)
        )
        wake = self.queue.next_wakeup()
        if wake is not None:
            timeout = max(0.0, min(timeout, wake - self.clock()))
        try:
            item = self.inbox.get(timeout=timeout)
        except stdqueue.Empty:
            return
        self._handle(item)

    def _drain_inbox(self) -> None:
        while True:
            try:
                item = self.inbox.get_nowait()
            except stdqueue.Empty:
                return
            self._handle(item)

    def _handle(self, item: Message) -> None:
        if isinstance(item, ClusterChange):
            self.changes.changed()
            if self.before_change is None or self.before_change(item):
                self.handlers.on_change(item)
        elif isinstance(item, BindingDone):
            self.changes.changed()
            self.binding.done(item)
        elif isinstance(item, Appended):
            self.journal.appended(item)
        else:
            item.run()

    # -- appending --------------------------------------------------------------

    def _flush(self) -> bool:
        """Append what is pending and wait; True when it is durable (or there was nothing)."""
        if not self.journal.flush():
            return False
        self.cycle.group_handed_off()
        return True

    def _hand_off(self) -> None:
        """Give what is pending to the appender (unless a batch is with it or the log is
        down) and go on; the outcome comes back through the inbox."""
        if self.journal.hand_off():
            self.cycle.group_handed_off()

    def _appended(self, stored: Sequence[StoredEvent]) -> None:
        """An append is durable: the decisions in it may act now."""
        self.stats.events += len(stored)
        if self.metrics is not None:
            self.metrics.set_pending(self.queue.counts())
            self.metrics.publish()
        if stored and self.on_durable is not None and not self.journal.pending:
            self.on_durable(stored[-1].position)
        self.binding.start()

    def _flush_until_durable(self, attempts: int | None = None) -> None:
        tries = 0
        while not self._flush():
            tries += 1
            if attempts is not None and tries >= attempts:
                log.error(
                    "giving up writing the event log; undecided work is dropped, nothing was bound",
                    pending_events=self.journal.unwritten,
                    decided=len(self.binding.decided),
                )
                return
            time.sleep(self.journal.retry_delay())
