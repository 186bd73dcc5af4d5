"""Metrics under kube-scheduler's names, counted from a real run on the simulated cluster."""

from __future__ import annotations

from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import EventStore
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from eventsched.scheduler.metrics import SchedulerMetrics
from tests.scheduler.helpers import node, pod


def sample(metrics: SchedulerMetrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def test_attempts_pending_pods_extension_points_and_the_log(store: EventStore) -> None:
    cluster = SimulatedCluster(
        [node("a", cpu="2")],
        [pod("fits-1", cpu="500m"), pod("fits-2", cpu="500m"), pod("too-big", cpu="16")],
    )
    metrics = SchedulerMetrics()
    scheduler = Scheduler(
        store,
        cluster,
        [default_profile()],
        in_tree_registry(),
        SchedulerOptions(initial_backoff=30, max_backoff=30),
        metrics=metrics,
    )
    scheduler.start()
    scheduler.run(until_idle=True)
    scheduler.stop()

    attempts = "scheduler_schedule_attempts_total"
    assert sample(metrics, attempts, result="scheduled", profile="eventsched") == 2
    assert sample(metrics, attempts, result="unschedulable", profile="eventsched") == 1
    assert sample(metrics, attempts, result="error", profile="eventsched") == 0
    duration = "scheduler_scheduling_attempt_duration_seconds_count"
    assert sample(metrics, duration, result="scheduled", profile="eventsched") == 2
    assert sample(metrics, "scheduler_pending_pods", queue="unschedulable") == 1
    assert sample(metrics, "scheduler_pending_pods", queue="active") == 0

    points = "scheduler_framework_extension_point_duration_seconds_count"
    assert (
        sample(metrics, points, extension_point="PreFilter", status="Success", profile="eventsched")
        == 3
    )
    assert (
        sample(metrics, points, extension_point="Reserve", status="Success", profile="eventsched")
        == 2
    )
    assert (
        sample(metrics, points, extension_point="Bind", status="Success", profile="eventsched") == 2
    )

    appended = sum(
        s.value
        for m in metrics.registry.collect()
        if m.name == "eventsched_log_events"
        for s in m.samples
        if s.name == "eventsched_log_events_total"
    )
    assert appended == store.last_position()
    assert sample(metrics, "eventsched_log_events_total", kind="bound") == 2
    assert sample(metrics, "eventsched_log_append_duration_seconds_count") >= 1
