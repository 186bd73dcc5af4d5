"""`eventsched shadow`'s scheduler: `run`'s parts, wired to decide beside another scheduler.

The same loop, log and view as `eventsched run`, with three differences in the wiring:
another scheduler schedules, so a pending pod is observed and never queued here; the
`Shadow` sees each change before the event handlers fold it, and decides the pods
that change shows placed, failed or nominated; and the cluster is read-only.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry

from eventsched.events import EventStore
from eventsched.framework import Profile, Registry
from eventsched.metrics import SchedulerMetrics
from eventsched.metrics import shadow as shadow_metrics
from eventsched.metrics.builder import register
from eventsched.model.cache import Cache
from eventsched.scheduler import Scheduler, SchedulerOptions
from eventsched.scheduler.ports import Cluster
from eventsched.shadow.decide import Decided
from eventsched.shadow.history import LogHistory
from eventsched.shadow.readonly import ReadOnlyCluster
from eventsched.shadow.shadow import SETTLE_WINDOW, Shadow
from eventsched.view import ClusterView


@dataclass(slots=True)
class ShadowCounts:
    """The verdicts so far, by verdict (said when the shadow stops; each one's lag is in
    /metrics and in the log)."""

    verdicts: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.verdicts.values())


class ShadowMetrics:
    """The shadow's families (metrics/shadow.py), in the scheduler's registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        registered = register(registry, shadow_metrics.TABLE)
        self.verdicts = registered[shadow_metrics.SHADOW_VERDICTS]
        self.lag = registered[shadow_metrics.SHADOW_LAG]


class Settle:
    """A loop task: decide what was held long enough (Shadow.settle)."""

    def __init__(self, shadow: Shadow) -> None:
        self.shadow = shadow

    def run(self) -> None:
        self.shadow.settle()


class ShadowScheduler:
    """A Scheduler that queues nothing, watching beside the schedulers it shadows."""

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
        percentages: Mapping[str, int | None] | None = None,
        window: float = SETTLE_WINDOW,
    ) -> None:
        """`profiles`: one per shadowed scheduler, named as its pods' schedulerName, scoring
        every node. `percentages`: per scheduler, the percentageOfNodesToScore it runs with."""
        self.cluster = ReadOnlyCluster(cluster)
        self.scheduler = scheduler = Scheduler(
            store, self.cluster, profiles, registry, options, clock, metrics, queue_pending=False
        )
        self.counts = ShadowCounts()
        self.history = LogHistory(
            scheduler.journal, store.reader, scheduler.profiles.annotation_keys
        )
        self.metrics = ShadowMetrics(metrics.registry) if metrics is not None else None
        self.shadow = Shadow(
            scheduler.profiles,
            scheduler.view,
            scheduler.attempts,
            scheduler.handlers.on_change,
            self.history,
            percentages=percentages,
            window=window,
            on_verdict=self._counted,
            caught_up=scheduler.inbox.empty,
        )
        scheduler.before_change = self.shadow.before
        #: Told of each verdict after it is counted (progress, tests).
        self.on_verdict: Callable[[Decided], None] | None = None
        self._ticker: threading.Thread | None = None

    @property
    def view(self) -> ClusterView:
        return self.scheduler.view

    @property
    def cache(self) -> Cache:
        return self.scheduler.cache

    @property
    def log_down(self) -> bool:
        return self.scheduler.log_down

    @property
    def ready(self) -> bool:
        return self.scheduler.ready

    def _counted(self, decided: Decided) -> None:
        verdict = decided.judgement.verdict
        self.counts.verdicts[verdict] += 1
        if self.metrics is not None:
            self.metrics.verdicts.labels(verdict).inc()
            self.metrics.lag.observe(decided.lag)
        if self.on_verdict is not None:
            self.on_verdict(decided)

    def start(self, stop: threading.Event | None = None) -> bool:
        return self.scheduler.start(stop)

    def run(self, stop: threading.Event | None = None) -> None:
        stop = stop or threading.Event()
        self._ticker = threading.Thread(
            target=self._tick, args=(stop,), name="shadow-release", daemon=True
        )
        self._ticker.start()
        self.scheduler.run(stop)

    def _tick(self, stop: threading.Event) -> None:
        """Wake the loop to decide what was held long enough, when no change wakes it."""
        task = Settle(self.shadow)
        while not stop.wait(self.shadow.order.window / 4):
            self.scheduler.post(task)

    def stop(self) -> None:
        self.shadow.release_all()
        self.scheduler.stop()
