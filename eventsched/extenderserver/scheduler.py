"""`eventsched extender`'s scheduler: `run`'s parts, wired to answer kube-scheduler's calls.

The same loop, log and view as `eventsched run`, with two differences in the wiring:
kube-scheduler schedules, so a pending pod is observed and never queued here; and the
calls kube-scheduler makes (filter, prioritize, preempt, bind) are decided on the loop thread by
`ServedCalls`, for the first profile.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from eventsched.events import EventStore
from eventsched.extenderserver.calls import Call, ServedCalls
from eventsched.framework import Profile, Registry
from eventsched.metrics import SchedulerMetrics
from eventsched.model.accounting import Accounting
from eventsched.model.cache import Cache
from eventsched.scheduler import Scheduler, SchedulerOptions
from eventsched.scheduler.ports import Cluster
from eventsched.view import ClusterView


class ExtenderScheduler:
    """A Scheduler that queues nothing, and the calls it answers for its first profile."""

    def __init__(
        self,
        store: EventStore,
        cluster: Cluster,
        profiles: Sequence[Profile],
        registry: Registry,
        options: SchedulerOptions | None = None,
        clock: Callable[[], float] = time.time,
        metrics: SchedulerMetrics | None = None,
        accounting: Accounting | None = None,
    ) -> None:
        """`accounting`: how the pods the calls carry count (default: as the served
        profile's features say)."""
        self.scheduler = scheduler = Scheduler(
            store, cluster, profiles, registry, options, clock, metrics, queue_pending=False
        )
        served = scheduler.profiles.first
        self.calls = ServedCalls(
            served,
            scheduler.view,
            scheduler.handlers,
            scheduler.attempts,
            scheduler.journal,
            scheduler.binding,
            cluster,
            scheduler.post,
            lambda: scheduler.ready,
            accounting if accounting is not None else served.profile.features.accounting,
        )

    @property
    def view(self) -> ClusterView:
        return self.scheduler.view

    @property
    def cache(self) -> Cache:
        return self.scheduler.cache

    @property
    def log_down(self) -> bool:
        return self.scheduler.log_down

    def start(self, stop: threading.Event | None = None) -> bool:
        return self.scheduler.start(stop)

    def run(self, stop: threading.Event | None = None) -> None:
        self.scheduler.run(stop)

    def stop(self) -> None:
        self.scheduler.stop()

    def submit(self, call: Call) -> Call:
        """From an HTTP handler thread: the call decided on the loop, answered when durable."""
        return self.calls.submit(call)
