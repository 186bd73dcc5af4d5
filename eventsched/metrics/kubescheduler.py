"""kube-scheduler v1.28's own families (its pkg/scheduler/metrics), as its scrape shows them.

Dashboards and alerts written for kube-scheduler read these unchanged; what records into
each is `SchedulerMetrics` (docs/metrics.md says when).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from eventsched.metrics.family import Family, exponential_buckets

SCHEDULE_ATTEMPTS = Family(
    Counter,
    "scheduler_schedule_attempts_total",
    "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could "
    "not be scheduled, while 'error' means an internal scheduler problem.",
    ("result", "profile"),
    stability="STABLE",
)
ATTEMPT_DURATION = Family(
    Histogram,
    "scheduler_scheduling_attempt_duration_seconds",
    "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
    ("result", "profile"),
    buckets=exponential_buckets(0.001, 2, 15),
    stability="STABLE",
)
ALGORITHM_DURATION = Family(
    Histogram,
    "scheduler_scheduling_algorithm_duration_seconds",
    "Scheduling algorithm latency in seconds",
    buckets=exponential_buckets(0.001, 2, 15),
    stability="ALPHA",
)
PENDING_PODS = Family(
    Gauge,
    "scheduler_pending_pods",
    "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
    "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
    "unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the "
    "number of unschedulable pods that the scheduler never attempted to schedule because "
    "they are gated.",
    ("queue",),
    stability="STABLE",
)
POD_SCHEDULING_DURATION = Family(
    Histogram,
    "scheduler_pod_scheduling_duration_seconds",
    "E2e latency for a pod being scheduled which may include multiple scheduling attempts.",
    ("attempts",),
    buckets=exponential_buckets(0.01, 2, 20),
    stability="STABLE",
    deprecated_since="1.28.0",
)
POD_SCHEDULING_SLI_DURATION = Family(
    Histogram,
    "scheduler_pod_scheduling_sli_duration_seconds",
    # "an d": v1.28.0's HELP, typo included.
    "E2e latency for a pod being scheduled, from the time the pod enters the scheduling "
    "queue an d might involve multiple scheduling attempts.",
    ("attempts",),
    buckets=exponential_buckets(0.01, 2, 20),
    stability="BETA",
)
POD_SCHEDULING_ATTEMPTS = Family(
    Histogram,
    "scheduler_pod_scheduling_attempts",
    "Number of attempts to successfully schedule a pod.",
    buckets=exponential_buckets(1, 2, 5),
    stability="STABLE",
)
EXTENSION_POINT_DURATION = Family(
    Histogram,
    "scheduler_framework_extension_point_duration_seconds",
    "Latency for running all plugins of a specific extension point.",
    ("extension_point", "status", "profile"),
    buckets=exponential_buckets(0.0001, 2, 12),
    stability="STABLE",
)
PLUGIN_EVALUATION = Family(
    Counter,
    "scheduler_plugin_evaluation_total",
    "Number of attempts to schedule pods by each plugin and the extension point (available "
    "only in PreFilter and Filter.).",
    ("plugin", "extension_point", "profile"),
    stability="ALPHA",
)
PLUGIN_EXECUTION_DURATION = Family(
    Histogram,
    "scheduler_plugin_execution_duration_seconds",
    "Duration for running a plugin at a specific extension point.",
    ("plugin", "extension_point", "status"),
    buckets=exponential_buckets(0.00001, 1.5, 20),
    stability="ALPHA",
)
QUEUE_INCOMING_PODS = Family(
    Counter,
    "scheduler_queue_incoming_pods_total",
    "Number of pods added to scheduling queues by event and queue type.",
    ("queue", "event"),
    stability="STABLE",
)
PERMIT_WAIT_DURATION = Family(
    Histogram,
    "scheduler_permit_wait_duration_seconds",
    "Duration of waiting on permit.",
    ("result",),
    buckets=exponential_buckets(0.001, 2, 15),
    stability="ALPHA",
)
CACHE_SIZE = Family(
    Gauge,
    "scheduler_scheduler_cache_size",
    "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
    ("type",),
    stability="ALPHA",
)
UNSCHEDULABLE_PODS = Family(
    Gauge,
    "scheduler_unschedulable_pods",
    "The number of unschedulable pods broken down by plugin name. A pod will increment the "
    "gauge for all plugins that caused it to not schedule and so this metric have meaning "
    "only when broken down by plugin.",
    ("plugin", "profile"),
    stability="ALPHA",
)
PREEMPTION_ATTEMPTS = Family(
    Counter,
    "scheduler_preemption_attempts_total",
    "Total preemption attempts in the cluster till now",
    stability="STABLE",
)
PREEMPTION_VICTIMS = Family(
    Histogram,
    "scheduler_preemption_victims",
    "Number of selected preemption victims",
    buckets=exponential_buckets(1, 2, 7),
    stability="STABLE",
)

#: All of them, in the order a scrape lists them. `scheduler_goroutines` is not among them:
#: there are no goroutines (docs/metrics.md).
TABLE = (
    SCHEDULE_ATTEMPTS,
    ATTEMPT_DURATION,
    ALGORITHM_DURATION,
    PENDING_PODS,
    POD_SCHEDULING_DURATION,
    POD_SCHEDULING_SLI_DURATION,
    POD_SCHEDULING_ATTEMPTS,
    EXTENSION_POINT_DURATION,
    PLUGIN_EVALUATION,
    PLUGIN_EXECUTION_DURATION,
    QUEUE_INCOMING_PODS,
    PERMIT_WAIT_DURATION,
    CACHE_SIZE,
    UNSCHEDULABLE_PODS,
    PREEMPTION_ATTEMPTS,
    PREEMPTION_VICTIMS,
)
