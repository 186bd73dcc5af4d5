"""Prometheus metrics under kube-scheduler's names and labels, plus the event log's own.

Dashboards and alerts written for kube-scheduler
(`scheduler_schedule_attempts_total`, `scheduler_pending_pods`, ...) work
unchanged. Each Scheduler gets its own registry so that several can live in
one process (tests, replays) without colliding.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.utils import INF


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """client_golang's prometheus.ExponentialBuckets."""
    return (*(start * factor**i for i in range(count)), INF)


class SchedulerMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts_total",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
            "could not be scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            registry=r,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.pending_pods = Gauge(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type. 'active' means number of pods in "
            "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number "
            "of pods in unschedulablePods that the scheduler attempted to schedule and failed; "
            "'gated' is the number of unschedulable pods that the scheduler never attempted to "
            "schedule because they are gated.",
            ["queue"],
            registry=r,
        )
        self._extension_points: dict[tuple[str, str, str], Any] = {}
        self.extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"],
            buckets=exponential_buckets(0.0001, 2, 12),
            registry=r,
        )
        self.log_append_duration = Histogram(
            "eventsched_log_append_duration_seconds",
            "Time to append one batch of events to the event log, commit included.",
            buckets=exponential_buckets(0.0005, 2, 14),
            registry=r,
        )
        self.log_batch_events = Histogram(
            "eventsched_log_batch_events",
            "Events per appended batch (group commit).",
            buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, INF),
            registry=r,
        )
        self.log_events = Counter(
            "eventsched_log_events_total",
            "Events appended to the event log, by kind.",
            ["kind"],
            registry=r,
        )
        self.log_append_failures = Counter(
            "eventsched_log_append_failures_total",
            "Appends to the event log that failed (scheduling pauses until one succeeds).",
            registry=r,
        )
        # kube-scheduler v1.28's preemption metrics (pkg/scheduler/metrics/metrics.go).
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts_total",
            "Total preemption attempts in the cluster till now",
            registry=r,
        )
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims",
            "Number of selected preemption victims",
            buckets=exponential_buckets(1, 2, 7),
            registry=r,
        )

    def observe_extension_point(
        self, point: str, status: str, profile: str, seconds: float
    ) -> None:
        # Several observations per attempt: keep each label set's child rather
        # than asking the histogram for it (a lock and a lookup) every time.
        key = (point, status, profile)
        child = self._extension_points.get(key)
        if child is None:
            child = self._extension_points[key] = self.extension_point_duration.labels(*key)
        child.observe(seconds)

    def set_pending(self, counts: Mapping[Any, int]) -> None:
        for queue in ("active", "backoff", "unschedulable", "gated"):
            self.pending_pods.labels(queue).set(counts.get(queue, 0))
