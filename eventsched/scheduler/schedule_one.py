"""One scheduling cycle, and what follows from it: kube-scheduler's `schedule_one.go`.

`schedule_one` pops a pod, runs the profile's scheduling cycle (PreFilter
to selection) on the view, then Reserve and Permit; every decision joins the
journal's pending batch. A placed pod's binding cycle (WaitOnPermit, PreBind,
Bind) starts on a binder thread only once that batch is durable, and its
outcome comes back through the inbox. Failures are recorded, requeued, and
only then told to the cluster (FailedScheduling, PodScheduled=False).
"""

from __future__ import annotations

import queue as stdqueue
import random
import secrets
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import structlog

from eventsched.framework import (
    ASSIGNED_POD_DELETE,
    ASSUMED_VOLUMES_KEY,
    IDENTITY_KEY,
    CycleState,
    FitError,
    Framework,
    PostFilterResult,
    QueuedPodInfo,
    SchedulingError,
    Status,
    run_post_filter,
    schedule_pod,
)
from eventsched.framework.runtime.instrumented import SAMPLE_PERCENT
from eventsched.model import Pod
from eventsched.scheduler.batch import AttemptSink
from eventsched.scheduler.binding import BindingDone, bind_status, run_binding_cycle
from eventsched.scheduler.eventhandlers import EventHandlers
from eventsched.scheduler.metrics import SchedulerMetrics
from eventsched.scheduler.options import SchedulerOptions, Stats
from eventsched.scheduler.ports import ClusterChange
from eventsched.scheduler.preemption import evict_victims

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class Decided:
    """A pod placed by its scheduling cycle, waiting for the decision to be durable."""

    fw: Framework
    state: CycleState
    info: QueuedPodInfo
    node: str
    #: Permit said wait: the binding cycle waits on Permit first.
    waited: bool


class SchedulingCycle(EventHandlers):
    """The scheduler's scheduling and binding cycles (its state is set up by `Scheduler`)."""

    options: SchedulerOptions
    stats: Stats
    metrics: SchedulerMetrics | None
    #: The lease is lost (Scheduler.abandon): no binding cycle starts any more.
    abandoned: bool
    #: The queue's clock (QueuedPodInfo timestamps).
    clock: Callable[[], float]
    digests: dict[str, str]
    inbox: stdqueue.SimpleQueue[ClusterChange | BindingDone]
    binder: ThreadPoolExecutor
    rng: random.Random
    sampling: random.Random
    #: Where the next attempt starts looking (`sched.nextStartNodeIndex`).
    next_start_index: int
    #: Binding cycles running.
    bindings: int
    #: Decisions in the pending batch whose binding cycles wait for it to be durable.
    decided: list[Decided]
    #: Attempts decided into the pending batch (group commit), and when the first began.
    group_attempts: int
    group_started: float
    #: Cluster changes, binding answers and placements so far; and each failed pod's
    #: count when it last failed (see Scheduler._idle).
    changes: int
    failed_at: dict[str, int]
    on_progress: Callable[[Stats], None] | None

    def schedule_one(self) -> bool:
        """One scheduling cycle. False when activeQ is empty."""
        info = self.queue.pop()
        if info is None:
            return False
        pod = info.pod
        fw = self.frameworks[pod.scheduler_name]
        attempt = secrets.token_hex(8)
        seed = self.rng.getrandbits(63)
        self.attempt_began[pod.uid] = time.perf_counter()
        sink = AttemptSink(self.journal.pending, pod, fw.name, attempt)
        if self.group_attempts == 0:
            self.group_started = time.monotonic()
        self.group_attempts += 1
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
        state = CycleState(attempt, seed, sink)
        state.record_plugin_metrics = self.sampling.randrange(100) < SAMPLE_PERCENT
        try:
            result = schedule_pod(fw, state, pod, self.view.table, self.next_start_index)
        except FitError as err:
            self.next_start_index = err.next_start_index
            self._unschedulable(fw, state, info, sink, err)
            return True
        except SchedulingError as err:
            self.next_start_index = err.next_start_index
            self._failed(fw, info, sink, err.status, err.status.message, ())
            return True
        self.next_start_index = result.next_start_index
        if self.metrics is not None:
            self.metrics.algorithm_duration.observe(
                time.perf_counter() - self.attempt_began[pod.uid]
            )
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
            self._refused(fw, info, sink, status)
            return
        reserved: dict[str, object] = {"plugins": fw.plugins_at("reserve")}
        identity = state.get(IDENTITY_KEY)
        if identity is not None:
            # The identity a plugin (StickyNode) gave the pod: if this process dies
            # after the Binding but before its `bound`, the restart's reconciled
            # `bound` must record the first placement under it, not under the name.
            reserved["identity"] = identity
        volumes = state.get(ASSUMED_VOLUMES_KEY)
        if volumes:
            # Volumes a plugin (VolumeBinding) assumed pre-bound: the view's fold of
            # `reserved` assumes them, its fold of `unreserved` gives them back.
            reserved["volumes"] = [v.to_record() for v in volumes]
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
            self._refused(fw, info, sink, status)
            return
        permitted: dict[str, object] = {"decision": "wait" if waits else "approve"}
        if waits:
            permitted["waits"] = waits
        if not status.is_success or status.reasons:
            permitted["status"] = status.to_record()
        sink.record("permitted", permitted, node=node)
        self.changes += 1  # a pod placed: others' next attempts see it
        self.failed_at.pop(pod.uid, None)
        # The decision must be durable before anything acts on it: the binding
        # cycle starts when the group this attempt belongs to is appended.
        self.decided.append(Decided(fw, state, info, node, bool(waits)))

    def start_binding_cycles(self) -> None:
        """The decisions just made durable: their binding cycles run on the binder threads
        (none once the lease is lost: they stay open reservations for the next leader)."""
        decided, self.decided = self.decided, []
        if self.abandoned:
            return
        for each in decided:
            self.queue.done(each.info.pod.uid)
            self.bindings += 1
            self.binder.submit(self._binding_cycle, each)

    def _binding_cycle(self, decided: Decided) -> None:
        """On a binder thread: WaitOnPermit, PreBind, Bind; the outcome goes to the loop's inbox."""
        self.inbox.put(
            run_binding_cycle(
                decided.fw,
                decided.state,
                decided.info,
                decided.node,
                decided.waited,
                self.options.instance,
            )
        )

    def _binding_done(self, done: BindingDone) -> None:
        self.bindings -= 1
        self.journal.pending.extend(done.batch)
        pod = done.info.pod
        held = self.held_observations.pop(pod.uid, None)
        if held is not None and not done.ok:
            self._observe("pod_observed", f"pod/{pod.uid}", held, pod=pod, node=held["nodeName"])
        if done.ok:
            self.last_failure.pop(pod.uid, None)
            self.stats.bound += 1
            self._attempt_result(pod.uid, done.fw.name, "scheduled")
            if self.metrics is not None:
                first = done.info.initial_attempt_timestamp
                since = None if first is None else self.clock() - first
                self.metrics.pod_scheduled(done.info.attempts, since)

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

            self.journal.after(after)
            return
        self.stats.bind_failures += 1
        self._attempt_result(pod.uid, done.fw.name, "error")
        self._move(ASSIGNED_POD_DELETE, "AssignedPodDelete")
        message = f"Binding rejected: {done.message}"
        # As kube-scheduler's failure handler: a pod the cluster already shows
        # assigned, or that is gone, is not requeued; any other is.
        if self.cache.node_of(pod.uid) is not None or pod.uid in self.deleted_in_flight:
            log.info("binding refused; the pod is assigned or gone, not requeued", pod=pod.key)
            self.deleted_in_flight.discard(pod.uid)
            return
        if done.code == 404:
            log.info("binding refused: the pod no longer exists", pod=pod.key)
            return
        move = self.queue.requeue_after_binding_failure(done.info)
        self._record_moves([move])
        self.journal.after(lambda: self._report_failure(pod, message, "SchedulerError"))

    def _bind_via_cluster(self, pod: Pod, node: str) -> Status:
        return bind_status(self.cluster.bind(pod, node))

    def _unschedulable(
        self,
        fw: Framework,
        state: CycleState,
        info: QueuedPodInfo,
        sink: AttemptSink,
        err: FitError,
    ) -> None:
        diagnosis = err.diagnosis
        pod = info.pod
        result = run_post_filter(fw, state, pod, self.view.table, diagnosis)
        if self.metrics is not None and state.preemption_attempts:
            self.metrics.preemption_attempts.inc(state.preemption_attempts)
        if result is not None and result.victims:
            self.journal.after(lambda: self._evict(fw, pod, sink.attempt or "", result))
        self.stats.unschedulable += 1
        self._failed(
            fw,
            info,
            sink,
            None,
            diagnosis.message(),
            tuple(sorted(diagnosis.unschedulable_plugins)),
            result.nominated_node_name if result is not None else None,
        )

    def _evict(self, fw: Framework, pod: Pod, attempt: str, result: PostFilterResult) -> None:
        """The preemption decision is durable: evict its victims (scheduler/preemption.py)."""
        self.stats.preemptions += 1
        evict_victims(
            self.cluster,
            self.journal,
            self.handle,
            self.metrics,
            pod,
            fw.name,
            attempt,
            result.nominated_node_name,
            result.victims,
            result.lower_nominated,
        )

    def _refused(
        self, fw: Framework, info: QueuedPodInfo, sink: AttemptSink, status: Status
    ) -> None:
        """Reserve or Permit said no: a rejection names its plugin, anything else is an error."""
        self._failed(
            fw, info, sink, status, status.message, (status.plugin,) if status.is_rejected else ()
        )

    def _failed(
        self,
        fw: Framework,
        info: QueuedPodInfo,
        sink: AttemptSink,
        status: Status | None,
        message: str,
        plugins: Sequence[str],
        nominated_node: str | None = None,
    ) -> None:
        """Record the failure, requeue, and only then tell the cluster (FailedScheduling)."""
        error = status is not None and not status.is_rejected
        self._attempt_result(info.pod.uid, fw.name, "error" if error else "unschedulable")
        if error:
            self.stats.errors += 1
            log.error("scheduling attempt failed", pod=info.pod.key, error=message)
        info.errored = error
        move = self.queue.add_unschedulable(info, plugins)
        data: dict[str, object] = {
            "message": message,
            "plugins": list(plugins),
            "attempts": info.attempts,
            "backoffSeconds": self.queue.backoff_duration(info.attempts),
            "queue": move.to,
            "code": status.code.label if status is not None else "Unschedulable",
        }
        if nominated_node is not None:
            # The PostFilter's nomination, which the view's nominator folds ("" clears).
            data["nominatedNodeName"] = nominated_node
        sink.record("unschedulable", data)
        pod = info.pod
        self.last_failure[pod.uid] = (pod, message)
        self.failed_at[pod.uid] = self.changes
        reason = "SchedulerError" if error else "Unschedulable"
        self.journal.after(lambda: self._report_failure(pod, message, reason, nominated_node))

    def _report_failure(
        self,
        pod: Pod,
        message: str,
        reason: str = "Unschedulable",
        nominated_node: str | None = None,
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

    def _attempt_result(self, pod_uid: str, profile: str, result: str) -> None:
        """Count an attempt's outcome as kube-scheduler does: scheduled, unschedulable, error."""
        began = self.attempt_began.pop(pod_uid, None)
        if self.metrics is None:
            return
        self.metrics.attempt(
            result, profile, None if began is None else time.perf_counter() - began
        )
