"""Prometheus metrics under kube-scheduler's names and labels, plus the event log's own.

Dashboards and alerts written for kube-scheduler
(`scheduler_schedule_attempts_total`, `scheduler_pending_pods`, ...) work
unchanged: each family has kube-scheduler v1.28's name, type, labels, buckets and
HELP, stability prefix included (tests/scheduler/metricsref holds a scrape of the
real one). Each Scheduler gets its own registry so that several can live in one
process (tests, replays) without colliding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    disable_created_metrics,
)
from prometheus_client.utils import INF

from eventsched.model.cache import CacheSizes

# kube-scheduler's counters and histograms have no `*_created` series; without them the
# scrape holds the same series as kube-scheduler's (process-wide, as prometheus_client has it).
disable_created_metrics()


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """client_golang's prometheus.ExponentialBuckets, multiplied step by step as it does
    (so the bounds are its floats, to the last bit)."""
    buckets = []
    for _ in range(count):
        buckets.append(start)
        start *= factor
    return (*buckets, INF)


class SchedulerMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        # process_cpu_seconds_total, process_resident_memory_bytes, ... as client_golang's
        # process collector names them (read from /proc at each scrape).
        ProcessCollector(registry=r)
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts_total",
            "[STABLE] Number of attempts to schedule pods, by the result. 'unschedulable' means "
            "a pod could not be scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            registry=r,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.algorithm_duration = Histogram(
            "scheduler_scheduling_algorithm_duration_seconds",
            "[ALPHA] Scheduling algorithm latency in seconds",
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.pending_pods = Gauge(
            "scheduler_pending_pods",
            "[STABLE] Number of pending pods, by the queue type. 'active' means number of pods "
            "in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means "
            "number of pods in unschedulablePods that the scheduler attempted to schedule and "
            "failed; 'gated' is the number of unschedulable pods that the scheduler never "
            "attempted to schedule because they are gated.",
            ["queue"],
            registry=r,
        )
        self.pod_scheduling_duration = Histogram(
            "scheduler_pod_scheduling_duration_seconds",
            "[STABLE] (Deprecated since 1.28.0) E2e latency for a pod being scheduled which may "
            "include multiple scheduling attempts.",
            ["attempts"],
            buckets=exponential_buckets(0.01, 2, 20),
            registry=r,
        )
        self.pod_scheduling_sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "[BETA] E2e latency for a pod being scheduled, from the time the pod enters the "
            "scheduling queue an d might involve multiple scheduling attempts.",
            ["attempts"],
            buckets=exponential_buckets(0.01, 2, 20),
            registry=r,
        )
        self.pod_scheduling_attempts = Histogram(
            "scheduler_pod_scheduling_attempts",
            "[STABLE] Number of attempts to successfully schedule a pod.",
            buckets=exponential_buckets(1, 2, 5),
            registry=r,
        )
        #: Each label set's child, kept: asking a family for it takes a lock and a lookup,
        #: and most are asked for several times an attempt.
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}
        #: scheduler_plugin_evaluation_total's increments not yet added (see `publish`).
        self._evaluations: dict[tuple[str, str, str], int] = {}
        self.extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "[STABLE] Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"],
            buckets=exponential_buckets(0.0001, 2, 12),
            registry=r,
        )
        self.plugin_evaluation = Counter(
            "scheduler_plugin_evaluation_total",
            "[ALPHA] Number of attempts to schedule pods by each plugin and the extension point "
            "(available only in PreFilter and Filter.).",
            ["plugin", "extension_point", "profile"],
            registry=r,
        )
        self.plugin_execution_duration = Histogram(
            "scheduler_plugin_execution_duration_seconds",
            "[ALPHA] Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"],
            buckets=exponential_buckets(0.00001, 1.5, 20),
            registry=r,
        )
        self.queue_incoming_pods = Counter(
            "scheduler_queue_incoming_pods_total",
            "[STABLE] Number of pods added to scheduling queues by event and queue type.",
            ["queue", "event"],
            registry=r,
        )
        self.permit_wait_duration = Histogram(
            "scheduler_permit_wait_duration_seconds",
            "[ALPHA] Duration of waiting on permit.",
            ["result"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.cache_size = Gauge(
            "scheduler_scheduler_cache_size",
            "[ALPHA] Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
            ["type"],
            registry=r,
        )
        self.unschedulable_pods = Gauge(
            "scheduler_unschedulable_pods",
            "[ALPHA] The number of unschedulable pods broken down by plugin name. A pod will "
            "increment the gauge for all plugins that caused it to not schedule and so this "
            "metric have meaning only when broken down by plugin.",
            ["plugin", "profile"],
            registry=r,
        )
        # kube-scheduler v1.28's preemption metrics (pkg/scheduler/metrics/metrics.go).
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts_total",
            "[STABLE] Total preemption attempts in the cluster till now",
            registry=r,
        )
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims",
            "[STABLE] Number of selected preemption victims",
            buckets=exponential_buckets(1, 2, 7),
            registry=r,
        )
        # client-go's rest_client metrics, for the API client (cluster/kube/rest.py).
        self.rest_client_requests = Counter(
            "rest_client_requests_total",
            "[ALPHA] Number of HTTP requests, partitioned by status code, method, and host.",
            ["code", "method", "host"],
            registry=r,
        )
        self.rest_client_request_duration = Histogram(
            "rest_client_request_duration_seconds",
            "[ALPHA] Request latency in seconds. Broken down by verb, and host.",
            ["verb", "host"],
            buckets=(0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0, INF),
            registry=r,
        )
        # client-go's leader election metric (cluster/kube/election.py).
        self.leader_election_master_status = Gauge(
            "leader_election_master_status",
            "[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 "
            "indicates backup, 1 indicates master. 'name' is the string used to identify the "
            "lease. Please make sure to group by name.",
            ["name"],
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
        self.log_lag = Histogram(
            "eventsched_log_lag_seconds",
            "Seconds from the first event of a batch (a decision, an observation) being made to "
            "the batch being durable in the event log: the longest any event of it waited, "
            "group commit and outages included.",
            buckets=exponential_buckets(0.001, 2, 16),
            registry=r,
        )
        self.log_bytes = Counter(
            "eventsched_log_bytes_total",
            "Bytes of event data (canonical JSON) appended to the event log.",
            registry=r,
        )
        self.log_unreachable = Gauge(
            "eventsched_log_unreachable",
            "1 while appends to the event log fail (the database is down or refuses): "
            "scheduling is paused; 0 once an append succeeds.",
            registry=r,
        )
        self.log_chain_checks = Counter(
            "eventsched_log_chain_checks_total",
            "Checks of the hash chain over the batches appended since the previous check, by "
            "result: ok, broken (an event edited, deleted or inserted after it was appended), "
            "error (the database did not answer).",
            ["result"],
            registry=r,
        )
        self.log_chain_verified_position = Gauge(
            "eventsched_log_chain_verified_position",
            "The last log position whose batch hash this process has verified.",
            registry=r,
        )
        self.log_chain_broken = Gauge(
            "eventsched_log_chain_broken",
            "1 once a check found the hash chain broken (see the log line and `eventsched "
            "replay`), else 0.",
            registry=r,
        )
        self.log_append_failures = Counter(
            "eventsched_log_append_failures_total",
            "Appends to the event log that failed (scheduling pauses until one succeeds).",
            registry=r,
        )

    def child(self, family: Any, *labels: str) -> Any:
        """`family.labels(*labels)`, kept after the first time (any thread may ask)."""
        key = (id(family), labels)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = family.labels(*labels)
        return found

    def observe_extension_point(
        self, point: str, status: str, profile: str, seconds: float
    ) -> None:
        self.child(self.extension_point_duration, point, status, profile).observe(seconds)

    def attempt(self, result: str, profile: str, seconds: float | None) -> None:
        """An attempt's outcome (`scheduled` once bound) and, when known, its duration."""
        self.child(self.schedule_attempts, result, profile).inc()
        if seconds is not None:
            self.child(self.attempt_duration, result, profile).observe(seconds)

    # -- the runtime's PluginMetrics (framework/runtime/instrumented.py) -----------------

    def plugin_evaluated(self, plugin: str, point: str, profile: str, count: int) -> None:
        """Counted here, added to `scheduler_plugin_evaluation_total` by `publish`: about
        twenty a scheduling cycle, which the counter's own call and lock would cost more."""
        key = (plugin, point, profile)
        self._evaluations[key] = self._evaluations.get(key, 0) + count

    def publish(self) -> None:
        """Add the plugin evaluations counted since the last call to their counters.

        The scheduling loop, the only caller of `plugin_evaluated`, calls this after each
        append, so a scrape sees every attempt whose decision is in the log (as
        kube-scheduler's own metrics recorder adds some of its metrics once a second).
        """
        counted, self._evaluations = self._evaluations, {}
        for (plugin, point, profile), count in counted.items():
            self.child(self.plugin_evaluation, plugin, point, profile).inc(count)

    def plugin_executed(self, plugin: str, point: str, status: str, seconds: float) -> None:
        self.child(self.plugin_execution_duration, plugin, point, status).observe(seconds)

    def set_pending(self, counts: Mapping[Any, int]) -> None:
        for queue in ("active", "backoff", "unschedulable", "gated"):
            self.child(self.pending_pods, queue).set(counts.get(queue, 0))

    def watch_cache(self, sizes: Callable[[], CacheSizes]) -> None:
        """`scheduler_scheduler_cache_size` read from the cache at each scrape."""
        self.cache_size.labels("nodes").set_function(lambda: sizes().nodes)
        self.cache_size.labels("pods").set_function(lambda: sizes().pods)
        self.cache_size.labels("assumed_pods").set_function(lambda: sizes().assumed_pods)

    def pod_scheduled(self, attempts: int, seconds_since_first_attempt: float | None) -> None:
        """A pod bound: its attempts, and the time since its first attempt (v1.28.0 measures
        both the deprecated and the SLI duration from there), by attempts up to "15+"."""
        self.pod_scheduling_attempts.observe(attempts)
        if seconds_since_first_attempt is None:
            return
        label = "15+" if attempts >= 15 else str(attempts)
        self.child(self.pod_scheduling_duration, label).observe(seconds_since_first_attempt)
        self.child(self.pod_scheduling_sli_duration, label).observe(seconds_since_first_attempt)

    # -- the queue's observer (scheduler/queue.py's QueueObserver) ----------------------

    def incoming(self, queue: str, event: str) -> None:
        self.child(self.queue_incoming_pods, queue, event).inc()

    def unschedulable(self, plugins: Iterable[str], profile: str, delta: int) -> None:
        for plugin in plugins:
            self.child(self.unschedulable_pods, plugin, profile).inc(delta)

    def api_request(self, host: str, method: str, code: str, seconds: float | None) -> None:
        """One API request (cluster/kube/rest.py's RequestObserver); `seconds` is None for
        a watch, which client-go counts but does not time. On the binder threads too."""
        self.child(self.rest_client_requests, code, method, host).inc()
        if seconds is not None:
            self.child(self.rest_client_request_duration, method, host).observe(seconds)

    def chain_checked(self, result: str, position: int) -> None:
        """One check of the hash chain (events/chainwatch.py): its result and where it got."""
        self.log_chain_checks.labels(result).inc()
        if result == "broken":
            self.log_chain_broken.set(1)
        elif result == "ok":
            self.log_chain_verified_position.set(position)

    def leader_status(self, lease: str, leading: bool) -> None:
        self.leader_election_master_status.labels(lease).set(1 if leading else 0)

    def permit_waited(self, result: str, seconds: float) -> None:
        self.permit_wait_duration.labels(result).observe(seconds)
