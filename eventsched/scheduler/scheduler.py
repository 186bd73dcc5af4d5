"""The scheduling loop: one scheduling cycle at a time, binding cycles in a pool.

Every state change goes through the log first. The loop thread owns the
cache and the queue; cluster watchers and binder threads only put messages
in the inbox. Each drain of the inbox becomes one append, each scheduling
attempt another, and nothing reaches the cluster before its batch is durable.
"""

from __future__ import annotations

import os
import queue as stdqueue
import random
import secrets
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import structlog

from eventsched.config import profile_digest
from eventsched.events import (
    AppendInDoubtError,
    EventRecord,
    EventStore,
    EventStoreError,
    Projections,
    StoredEvent,
    encode,
    rebuild_counted,
    save_snapshot,
)
from eventsched.framework import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    ASSIGNED_POD_UPDATE,
    IDENTITY_KEY,
    NODE_ADD,
    NODE_DELETE,
    NODE_UPDATE,
    ClusterEvent,
    CycleState,
    FitError,
    Framework,
    Handle,
    Profile,
    QueuedPodInfo,
    Registry,
    SchedulingError,
    Status,
    schedule_pod,
)
from eventsched.model import Node, Pod
from eventsched.model.cache import Cache
from eventsched.scheduler.batch import AttemptSink, Batch
from eventsched.scheduler.binding import BindingDone, bind_status, run_binding_cycle
from eventsched.scheduler.metrics import SchedulerMetrics
from eventsched.scheduler.ports import Cluster, ClusterChange
from eventsched.scheduler.queue import Move, SchedulingQueue
from eventsched.scheduler.unfolded import UnfoldedPlacements
from eventsched.view import FOLDED_KINDS, ClusterView

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class SchedulerOptions:
    instance: str = field(default_factory=lambda: f"{socket.gethostname()}-{os.getpid()}")
    binder_workers: int = 16
    initial_backoff: float = 1.0
    max_backoff: float = 10.0
    max_unschedulable: float = 300.0
    #: Write a projection snapshot after this many events, so a restart folds few.
    snapshot_every: int = 20_000
    #: Longest the loop sleeps when idle before re-checking queues.
    idle_wait: float = 0.5
    #: Retry delay (doubled up to 30 s) while the log cannot be written.
    log_retry: float = 0.5
    #: Group commit: attempts decided per append at most, and how long the first may wait.
    #: Bindings start only once their group is durable, so this bounds the added latency.
    group_commit_attempts: int = 64
    group_commit_wait: float = 0.05


@dataclass(slots=True)
class Stats:
    attempts: int = 0
    bound: int = 0
    unschedulable: int = 0
    errors: int = 0
    bind_failures: int = 0
    events: int = 0


class Scheduler:
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
        #: The view decisions read: changed only by the events this process adds to
        #: its batches, applied as they are added (see _new_batch), as replay applies them.
        self.view = ClusterView()
        self.handle = Handle(self.view.table, clock=clock)
        self.handle.bind = self._bind_via_cluster
        self._unfolded = UnfoldedPlacements(lambda identity: self.projections.first_node(identity))
        self.handle.first_placement = self._unfolded.first_node
        self.handle.emit_event = cluster.emit_event
        self.frameworks = {p.scheduler_name: Framework(p, registry, self.handle) for p in profiles}
        self.digests = {name: profile_digest(fw.profile) for name, fw in self.frameworks.items()}
        #: The only pod annotations kept (and logged): those a configured plugin reads.
        self.annotation_keys = frozenset().union(
            *(fw.annotations_read() for fw in self.frameworks.values())
        )
        self.metrics = metrics
        if metrics is not None:
            for fw in self.frameworks.values():
                fw.observe = metrics.observe_extension_point
        #: When each pod's current attempt began, for scheduler_scheduling_attempt_duration_seconds.
        self._attempt_began: dict[str, float] = {}
        #: Pods seen on the node their in-flight Binding names, not logged (see
        #: _implied_by_our_binding) unless that Binding fails.
        self._held_observations: dict[str, dict] = {}
        #: Pods deleted while their binding cycle ran: a failed Binding must not requeue them.
        self._deleted_in_flight: set[str] = set()
        first = next(iter(self.frameworks.values()))
        sorts = {fw.profile.at("queueSort") for fw in self.frameworks.values()}
        if len(sorts) > 1:
            raise ValueError(
                "all profiles must use the same queueSort plugin (as kube-scheduler requires)"
            )
        self.queue = SchedulingQueue(
            first.queue_less,
            pre_enqueue=self._pre_enqueue,
            clock=clock,
            initial_backoff=self.options.initial_backoff,
            max_backoff=self.options.max_backoff,
            max_unschedulable=self.options.max_unschedulable,
        )
        self._plugin_events: dict[str, list[ClusterEvent]] = {}
        for fw in self.frameworks.values():
            self._plugin_events.update(fw.events_to_register())
        self.inbox: stdqueue.SimpleQueue[ClusterChange | BindingDone] = stdqueue.SimpleQueue()
        self.projections = Projections()
        self.next_start_index = 0
        self.stats = Stats()
        self._rng = random.Random(secrets.randbits(64))
        self._binder = ThreadPoolExecutor(self.options.binder_workers, thread_name_prefix="binder")
        self._bindings = 0
        self._pending = self._new_batch()
        self._post_append: list[Callable[[], None]] = []
        self._since_snapshot = 0
        self._snapshotter = ThreadPoolExecutor(1, thread_name_prefix="snapshot")
        self._snapshot_writing: Future[None] | None = None
        self._log_down = False
        #: An append whose COMMIT went unanswered: settled before anything is appended again.
        self._in_doubt: AppendInDoubtError | None = None
        #: Decisions in the pending batch whose binding cycles wait for it to be durable.
        self._decided: list[tuple[Framework, CycleState, QueuedPodInfo, str, str, bool]] = []
        self._group_attempts = 0
        self._group_started = 0.0
        self._ready = False
        self.on_progress: Callable[[Stats], None] | None = None
        #: Called with the last position after each append is durable, when the view holds
        #: exactly the log up to it (tests compare it with replay's view there).
        self.on_durable: Callable[[int], None] | None = None
        #: Pods whose latest attempt failed, with the message their FailedScheduling carries.
        self.last_failure: dict[str, tuple[Pod, str]] = {}
        #: Pods that set a field no plugin of their profile honours, with the warning given.
        self.ignored: dict[str, tuple[Pod, str]] = {}
        #: Cluster changes, binding answers and placements so far; and each failed pod's
        #: count when it last failed (see _idle).
        self._changes = 0
        self._failed_at: dict[str, int] = {}

    @property
    def cache(self) -> Cache:
        """Nodes and placed pods as this process's view holds them."""
        return self.view.cache

    # -- lifecycle --------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return self._ready

    @property
    def log_down(self) -> bool:
        """True while appends fail; scheduling is paused until one succeeds."""
        return self._log_down

    def start(self, stop: threading.Event | None = None) -> bool:
        """Rebuild state from the log, record the configuration, sync with the cluster.

        False when `stop` was set before the cluster's initial lists arrived.
        """
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
        if folded >= self.options.snapshot_every:
            # A process that died before its first snapshot left this much to fold
            # again; snapshot now so the next start does not fold it a third time.
            self._write_snapshot(self.projections)
        self.store.ensure_partitions()
        self._record_config()
        self.cluster.start(self.inbox.put)
        waited = 0.0
        while not self.cluster.wait_synced(0.5):
            if stop is not None and stop.is_set():
                return False
            waited += 0.5
            if waited % 10 == 0:
                log.info("waiting for the cluster's nodes and pods to sync", seconds=waited)
        self._drain_inbox()
        self._reconcile_reservations()
        self._flush_until_durable()
        self._ready = True
        return True

    def stop(self) -> None:
        """Stop taking pods; let binding cycles finish and log them; snapshot."""
        self._ready = False
        self.cluster.stop()
        for waiting in list(self.handle.waiting_pods):
            waiting.reject("", "scheduler is shutting down")
        self._flush_until_durable(attempts=5)
        self._binder.shutdown(wait=True)
        self._drain_inbox()
        self._flush_until_durable(attempts=5)
        self._snapshotter.shutdown(wait=True)
        try:
            save_snapshot(self.store, self.projections)
        except EventStoreError as exc:
            log.warning("could not save a snapshot on shutdown", error=str(exc))

    def run(self, stop: threading.Event | None = None, until_idle: bool = False) -> None:
        """The loop. `until_idle` returns once nothing can be scheduled without a cluster change."""
        stop = stop or threading.Event()
        while not stop.is_set():
            self._drain_inbox()
            self._record_moves(self.queue.flush())
            if self._log_down and not self._flush():
                stop.wait(self._retry_delay())
                continue
            if self.schedule_one():
                if self._group_full():
                    self._flush()
                continue
            if not self._flush():
                stop.wait(self._retry_delay())
                continue
            if until_idle and self._idle():
                return
            self._wait_for_inbox()

    def _group_full(self) -> bool:
        return (
            self._group_attempts >= self.options.group_commit_attempts
            or time.monotonic() - self._group_started >= self.options.group_commit_wait
        )

    def _idle(self) -> bool:
        """Nothing left that could end differently without a change from outside.

        A pod waiting out a backoff counts as done when it failed after the
        last change (a cluster event, a binding's answer, another pod
        placed): trying it again would decide the same, and a simulation,
        whose cluster changes only when we act, would retry it forever.
        """
        counts = self.queue.counts()
        if counts["active"] or self._bindings or not self.inbox.empty() or self._pending:
            return False
        return all(self._failed_at.get(uid) == self._changes for uid in self.queue.backing_off())

    def _wait_for_inbox(self) -> None:
        timeout = self.options.idle_wait
        wake = self.queue.next_wakeup()
        if wake is not None:
            timeout = max(0.0, min(timeout, wake - self.clock()))
        try:
            item = self.inbox.get(timeout=timeout)
        except stdqueue.Empty:
            return
        self._handle(item)

    # -- the log ----------------------------------------------------------------

    def _flush(self) -> bool:
        """Append what is pending; True when it is durable (or there was nothing)."""
        if not self._pending:
            return True
        began = time.perf_counter()
        try:
            if self._in_doubt is not None:
                self._settle_in_doubt(self._in_doubt)
            records = self._pending.records
            stored = self.store.append_stored(records) if records else []
        except EventStoreError as exc:
            if isinstance(exc, AppendInDoubtError):
                self._in_doubt = exc
            if self.metrics is not None:
                self.metrics.log_append_failures.inc()
            self._ready = False
            self._log_down = True
            log.error("cannot write the event log; scheduling paused", error=str(exc))
            return False
        if self._log_down:
            log.info("event log writable again; scheduling resumes")
            self._log_down = False
            self._ready = True
        appended = self._unfolded.batch
        self._pending = self._new_batch()
        self._log_retry = self.options.log_retry
        self._group_attempts = 0
        if self.metrics is not None:
            self._observe_append(stored, time.perf_counter() - began)
        self._apply(stored)
        if stored and self.on_durable is not None:
            self.on_durable(stored[-1].position)
        self._unfolded.folded(appended)
        decided, self._decided = self._decided, []
        for fw, state, info, node, attempt, waited in decided:
            self.queue.done(info.pod.uid)
            self._bindings += 1
            self._binder.submit(self._binding_cycle, fw, state, info, node, attempt, waited)
        actions, self._post_append = self._post_append, []
        for action in actions:
            try:
                action()
            except Exception:
                log.exception("action after append failed")
        return True

    _log_retry = 0.5

    def _new_batch(self) -> Batch:
        self._unfolded.new_batch()
        return Batch(self.options.instance, observer=self._added)

    def _added(self, record: EventRecord) -> None:
        """An event joined the pending batch: the view and the sticky overlay follow it now,
        so the next decision sees it, by the same fold replay applies it with."""
        kind = record.kind
        if kind in FOLDED_KINDS:  # most of an attempt's records change nothing here
            self.view.apply(record)
            if kind in UnfoldedPlacements.KINDS:
                self._unfolded.note(record)

    def _settle_in_doubt(self, doubt: AppendInDoubtError) -> None:
        """Find out whether the unanswered append was committed, so it is never appended twice.

        Raises EventStoreError while the database still does not answer. If
        it was committed, its records (the head of the pending batch: only
        the inbox added to it since, at the end) are durable: fold them and
        drop them from what is pending. The decisions among them start their
        binding cycles with the rest of the batch, once that is appended too.
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
        del self._pending.records[: len(doubt.stored)]
        self._apply(doubt.stored)

    def _observe_append(self, stored: Sequence[StoredEvent], seconds: float) -> None:
        metrics = self.metrics
        assert metrics is not None
        metrics.log_append_duration.observe(seconds)
        metrics.log_batch_events.observe(len(stored))
        for kind, count in Counter(event.kind for event in stored).items():
            metrics.log_events.labels(kind).inc(count)
        metrics.set_pending(self.queue.counts())

    def _attempt_result(self, pod_uid: str, profile: str, result: str) -> None:
        """Count an attempt's outcome as kube-scheduler does: scheduled, unschedulable, error."""
        began = self._attempt_began.pop(pod_uid, None)
        if self.metrics is None:
            return
        self.metrics.schedule_attempts.labels(result, profile).inc()
        if began is not None:
            self.metrics.attempt_duration.labels(result, profile).observe(
                time.perf_counter() - began
            )

    def _retry_delay(self) -> float:
        delay = self._log_retry
        self._log_retry = min(self._log_retry * 2, 30.0)
        return delay

    def _flush_until_durable(self, attempts: int | None = None) -> None:
        tries = 0
        while not self._flush():
            tries += 1
            if attempts is not None and tries >= attempts:
                log.error(
                    "giving up writing the event log; undecided work is dropped, nothing was bound",
                    pending_events=len(self._pending),
                    decided=len(self._decided),
                )
                return
            time.sleep(self._retry_delay())

    def _apply(self, stored: Sequence[StoredEvent]) -> None:
        if stored and stored[0].position > self.projections.position + 1:
            self._fold_others(stored[0].position - 1)
        self.projections.apply_all(stored)
        self.stats.events += len(stored)
        self._since_snapshot += len(stored)
        if self._since_snapshot >= self.options.snapshot_every:
            self._save_snapshot()

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

    def _record_config(self) -> None:
        # This process's view starts empty and is rebuilt from what the cluster
        # lists next: replay must start from empty here too.
        self._pending.add(
            "maintenance",
            {"action": "scheduler_started", "instance": self.options.instance, "view": "empty"},
        )
        last: dict[str, str] = {}
        for event in self.store.read(kinds=["config_loaded"]):
            last[event.scheduler] = event.data.get("digest", "")
            self.view.apply(event)  # the profiles by digest, as replay's view has them
        for name, fw in self.frameworks.items():
            if last.get(name) != self.digests[name]:
                self._pending.add(
                    "config_loaded",
                    {"digest": self.digests[name], "profile": fw.profile.to_record()},
                    scheduler=name,
                )
        self._flush_until_durable()

    # -- inbox ------------------------------------------------------------------

    def _drain_inbox(self) -> None:
        while True:
            try:
                item = self.inbox.get_nowait()
            except stdqueue.Empty:
                return
            self._handle(item)

    def _handle(self, item: ClusterChange | BindingDone) -> None:
        self._changes += 1
        if isinstance(item, BindingDone):
            self._binding_done(item)
        elif isinstance(item.obj, Node):
            self._node_changed(item)
        else:
            self._pod_changed(item)

    def _observe(
        self, kind: str, key: str, record: dict, *, known: bool = True, **where: object
    ) -> bool:
        """Log an observation unless it is identical to the last one for that object.

        An object the view does not hold (`known` False) is always logged: the
        last logged observation may have been removed since, in a batch not yet
        folded into the projections.

        The record is normalized and dumped once: the digest compared here,
        the text the store writes and the digest the projections keep all
        come from that one encoding.
        """
        encoded = encode(record)
        if known and self.projections.observed.get(key) == encoded.digest:
            return False
        self._pending.add(kind, encoded.data, encoded=encoded, **where)  # type: ignore[arg-type]
        return True

    def _implied_by_our_binding(self, pod: Pod, key: str, record: dict) -> bool:
        """The pod as last logged, now on the node our own Binding gave it.

        The log says that already (`reserved` on the node, then `bound`), and
        replay places the pod from those, so a second `pod_observed` that
        differs only in nodeName adds nothing. A restarted process does not
        have the pod in its cache yet, so there the observation is logged.
        """
        node = pod.node_name
        if not node or self.cache.node_of(pod.uid) != node:
            return False
        if pod.uid not in self.projections.bound and not self.cache.is_assumed(pod.uid):
            return False
        unassigned = {k: v for k, v in record.items() if k != "nodeName"}
        return self.projections.observed.get(key) == encode(unassigned).digest

    def _node_changed(self, change: ClusterChange) -> None:
        node = change.obj
        assert isinstance(node, Node)
        if change.type == "DELETED":
            self._pending.add("node_removed", {"uid": node.uid}, node=node.name)
            self._move(NODE_DELETE, "NodeDelete")
            return
        known = self.view.table.row_of(node.name) is not None
        changed = self._observe(
            "node_observed", f"node/{node.name}", node.to_record(), known=known, node=node.name
        )
        if changed:
            self._move(NODE_UPDATE if known else NODE_ADD, "NodeUpdate" if known else "NodeAdd")

    def _pod_changed(self, change: ClusterChange) -> None:
        assert isinstance(change.obj, Pod)
        pod = change.obj.keeping_annotations(self.annotation_keys)
        if change.type == "DELETED":
            self.last_failure.pop(pod.uid, None)
            self._attempt_began.pop(pod.uid, None)
            self._pod_deleted(pod)
            return
        record = pod.to_record()
        key = f"pod/{pod.uid}"
        if self._placed_elsewhere(pod):
            # Bound while we were down, or by hand: still its first placement (sticky).
            record["firstPlacement"] = True
        was_assumed = self.cache.is_assumed(pod.uid)
        was_placed = self.cache.node_of(pod.uid) is not None
        if not self._implied_by_our_binding(pod, key, record):
            known = pod.uid in self.view.pods
            self._observe(
                "pod_observed", key, record, known=known, pod=pod, node=pod.node_name or None
            )
        elif self.cache.is_assumed(pod.uid) and not self.cache.binding_finished(pod.uid):
            # Seen bound before our Binding's answer: if that answer is a failure (a
            # rival bound it to the same node), replay needs this observation after all.
            self._held_observations[pod.uid] = record
        if pod.node_name:
            self.queue.delete(pod.uid)
            if not was_assumed:
                self._move(
                    ASSIGNED_POD_UPDATE if was_placed else ASSIGNED_POD_ADD, "AssignedPodAdd"
                )
            return
        if pod.scheduler_name not in self.frameworks or pod.is_terminal or pod.deleting:
            return
        if self.cache.is_assumed(pod.uid):
            return  # its binding is in flight; the bound pod will be observed
        if pod.uid in self.queue:
            where = self.queue.update(pod)
            return
        backoff = self.projections.backoff.get(pod.uid)
        if backoff is not None:
            where = self.queue.restore(pod, backoff.attempts, backoff.backoff_until)
        else:
            where = self.queue.add(pod)
        if where is not None:
            self._pending.add(
                "queued", {"queue": where, "event": "PodAdd"}, pod=pod, scheduler=pod.scheduler_name
            )
            self._warn_ignored(pod)

    def _warn_ignored(self, pod: Pod) -> None:
        """Say so, in the log and on the pod, when the pod sets a field no plugin here honours.

        It is placed as if the field were absent: never silently.
        """
        fw = self.frameworks[pod.scheduler_name]
        ignored = fw.ignored_fields(pod)
        if not ignored or pod.uid in self.ignored:
            return
        fields = [i.field for i in ignored]
        plugins = sorted({i.plugin for i in ignored})
        message = (
            f"{', '.join(fields)} not honoured: profile {fw.name} has no "
            f"{' or '.join(plugins)} plugin; the pod is placed as if "
            f"{'it were' if len(fields) == 1 else 'they were'} absent"
        )
        self.ignored[pod.uid] = (pod, message)
        self._pending.add(
            "input_recorded",
            {"key": "ignoredFields", "value": {"fields": fields, "plugins": plugins}},
            pod=pod,
            scheduler=pod.scheduler_name,
        )
        self._post_append.append(
            lambda: self.cluster.emit_event(pod, "Warning", "FieldsIgnored", "Scheduling", message)
        )

    def _placed_elsewhere(self, pod: Pod) -> bool:
        """An assigned pod of ours that no `bound` of ours placed, and whose identity has no placement."""
        return (
            bool(pod.node_name)
            and pod.scheduler_name in self.frameworks
            and pod.uid not in self.projections.bound
            and not self.cache.is_assumed(pod.uid)
            and pod.uid not in self.projections.open_reservations
            and pod.key not in self.projections.first_placements
        )

    def _pod_deleted(self, pod: Pod) -> None:
        self._held_observations.pop(pod.uid, None)
        known = f"pod/{pod.uid}" in self.projections.observed or pod.uid in self.queue
        waiting = self.handle.waiting_pods.get(pod.uid)
        if waiting is not None:
            waiting.reject("", "pod was deleted while waiting at Permit")
        self.queue.delete(pod.uid)
        if self.cache.is_assumed(pod.uid) and not self.cache.binding_finished(pod.uid):
            self._deleted_in_flight.add(pod.uid)
        placed = self.cache.node_of(pod.uid) is not None
        if known or placed or pod.uid in self.view.pods:
            self._pending.add(
                "pod_removed", {"nodeName": pod.node_name}, pod=pod, node=pod.node_name or None
            )
        if placed:
            self._move(ASSIGNED_POD_DELETE, "AssignedPodDelete")

    def _move(self, event: ClusterEvent, label: str) -> None:
        self._record_moves(self.queue.move_on_event(event, self._plugin_events, label))

    def _record_moves(self, moves: Sequence[Move]) -> None:
        for move in moves:
            data: dict[str, object] = {"from": move.source, "to": move.to, "event": move.event}
            if move.backoff_until is not None:
                data["backoffUntil"] = move.backoff_until
            self._pending.add(
                "requeued", data, pod=move.info.pod, scheduler=move.info.pod.scheduler_name
            )

    def _pre_enqueue(self, pod: Pod) -> Status:
        fw = self.frameworks.get(pod.scheduler_name)
        if fw is None:
            return Status()
        # What a PreEnqueue plugin records (e.g. a malformed annotation) belongs to this pod.
        self.handle.sink = AttemptSink(self._pending, pod, fw.name, None)
        return fw.run_pre_enqueue(pod)

    # -- scheduling cycle -------------------------------------------------------

    def schedule_one(self) -> bool:
        """One scheduling cycle. False when activeQ is empty."""
        info = self.queue.pop()
        if info is None:
            return False
        pod = info.pod
        fw = self.frameworks[pod.scheduler_name]
        attempt = secrets.token_hex(8)
        seed = self._rng.getrandbits(63)
        self._attempt_began[pod.uid] = time.perf_counter()
        sink = AttemptSink(self._pending, pod, fw.name, attempt)
        self.handle.sink = sink
        if self._group_attempts == 0:
            self._group_started = time.monotonic()
        self._group_attempts += 1
        self.stats.attempts += 1
        sink.record(
            "attempt_started",
            {
                "attempts": info.attempts,
                "startIndex": self.next_start_index,
                "seed": seed,
                "configDigest": self.digests[fw.name],
                "nodes": len(self.view.table),
            },
        )
        state = CycleState(attempt, seed)
        try:
            result = schedule_pod(fw, state, pod, self.view.table, self.next_start_index, sink)
        except FitError as err:
            self.next_start_index = err.next_start_index  # type: ignore[attr-defined]
            self._unschedulable(fw, state, info, sink, err)
            return True
        except SchedulingError as err:
            self.next_start_index = getattr(err, "next_start_index", self.next_start_index)
            self._failed(fw, info, sink, err.status, err.status.message, ())
            return True
        self.next_start_index = result.next_start_index
        self._reserve_and_permit(fw, state, info, sink, result.node)
        return True

    def _reserve_and_permit(
        self, fw: Framework, state: CycleState, info: QueuedPodInfo, sink: AttemptSink, node: str
    ) -> None:
        pod = info.pod
        # Reserve plugins run first, and the pod is assumed on the node when `reserved`
        # joins the batch (the view's fold): a failed Reserve leaves nothing to undo.
        status = fw.run_reserve(state, pod, node)
        if not status.is_success:
            fw.run_unreserve(state, pod, node)
            sink.record(
                "unreserved",
                {"reason": f"Reserve failed: {status.message}", "status": status.to_record()},
                node=node,
            )
            self._failed(
                fw,
                info,
                sink,
                status,
                status.message,
                (status.plugin,) if status.is_rejected else (),
            )
            return
        reserved: dict[str, object] = {"plugins": [p.name for p in fw.plugins_at("reserve")]}  # type: ignore[attr-defined]
        identity = state.get(IDENTITY_KEY)
        if identity is not None:
            # The identity a plugin (StickyNode) gave the pod: if this process dies
            # after the Binding but before its `bound`, the restart's reconciled
            # `bound` must record the first placement under it, not under the name.
            reserved["identity"] = identity
        sink.record("reserved", reserved, node=node)
        status, waits = fw.run_permit(state, pod, node)
        if not (status.is_success or status.is_wait):
            sink.record(
                "permitted",
                {"decision": "deny", "status": status.to_record()},
                node=node,
                plugin=status.plugin or None,
            )
            fw.run_unreserve(state, pod, node)
            sink.record("unreserved", {"reason": f"Permit refused: {status.message}"}, node=node)
            self._failed(
                fw,
                info,
                sink,
                status,
                status.message,
                (status.plugin,) if status.is_rejected else (),
            )
            return
        permitted: dict[str, object] = {"decision": "wait" if waits else "approve"}
        if waits:
            permitted["waits"] = waits
        if not status.is_success or status.reasons:
            permitted["status"] = status.to_record()
        sink.record("permitted", permitted, node=node)
        self._changes += 1  # a pod placed: others' next attempts see it
        self._failed_at.pop(pod.uid, None)
        # The decision must be durable before anything acts on it: the binding
        # cycle starts when the group this attempt belongs to is appended.
        self._decided.append((fw, state, info, node, state.attempt, bool(waits)))

    def _binding_cycle(
        self,
        fw: Framework,
        state: CycleState,
        info: QueuedPodInfo,
        node: str,
        attempt: str,
        waited: bool,
    ) -> None:
        self.inbox.put(
            run_binding_cycle(fw, state, info, node, attempt, waited, self.options.instance)
        )

    def _binding_done(self, done: BindingDone) -> None:
        self._bindings -= 1
        self._pending.extend(done.batch)
        pod = done.info.pod
        held = self._held_observations.pop(pod.uid, None)
        if held is not None and not done.ok:
            self._observe("pod_observed", f"pod/{pod.uid}", held, pod=pod, node=held["nodeName"])
        if done.ok:
            self.last_failure.pop(pod.uid, None)
            self.stats.bound += 1
            self._attempt_result(pod.uid, done.fw.name, "scheduled")

            def after() -> None:
                done.fw.run_post_bind(done.state, pod, done.node)
                self.cluster.emit_event(
                    pod,
                    "Normal",
                    "Scheduled",
                    "Binding",
                    f"Successfully assigned {pod.key} to {done.node}",
                )
                self._progress()

            self._post_append.append(after)
            return
        self.stats.bind_failures += 1
        self._attempt_result(pod.uid, done.fw.name, "error")
        self._move(ASSIGNED_POD_DELETE, "AssignedPodDelete")
        message = f"Binding rejected: {done.message}"
        # As kube-scheduler's failure handler: a pod the cluster already shows
        # assigned, or that is gone, is not requeued; any other is.
        if self.cache.node_of(pod.uid) is not None or pod.uid in self._deleted_in_flight:
            log.info("binding refused; the pod is assigned or gone, not requeued", pod=pod.key)
            self._deleted_in_flight.discard(pod.uid)
            return
        if done.code == 404:
            log.info("binding refused: the pod no longer exists", pod=pod.key)
            return
        move = self.queue.requeue_after_binding_failure(done.info)
        self._record_moves([move])
        self._post_append.append(lambda: self._report_failure(pod, message, "SchedulerError"))

    def _bind_via_cluster(self, pod: Pod, node: str) -> Status:
        return bind_status(self.cluster.bind(pod, node))

    # -- failures ---------------------------------------------------------------

    def _unschedulable(
        self,
        fw: Framework,
        state: CycleState,
        info: QueuedPodInfo,
        sink: AttemptSink,
        err: FitError,
    ) -> None:
        diagnosis = err.diagnosis
        nominated = ""
        if fw.plugins_at("postFilter"):
            names = self.view.table.names
            statuses = {
                names[row]: status for r in diagnosis.rejections for row, status in r.status_of()
            }
            result, status = fw.run_post_filter(state, info.pod, statuses)
            sink.record(
                "post_filtered",
                {
                    "status": status.to_record(),
                    "nominatedNodeName": result.nominated_node_name if result else "",
                },
                plugin=status.plugin or None,
            )
            if not status.is_success and status.message:
                diagnosis.post_filter_msg = status.message
            nominated = result.nominated_node_name if result else ""
        self.stats.unschedulable += 1
        self._failed(
            fw,
            info,
            sink,
            None,
            diagnosis.message(),
            tuple(sorted(diagnosis.unschedulable_plugins)),
            nominated,
        )

    def _failed(
        self,
        fw: Framework,
        info: QueuedPodInfo,
        sink: AttemptSink,
        status: Status | None,
        message: str,
        plugins: Sequence[str],
        nominated_node: str = "",
    ) -> None:
        """Record the failure, requeue, and only then tell the cluster (FailedScheduling)."""
        error = status is not None and not status.is_rejected
        self._attempt_result(info.pod.uid, fw.name, "error" if error else "unschedulable")
        if error:
            self.stats.errors += 1
            log.error("scheduling attempt failed", pod=info.pod.key, error=message)
        info.errored = error
        move = self.queue.add_unschedulable(info, plugins)
        sink.record(
            "unschedulable",
            {
                "message": message,
                "plugins": list(plugins),
                "attempts": info.attempts,
                "backoffSeconds": self.queue.backoff_duration(info.attempts),
                "queue": move.to,
                "code": status.code.label if status is not None else "Unschedulable",
            },
        )
        pod = info.pod
        self.last_failure[pod.uid] = (pod, message)
        self._failed_at[pod.uid] = self._changes
        reason = "SchedulerError" if error else "Unschedulable"
        self._post_append.append(lambda: self._report_failure(pod, message, reason, nominated_node))

    def _report_failure(
        self, pod: Pod, message: str, reason: str = "Unschedulable", nominated_node: str = ""
    ) -> None:
        """FailedScheduling and PodScheduled=False (status.nominatedNodeName when preemption nominated).

        The condition's reason is SchedulerError unless the pod was rejected, as upstream.
        """
        self.cluster.emit_event(pod, "Warning", "FailedScheduling", "Scheduling", message)
        self.cluster.set_unschedulable(pod, message, nominated_node, reason)
        self._progress()

    def _progress(self) -> None:
        if self.on_progress is not None:
            self.on_progress(self.stats)

    # -- restart ----------------------------------------------------------------

    def _reconcile_reservations(self) -> None:
        """Close reservations a previous process left open, from what the cluster shows now."""
        for uid, reservation in list(self.projections.open_reservations.items()):
            node = self.cache.node_of(uid)
            pod = Pod(uid=uid, namespace=reservation.namespace or "", name=reservation.name or "")
            if node == reservation.node and not self.cache.is_assumed(uid):
                identity = reservation.identity or pod.key
                kind, data = "bound", {"identity": identity, "reconciled": True}
            else:
                kind, data = (
                    "unreserved",
                    {
                        "reason": "reconciled on start: no binding to this node was confirmed",
                        "reconciled": True,
                    },
                )
            self._pending.add(
                kind,
                data,
                pod=pod,
                scheduler=reservation.scheduler,
                attempt=reservation.attempt,
                node=reservation.node,
            )
