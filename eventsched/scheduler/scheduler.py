"""The scheduler and its loop: kube-scheduler's `scheduler.go`.

The parts, as kube-scheduler lays them out: `eventhandlers` (cluster changes
become events, the view follows them, the queue moves), `schedule_one` (the
scheduling and binding cycles), `journal` (the pending batch, group commit,
in-doubt appends, snapshots), `reconcile` (what a starting process logs).
Every state change goes through the log first. The loop thread owns the view
and the queue; cluster watchers and binder threads only put messages in the
inbox. Each drain of the inbox and each group of attempts becomes one append,
and nothing reaches the cluster before its batch is durable.
"""

from __future__ import annotations

import queue as stdqueue
import random
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import structlog

from eventsched.config import profile_digest
from eventsched.events import EventStore, StoredEvent
from eventsched.framework import Framework, FrameworkObservers, Handle, Profile, Registry
from eventsched.model import Node, Pod
from eventsched.scheduler.binding import BindingDone
from eventsched.scheduler.journal import Journal
from eventsched.scheduler.metrics import SchedulerMetrics
from eventsched.scheduler.options import SchedulerOptions, Stats
from eventsched.scheduler.ports import Cluster, ClusterChange
from eventsched.scheduler.preemption import Finished, settle_open_preemptions
from eventsched.scheduler.queue import SchedulingQueue
from eventsched.scheduler.reconcile import reconcile_reservations, record_listed, record_start
from eventsched.scheduler.schedule_one import SchedulingCycle
from eventsched.view import ClusterView

__all__ = ["Scheduler", "SchedulerOptions", "Stats"]

log = structlog.get_logger(__name__)


class Scheduler(SchedulingCycle):
    def __init__(
        self,
        store: EventStore,
        cluster: Cluster,
        profiles: Sequence[Profile],
        registry: Registry,
        options: SchedulerOptions | None = None,
        clock: Callable[[], float] = time.time,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        if not profiles:
            raise ValueError("at least one profile is needed")
        self.store = store
        self.cluster = cluster
        self.options = options or SchedulerOptions()
        self.clock = clock
        self.metrics = metrics
        #: The view decisions read: changed only by the events this process adds to the
        #: journal's pending batch, applied as they are added, as replay applies them.
        self.view = ClusterView()
        self.journal = Journal(
            store,
            self.view,
            self.options.instance,
            snapshot_every=self.options.snapshot_every,
            log_retry=self.options.log_retry,
            metrics=metrics,
        )
        self.journal.on_durable = self._appended
        self.handle = Handle(self.view.table, clock=clock)
        self.handle.bind = self._bind_via_cluster
        self.handle.first_placement = self.journal.unfolded.first_node
        self.handle.emit_event = cluster.emit_event
        self.handle.volumes = cluster
        observers = (
            FrameworkObservers(
                observe=metrics.observe_extension_point,
                observe_permit_wait=metrics.permit_waited,
                plugin_metrics=metrics,
            )
            if metrics is not None
            else None
        )
        self.frameworks = {
            p.scheduler_name: Framework(p, registry, self.handle, observers) for p in profiles
        }
        self.digests = {name: profile_digest(fw.profile) for name, fw in self.frameworks.items()}
        self.annotation_keys = frozenset().union(
            *(fw.annotations_read() for fw in self.frameworks.values())
        )
        if metrics is not None:
            metrics.watch_cache(self.view.cache.sizes)
        self.queue = self._new_queue()
        self.plugin_events = {}
        for fw in self.frameworks.values():
            self.plugin_events.update(fw.events_to_register())
        self.inbox = stdqueue.SimpleQueue()
        self.binder = ThreadPoolExecutor(self.options.binder_workers, thread_name_prefix="binder")
        self.rng = random.Random(secrets.randbits(64))
        #: Which cycles time their plugins (not `rng`, whose draws are the attempts' seeds).
        self.sampling = random.Random(secrets.randbits(64))
        self.stats = Stats()
        self.next_start_index = 0
        self.bindings = 0
        self.decided = []
        self.group_attempts = 0
        self.group_started = 0.0
        self.changes = 0
        self.failed_at = {}
        self.attempt_began = {}
        self.held_observations = {}
        self.abandoned = False
        self.deleted_in_flight = set()
        self.last_failure = {}
        self.ignored = {}
        self.on_progress = None
        #: Called with the last position after each append is durable, when the view holds
        #: exactly the log up to it (tests compare it with replay's view there).
        self.on_durable: Callable[[int], None] | None = None
        self._ready = False

    def _new_queue(self) -> SchedulingQueue:
        sorts = {fw.profile.at("queueSort") for fw in self.frameworks.values()}
        if len(sorts) > 1:
            raise ValueError(
                "all profiles must use the same queueSort plugin (as kube-scheduler requires)"
            )
        first = next(iter(self.frameworks.values()))
        queue = SchedulingQueue(
            first.queue_less,
            pre_enqueue=self._pre_enqueue,
            clock=self.clock,
            initial_backoff=self.options.initial_backoff,
            max_backoff=self.options.max_backoff,
            max_unschedulable=self.options.max_unschedulable,
        )
        queue.observer = self.metrics
        return queue

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
        record_start(self.journal, self.options.instance, self.frameworks, self.digests)
        self._flush_until_durable()
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
        record_listed(self.journal)
        reconcile_reservations(self.journal)
        for finished in settle_open_preemptions(
            self.cluster, self.journal, self.handle, self.metrics
        ):
            self._await_victims(finished)
        self._flush_until_durable()
        self._ready = True
        return True

    def _await_victims(self, finished: Finished) -> None:
        """The preemptor of a preemption finished at start waits where its attempt's failure
        put it: in the unschedulable pool until an event its rejecting plugins registered
        for (its victims' deletion, once the watch shows it), and nominated to the node.
        Tried at once instead, it would find its victims still in the view and preempt
        them again. The failure's report, which the previous process may not have lived
        to write, is written (PodScheduled=False, status.nominatedNodeName)."""
        failure = next(
            (e for e in self.store.read_attempt(finished.attempt) if e.kind == "unschedulable"),
            None,
        )
        if failure is None:
            return
        pod = finished.preemptor
        move = self.queue.park(pod.uid, failure.data.get("plugins") or ())
        if move is not None:
            self._record_moves([move])
        message = str(failure.data.get("message", ""))
        self.journal.after(lambda: self.cluster.set_unschedulable(pod, message, finished.node))

    def stop(self) -> None:
        """Stop taking pods; let binding cycles finish and log them; snapshot."""
        self._ready = False
        self.handle.shutting_down.set()
        self.cluster.stop()
        for waiting in list(self.handle.waiting_pods):
            waiting.reject("", "scheduler is shutting down")
        self._flush_until_durable(attempts=5)
        self.binder.shutdown(wait=True)
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
        self.abandoned = True
        self.handle.shutting_down.set()
        self.cluster.stop(abandon=True)
        for waiting in list(self.handle.waiting_pods):
            waiting.reject("", "scheduler lost its lease")
        self._flush_until_durable(attempts=1)
        self.binder.shutdown(wait=False, cancel_futures=True)

    # -- the loop ---------------------------------------------------------------

    def run(self, stop: threading.Event | None = None, until_idle: bool = False) -> None:
        """The loop. `until_idle` returns once nothing can be scheduled without a cluster change."""
        stop = stop or threading.Event()
        while not stop.is_set():
            self._drain_inbox()
            self._record_moves(self.queue.flush())
            if self.journal.down and not self._flush():
                stop.wait(self.journal.retry_delay())
                continue
            if self.schedule_one():
                if self._group_full():
                    self._flush()
                continue
            deferred = self._flush_deferred()
            if deferred is not None:
                self._wait_for_inbox(deferred)
                continue
            if not self._flush():
                stop.wait(self.journal.retry_delay())
                continue
            if until_idle and self._idle():
                return
            self._wait_for_inbox()

    def _group_full(self) -> bool:
        return (
            self.group_attempts >= self.options.group_commit_attempts
            or time.monotonic() - self.group_started >= self.options.group_commit_wait
        )

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
        if self.decided or not self.journal.pending:
            return None
        left = self.options.group_commit_wait - self.journal.pending_age()
        return left if left > 0 else None

    def _idle(self) -> bool:
        """Nothing left that could end differently without a change from outside.

        A pod waiting out a backoff counts as done when it failed after the
        last change (a cluster event, a binding's answer, another pod
        placed): trying it again would decide the same, and a simulation,
        whose cluster changes only when we act, would retry it forever.
        """
        counts = self.queue.counts()
        if counts["active"] or self.bindings or not self.inbox.empty() or self.journal.pending:
            return False
        return all(self.failed_at.get(uid) == self.changes for uid in self.queue.backing_off())

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

    def _handle(self, item: ClusterChange | BindingDone) -> None:
        self.changes += 1
        if isinstance(item, BindingDone):
            self._binding_done(item)
        elif isinstance(item.obj, Node):
            self._node_changed(item)
        elif isinstance(item.obj, Pod):
            self._pod_changed(item)
        else:
            self._object_changed(item)

    # -- appending --------------------------------------------------------------

    def _flush(self) -> bool:
        """Append what is pending; True when it is durable (or there was nothing)."""
        return self.journal.flush()

    def _appended(self, stored: Sequence[StoredEvent]) -> None:
        """An append is durable: the decisions in it may act now."""
        self.group_attempts = 0
        self.stats.events += len(stored)
        if self.metrics is not None:
            self.metrics.set_pending(self.queue.counts())
            self.metrics.publish()
        if stored and self.on_durable is not None:
            self.on_durable(stored[-1].position)
        self.start_binding_cycles()

    def _flush_until_durable(self, attempts: int | None = None) -> None:
        tries = 0
        while not self._flush():
            tries += 1
            if attempts is not None and tries >= attempts:
                log.error(
                    "giving up writing the event log; undecided work is dropped, nothing was bound",
                    pending_events=len(self.journal.pending),
                    decided=len(self.decided),
                )
                return
            time.sleep(self.journal.retry_delay())
