"""An attempt that placed no pod: kube-scheduler's `handleSchedulingFailure`.

The failure is recorded (`unschedulable`, with the message the pod's FailedScheduling
Event carries), the pod goes back to the queue (backoffQ or the unschedulable pool), and
only once that is durable is the cluster told: the FailedScheduling Event and
PodScheduled=False, with status.nominatedNodeName when preemption nominated a node. An
unschedulable pod's PostFilter (preemption) runs first; its victims are evicted once
the decision is durable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import structlog

from eventsched.framework import (
    CycleState,
    FitError,
    Framework,
    Handle,
    PostFilterResult,
    QueuedPodInfo,
    Status,
    run_post_filter,
)
from eventsched.metrics import SchedulerMetrics
from eventsched.model import Pod
from eventsched.scheduler.attempts import Attempts
from eventsched.scheduler.batch import AttemptSink
from eventsched.scheduler.eviction import evict_victims
from eventsched.scheduler.idle import Changes
from eventsched.scheduler.journal import Journal
from eventsched.scheduler.options import Stats
from eventsched.scheduler.ports import Cluster
from eventsched.scheduler.queue import SchedulingQueue
from eventsched.view import ClusterView

log = structlog.get_logger(__name__)


class Failures:
    """Records, requeues and reports attempts that placed no pod."""

    def __init__(
        self,
        journal: Journal,
        view: ClusterView,
        queue: SchedulingQueue,
        cluster: Cluster,
        handle: Handle,
        attempts: Attempts,
        changes: Changes,
        stats: Stats,
        metrics: SchedulerMetrics | None,
        progress: Callable[[], None],
    ) -> None:
        self.journal = journal
        self.view = view
        self.queue = queue
        self.cluster = cluster
        self.handle = handle
        self.attempts = attempts
        self.changes = changes
        self.stats = stats
        self.metrics = metrics
        #: Told after each outcome the cluster hears of (a bound pod, a failure reported).
        self.progress = progress
        #: Pods whose latest attempt failed, with the message their FailedScheduling carries.
        self.last_failure: dict[str, tuple[Pod, str]] = {}

    def unschedulable(
        self,
        fw: Framework,
        state: CycleState,
        info: QueuedPodInfo,
        sink: AttemptSink,
        err: FitError,
    ) -> None:
        """No node fits: PostFilter (preemption) first, then the failure."""
        diagnosis = err.diagnosis
        pod = info.pod
        result = run_post_filter(fw, state, pod, self.view.table, diagnosis)
        if self.metrics is not None and state.preemption_attempts:
            self.metrics.preemption_attempts.inc(state.preemption_attempts)
        if result is not None and result.victims:
            self.journal.after(lambda: self._evict(fw, pod, sink.attempt or "", result))
        self.stats.unschedulable += 1
        self.failed(
            fw,
            info,
            sink,
            None,
            diagnosis.message(),
            tuple(sorted(diagnosis.unschedulable_plugins)),
            result.nominated_node_name if result is not None else None,
        )

    def _evict(self, fw: Framework, pod: Pod, attempt: str, result: PostFilterResult) -> None:
        """The preemption decision is durable: evict its victims (scheduler/eviction.py)."""
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
            features=fw.profile.features,
        )

    def refused(
        self, fw: Framework, info: QueuedPodInfo, sink: AttemptSink, status: Status
    ) -> None:
        """Reserve or Permit said no: a rejection names its plugin, anything else is an error."""
        self.failed(
            fw, info, sink, status, status.message, (status.plugin,) if status.is_rejected else ()
        )

    def failed(
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
        self.attempts.finished(info.pod.uid, fw.name, "error" if error else "unschedulable")
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
        self.changes.failed(pod.uid)
        reason = "SchedulerError" if error else "Unschedulable"
        self.journal.after(lambda: self.report(pod, message, reason, nominated_node))

    def report(
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
        self.progress()

    def forget(self, uid: str) -> None:
        """The pod was placed or is gone: no failure of it is current."""
        self.last_failure.pop(uid, None)
