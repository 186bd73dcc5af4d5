"""One scheduling cycle: kube-scheduler's `schedule_one.go`.

`schedule_one` pops a pod, runs the profile's scheduling cycle (PreFilter to
selection) on the view, then Reserve and Permit; every decision joins the
journal's pending batch. A placed pod's binding cycle (WaitOnPermit, PreBind,
Bind) starts on a binder thread only once that batch is durable
(bindingcycles.py). Failures are recorded, requeued, and only then told to the
cluster (failure.py).
"""

from __future__ import annotations

import random
import secrets
import time

from eventsched.framework import (
    ASSUMED_VOLUMES_KEY,
    IDENTITY_KEY,
    CycleState,
    FitError,
    Framework,
    QueuedPodInfo,
    SchedulingError,
    schedule_pod,
)
from eventsched.framework.runtime.instrumented import SAMPLE_PERCENT
from eventsched.metrics import SchedulerMetrics
from eventsched.scheduler.attempts import Attempts
from eventsched.scheduler.batch import AttemptSink
from eventsched.scheduler.bindingcycles import BindingCycles, Decided
from eventsched.scheduler.failure import Failures
from eventsched.scheduler.idle import Changes
from eventsched.scheduler.options import Stats
from eventsched.scheduler.profiles import Profiles
from eventsched.scheduler.queue import SchedulingQueue
from eventsched.view import ClusterView


class SchedulingCycle:
    """Decides the queue's pods one at a time, into groups of attempts per append."""

    def __init__(
        self,
        profiles: Profiles,
        view: ClusterView,
        queue: SchedulingQueue,
        attempts: Attempts,
        failures: Failures,
        binding: BindingCycles,
        changes: Changes,
        stats: Stats,
        metrics: SchedulerMetrics | None,
    ) -> None:
        self.profiles = profiles
        self.view = view
        self.queue = queue
        self.attempts = attempts
        self.failures = failures
        self.binding = binding
        self.changes = changes
        self.stats = stats
        self.metrics = metrics
        #: Which cycles time their plugins (not the attempts' rng, whose draws are seeds).
        self.sampling = random.Random(secrets.randbits(64))
        #: Where the next attempt starts looking (`sched.nextStartNodeIndex`).
        self.next_start_index = 0
        #: Attempts decided into the pending batch (group commit), and when the first began.
        self.group_attempts = 0
        self.group_started = 0.0

    def schedule_one(self) -> bool:
        """One scheduling cycle. False when activeQ is empty."""
        info = self.queue.pop()
        if info is None:
            return False
        pod = info.pod
        fw = self.profiles[pod.scheduler_name]
        self.attempts.begin(pod.uid)
        if self.group_attempts == 0:
            self.group_started = time.monotonic()
        self.group_attempts += 1
        self.stats.attempts += 1
        started = self.attempts.start(
            fw, pod, attempts=info.attempts, start_index=self.next_start_index
        )
        sink, state = started.sink, started.state
        state.record_plugin_metrics = self.sampling.randrange(100) < SAMPLE_PERCENT
        try:
            result = schedule_pod(fw, state, pod, self.view.table, self.next_start_index)
        except FitError as err:
            self.next_start_index = err.next_start_index
            self.failures.unschedulable(fw, state, info, sink, err)
            return True
        except SchedulingError as err:
            self.next_start_index = err.next_start_index
            self.failures.failed(fw, info, sink, err.status, err.status.message, ())
            return True
        self.next_start_index = result.next_start_index
        if self.metrics is not None:
            self.metrics.algorithm_duration.observe(self.attempts.elapsed(pod.uid))
        self._reserve_and_permit(fw, state, info, sink, result.node)
        return True

    def group_full(self, attempts: int, wait: float) -> bool:
        """The group holds `attempts` attempts, or its first began `wait` seconds ago."""
        return self.group_attempts >= attempts or time.monotonic() - self.group_started >= wait

    def group_handed_off(self) -> None:
        """The group went to be appended: the next attempt begins a new group."""
        self.group_attempts = 0

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
            self.failures.refused(fw, info, sink, status)
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
            self.failures.refused(fw, info, sink, status)
            return
        permitted: dict[str, object] = {"decision": "wait" if waits else "approve"}
        if waits:
            permitted["waits"] = waits
        if not status.is_success or status.reasons:
            permitted["status"] = status.to_record()
        sink.record("permitted", permitted, node=node)
        self.changes.placed(pod.uid)  # a pod placed: others' next attempts see it
        # The decision must be durable before anything acts on it: the binding
        # cycle starts when the group this attempt belongs to is appended.
        self.binding.add(Decided(fw, state, info, node, bool(waits)))
