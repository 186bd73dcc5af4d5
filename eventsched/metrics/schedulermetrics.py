"""SchedulerMetrics: the families one scheduler exports, and what records into them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from prometheus_client import CollectorRegistry

from eventsched.metrics import eventlog, kubescheduler, kubeversions, leaderelection, restclient
from eventsched.metrics.builder import Registered, register
from eventsched.metrics.family import Family, M
from eventsched.metrics.process import register_process_collector
from eventsched.model.cache import CacheSizes

#: The version eventsched decided as before versions (framework.LEGACY_VERSION; the
#: metrics import nothing of the framework).
LEGACY_VERSION = "1.28"


class _ByRow:
    """The collectors registered, kube-scheduler's found by v1.28's row for each family
    (`rows`: what the version exports for it), the others by their own row."""

    def __init__(self, registered: Registered, rows: dict[Family[Any], Family[Any]]) -> None:
        self._registered = registered
        self._rows = rows

    def __getitem__(self, row: Family[M]) -> M:
        found = self.get(row)
        if found is None:
            raise KeyError(f"{row.name} is not exported at this version")
        return found

    def get(self, row: Family[M]) -> M | None:
        if row in kubescheduler.TABLE or row is kubeversions.CACHE_SIZE_133:
            exported = self._rows.get(row)
            return None if exported is None else self._registered[exported]
        return self._registered[row]


class SchedulerMetrics:
    """The process collector and the tables of `kubescheduler`, `restclient`,
    `leaderelection` and `eventlog`, in a registry of the Scheduler's own, with the
    calls that record into them: the scheduling loop's, the runtime's `PluginMetrics`, the
    queue's `QueueObserver`, the journal's, the API client's `RequestObserver`, the chain
    watch's and the lease's."""

    def __init__(
        self, registry: CollectorRegistry | None = None, version: str = LEGACY_VERSION
    ) -> None:
        """`version`: the Kubernetes version decided as, whose kube-scheduler's family
        names, stability and HELP the scrape shows (kubeversions.py)."""
        self.registry = registry or CollectorRegistry()
        register_process_collector(self.registry)
        rows = kubeversions.table_at(version)
        registered = register(
            self.registry,
            rows.values(),
            restclient.TABLE,
            leaderelection.TABLE,
            eventlog.TABLE,
        )
        families = _ByRow(registered, rows)
        self.schedule_attempts = families[kubescheduler.SCHEDULE_ATTEMPTS]
        self.attempt_duration = families[kubescheduler.ATTEMPT_DURATION]
        self.algorithm_duration = families[kubescheduler.ALGORITHM_DURATION]
        self.pending_pods = families[kubescheduler.PENDING_PODS]
        #: None from 1.29, which no longer shows it.
        self.pod_scheduling_duration = families.get(kubescheduler.POD_SCHEDULING_DURATION)
        self.pod_scheduling_sli_duration = families[kubescheduler.POD_SCHEDULING_SLI_DURATION]
        self.pod_scheduling_attempts = families[kubescheduler.POD_SCHEDULING_ATTEMPTS]
        self.extension_point_duration = families[kubescheduler.EXTENSION_POINT_DURATION]
        self.plugin_evaluation = families[kubescheduler.PLUGIN_EVALUATION]
        self.plugin_execution_duration = families[kubescheduler.PLUGIN_EXECUTION_DURATION]
        self.queue_incoming_pods = families[kubescheduler.QUEUE_INCOMING_PODS]
        self.permit_wait_duration = families[kubescheduler.PERMIT_WAIT_DURATION]
        #: The cache's sizes under each name the version shows (both in 1.33).
        self.cache_sizes = [
            family
            for row in (kubescheduler.CACHE_SIZE, kubeversions.CACHE_SIZE_133)
            if (family := families.get(row)) is not None
        ]
        self.unschedulable_pods = families[kubescheduler.UNSCHEDULABLE_PODS]
        self.preemption_attempts = families[kubescheduler.PREEMPTION_ATTEMPTS]
        self.preemption_victims = families[kubescheduler.PREEMPTION_VICTIMS]
        self.rest_client_requests = families[restclient.REST_CLIENT_REQUESTS]
        self.rest_client_request_duration = families[restclient.REST_CLIENT_REQUEST_DURATION]
        self.leader_election_master_status = families[leaderelection.LEADER_ELECTION_MASTER_STATUS]
        self.log_append_duration = families[eventlog.LOG_APPEND_DURATION]
        self.log_batch_events = families[eventlog.LOG_BATCH_EVENTS]
        self.log_events = families[eventlog.LOG_EVENTS]
        self.log_lag = families[eventlog.LOG_LAG]
        self.log_bytes = families[eventlog.LOG_BYTES]
        self.log_unreachable = families[eventlog.LOG_UNREACHABLE]
        self.log_chain_checks = families[eventlog.LOG_CHAIN_CHECKS]
        self.log_chain_verified_position = families[eventlog.LOG_CHAIN_VERIFIED_POSITION]
        self.log_chain_broken = families[eventlog.LOG_CHAIN_BROKEN]
        self.log_append_failures = families[eventlog.LOG_APPEND_FAILURES]
        #: Each label set's child, kept: asking a family for it takes a lock and a lookup,
        #: and most are asked for several times an attempt.
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}
        #: scheduler_plugin_evaluation_total's increments not yet added (see `publish`).
        self._evaluations: dict[tuple[str, str, str], int] = {}

    def child(self, family: M, *labels: str) -> M:
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
        """`scheduler_scheduler_cache_size` (`scheduler_cache_size` from 1.33) read from the
        cache at each scrape."""
        for family in self.cache_sizes:
            family.labels("nodes").set_function(lambda: sizes().nodes)
            family.labels("pods").set_function(lambda: sizes().pods)
            family.labels("assumed_pods").set_function(lambda: sizes().assumed_pods)

    def pod_scheduled(self, attempts: int, seconds_since_first_attempt: float | None) -> None:
        """A pod bound: its attempts, and the time since its first attempt (v1.28.0 measures
        both the deprecated and the SLI duration from there), by attempts up to "15+"."""
        self.pod_scheduling_attempts.observe(attempts)
        if seconds_since_first_attempt is None:
            return
        label = "15+" if attempts >= 15 else str(attempts)
        if self.pod_scheduling_duration is not None:
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
