"""The binding cycles: started once their decisions are durable, answered on the loop.

A pod placed by its scheduling cycle waits (`Decided`) until the append that holds its
decision is durable; then its binding cycle (WaitOnPermit, PreBind, Bind: binding.py)
runs on a binder thread, and its outcome (`BindingDone`) comes back through the loop's
inbox, where it joins the pending batch. A bound pod's PostBind and `Scheduled` Event
wait until its `bound` is durable; a failed one is requeued (unless the cluster shows it
assigned or gone) and reported once that is durable.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import ParamSpec

import structlog

from eventsched.framework import ASSIGNED_POD_DELETE, CycleState, Framework, QueuedPodInfo
from eventsched.metrics import SchedulerMetrics
from eventsched.scheduler.attempts import Attempts
from eventsched.scheduler.binding import BindingDone, run_binding_cycle
from eventsched.scheduler.eventhandlers import EventHandlers
from eventsched.scheduler.failure import Failures
from eventsched.scheduler.journal import Journal
from eventsched.scheduler.moves import QueueMoves
from eventsched.scheduler.options import Stats
from eventsched.scheduler.ports import Cluster
from eventsched.scheduler.queue import SchedulingQueue

log = structlog.get_logger(__name__)

_P = ParamSpec("_P")


@dataclass(slots=True)
class Decided:
    """A pod placed by its scheduling cycle, waiting for the decision to be durable."""

    fw: Framework
    state: CycleState
    info: QueuedPodInfo
    node: str
    #: Permit said wait: the binding cycle waits on Permit first.
    waited: bool
    #: The journal's batch the decision joined (set by `BindingCycles.add`).
    batch: int = 0


class BindingCycles:
    """Runs binding cycles on a bounded pool of binder threads and handles their outcomes."""

    def __init__(
        self,
        journal: Journal,
        queue: SchedulingQueue,
        moves: QueueMoves,
        handlers: EventHandlers,
        failures: Failures,
        attempts: Attempts,
        cluster: Cluster,
        deliver: Callable[[BindingDone], None],
        *,
        workers: int,
        instance: str,
        clock: Callable[[], float],
        stats: Stats,
        metrics: SchedulerMetrics | None,
        progress: Callable[[], None],
    ) -> None:
        self.journal = journal
        self.queue = queue
        self.moves = moves
        self.handlers = handlers
        self.failures = failures
        self.attempts = attempts
        self.cluster = cluster
        #: Puts an outcome in the loop's inbox (from a binder thread).
        self.deliver = deliver
        self.instance = instance
        #: The queue's clock (QueuedPodInfo timestamps).
        self.clock = clock
        self.stats = stats
        self.metrics = metrics
        self.progress = progress
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="binder")
        #: Decisions whose binding cycles wait for their batch to be durable (pending, or
        #: with the appender).
        self.decided: list[Decided] = []
        #: Work running on the binder threads (binding cycles, an extender's Bindings).
        self.running = 0
        #: The lease is lost (Scheduler.abandon): no binding cycle starts any more.
        self.abandoned = False

    def add(self, decided: Decided) -> None:
        """A decision joined the pending batch; its binding cycle starts once it is durable."""
        decided.batch = self.journal.batch
        self.decided.append(decided)

    def start(self) -> None:
        """The decisions just made durable: their binding cycles run on the binder threads
        (none once the lease is lost: they stay open reservations for the next leader).
        Those made while the batch was with the appender wait for the next."""
        durable = self.journal.durable_batch
        decided = [each for each in self.decided if each.batch <= durable]
        if not decided:
            return
        self.decided = [each for each in self.decided if each.batch > durable]
        if self.abandoned:
            return
        for each in decided:
            self.queue.done(each.info.pod.uid)
            self.submit(self._binding_cycle, each)

    def submit(self, work: Callable[_P, object], *args: _P.args, **kwargs: _P.kwargs) -> None:
        """Run `work` on a binder thread; it counts as running until `finished` is called."""
        self.running += 1
        self.pool.submit(work, *args, **kwargs)

    def finished(self) -> None:
        """Work submitted has handed its outcome back to the loop."""
        self.running -= 1

    def shutdown(self, *, wait: bool) -> None:
        """Stop the binder threads: `wait` lets running work finish; otherwise queued work
        is dropped."""
        self.pool.shutdown(wait=wait, cancel_futures=not wait)

    def _binding_cycle(self, decided: Decided) -> None:
        """On a binder thread: WaitOnPermit, PreBind, Bind; the outcome goes to the loop's inbox."""
        self.deliver(
            run_binding_cycle(
                decided.fw,
                decided.state,
                decided.info,
                decided.node,
                decided.waited,
                self.instance,
            )
        )

    def done(self, done: BindingDone) -> None:
        """On the loop: a binding cycle's outcome joins the pending batch."""
        self.finished()
        self.journal.pending.extend(done.batch)
        pod = done.info.pod
        self.handlers.binding_answered(pod, done.ok)
        if done.ok:
            self._bound(done)
            return
        self.stats.bind_failures += 1
        self.attempts.finished(pod.uid, done.fw.name, "error")
        self.moves.on_event(ASSIGNED_POD_DELETE, "AssignedPodDelete")
        message = done.message
        # As kube-scheduler's failure handler: a pod the cluster already shows
        # assigned, or that is gone, is not requeued; any other is.
        deleted = self.handlers.deleted_while_binding(pod.uid)
        if self.handlers.cache.node_of(pod.uid) is not None or deleted:
            log.info("binding refused; the pod is assigned or gone, not requeued", pod=pod.key)
            return
        if done.code == 404:
            log.info("binding refused: the pod no longer exists", pod=pod.key)
            return
        self.moves.record([self.queue.requeue_after_binding_failure(done.info)])
        self.journal.after(lambda: self.failures.report(pod, message, "SchedulerError"))

    def _bound(self, done: BindingDone) -> None:
        pod = done.info.pod
        self.failures.forget(pod.uid)
        self.stats.bound += 1
        self.attempts.finished(pod.uid, done.fw.name, "scheduled")
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
            self.progress()

        self.journal.after(after)
