"""Metrics under kube-scheduler's names, counted from a real run on the simulated cluster."""

from __future__ import annotations

import dataclasses

from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import EventStore
from eventsched.framework import Profile
from eventsched.plugins import full_registry, in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from eventsched.scheduler.metrics import SchedulerMetrics
from tests.differential.schedplugins.profile import chart_profile
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


def _preemption_attempts(store: EventStore, profile: Profile) -> float:
    """scheduler_preemption_attempts_total after one pod that fits no node is tried once."""
    cluster = SimulatedCluster([node("a", cpu="2")], [pod("too-big", cpu="16")])
    metrics = SchedulerMetrics()
    scheduler = Scheduler(
        store,
        cluster,
        [profile],
        full_registry(),
        SchedulerOptions(initial_backoff=30, max_backoff=30),
        metrics=metrics,
    )
    scheduler.start()
    scheduler.run(until_idle=True)
    scheduler.stop()
    assert (
        sample(
            metrics,
            "scheduler_schedule_attempts_total",
            result="unschedulable",
            profile="eventsched",
        )
        == 1
    )
    return sample(metrics, "scheduler_preemption_attempts_total")


def test_default_preemption_counts_a_preemption_attempt(store: EventStore) -> None:
    assert _preemption_attempts(store, default_profile()) == 1


def test_each_preempting_post_filter_counts_a_preemption_attempt(store: EventStore) -> None:
    """In scheduler-plugins' chart profile CapacityScheduling runs after DefaultPreemption
    (which found no victims) and counts another attempt, as both upstream plugins count
    themselves; Coscheduling's PostFilter, between them, counts none."""
    chart = dataclasses.replace(chart_profile(), scheduler_name="eventsched")
    assert [ref.name for ref in chart.at("postFilter")] == [
        "DefaultPreemption",
        "Coscheduling",
        "CapacityScheduling",
    ]
    assert _preemption_attempts(store, chart) == 2
