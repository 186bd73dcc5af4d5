"""Metrics under kube-scheduler's names, counted from a real run on the simulated cluster."""

from __future__ import annotations

import dataclasses

from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import EventStore
from eventsched.framework import Profile
from eventsched.metrics import SchedulerMetrics
from eventsched.plugins import full_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.differential.schedplugins.profile import chart_profile
from tests.scheduler.helpers import metered, metered_run, node, pod


def sample(metrics: SchedulerMetrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def test_attempts_pending_pods_extension_points_and_the_log(store: EventStore) -> None:
    cluster = SimulatedCluster(
        [node("a", cpu="2")],
        [pod("fits-1", cpu="500m"), pod("fits-2", cpu="500m"), pod("too-big", cpu="16")],
    )
    metrics = metered_run(store, cluster)

    attempts = "scheduler_schedule_attempts_total"
    assert sample(metrics, attempts, result="scheduled", profile="eventsched") == 2
    assert sample(metrics, attempts, result="unschedulable", profile="eventsched") == 1
    assert sample(metrics, attempts, result="error", profile="eventsched") == 0
    duration = "scheduler_scheduling_attempt_duration_seconds_count"
    assert sample(metrics, duration, result="scheduled", profile="eventsched") == 2
    assert sample(metrics, "scheduler_pending_pods", queue="unschedulable") == 1
    assert sample(metrics, "scheduler_pending_pods", queue="active") == 0
    incoming = "scheduler_queue_incoming_pods_total"
    assert sample(metrics, incoming, queue="active", event="PodAdd") == 3
    assert sample(metrics, incoming, queue="unschedulable", event="ScheduleAttemptFailure") == 1
    unschedulable = "scheduler_unschedulable_pods"
    assert sample(metrics, unschedulable, plugin="NodeResourcesFit", profile="eventsched") == 1
    # The algorithm's latency is observed for the pods it found a node for; the attempts
    # and the end-to-end latency (by attempts) for the pods bound.
    assert sample(metrics, "scheduler_scheduling_algorithm_duration_seconds_count") == 2
    assert sample(metrics, "scheduler_pod_scheduling_attempts_count") == 2
    assert sample(metrics, "scheduler_pod_scheduling_attempts_sum") == 2
    sli = "scheduler_pod_scheduling_sli_duration_seconds_count"
    assert sample(metrics, sli, attempts="1") == 2
    deprecated = "scheduler_pod_scheduling_duration_seconds_count"
    assert sample(metrics, deprecated, attempts="1") == 2
    assert sample(metrics, "scheduler_scheduler_cache_size", type="nodes") == 1
    # Each plugin call counts (a PreFilter's Skip does not; a Filter counts its nodes).
    evaluated = "scheduler_plugin_evaluation_total"
    fit = {"plugin": "NodeResourcesFit", "profile": "eventsched"}
    assert sample(metrics, evaluated, extension_point="PreFilter", **fit) == 3
    assert sample(metrics, evaluated, extension_point="Filter", **fit) == 3
    affinity = {"plugin": "NodeAffinity", "profile": "eventsched"}
    assert sample(metrics, evaluated, extension_point="PreFilter", **affinity) == 0

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


def test_unschedulable_pods_by_plugin_fall_when_the_pod_is_tried_again(
    store: EventStore,
) -> None:
    """A pod counts under each plugin that rejected it until it leaves the unschedulable
    pool: a node added wakes it (NodeAdd), and it binds at its second attempt."""
    cluster = SimulatedCluster([node("small", cpu="1")], [pod("big", cpu="2")])
    scheduler, metrics = metered(store, cluster, backoff=0.01)
    scheduler.run(until_idle=True)
    gauge = "scheduler_unschedulable_pods"
    assert sample(metrics, gauge, plugin="NodeResourcesFit", profile="eventsched") == 1
    cluster.add_node(node("large", cpu="4"))
    scheduler.run(until_idle=True)
    scheduler.stop()
    assert {p.name: p.node_name for p in cluster.list_pods()} == {"big": "large"}
    assert sample(metrics, gauge, plugin="NodeResourcesFit", profile="eventsched") == 0
    incoming = "scheduler_queue_incoming_pods_total"
    woken = sample(metrics, incoming, queue="active", event="NodeAdd") + sample(
        metrics, incoming, queue="backoff", event="NodeAdd"
    )
    assert woken == 1
    assert sample(metrics, "scheduler_pod_scheduling_attempts_sum") == 2
    assert sample(metrics, "scheduler_pod_scheduling_sli_duration_seconds_count", attempts="2") == 1


def test_an_unschedulable_pod_deleted_stops_counting(store: EventStore) -> None:
    """Unlike kube-scheduler v1.28, which counts a deleted pod until it restarts."""
    cluster = SimulatedCluster([node("small", cpu="1")], [pod("big", cpu="2")])
    scheduler, metrics = metered(store, cluster)
    scheduler.run(until_idle=True)
    gauge = "scheduler_unschedulable_pods"
    assert sample(metrics, gauge, plugin="NodeResourcesFit", profile="eventsched") == 1
    cluster.delete_pod("default/big")
    scheduler.run(until_idle=True)
    scheduler.stop()
    assert sample(metrics, gauge, plugin="NodeResourcesFit", profile="eventsched") == 0
    assert sample(metrics, "scheduler_pending_pods", queue="unschedulable") == 0
