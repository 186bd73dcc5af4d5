"""`eventsched run` without the command line: log, lease, informers and loop, in order.

The order is the one rule's: the schema must be current before anything is
written; only the lease holder schedules; a new leader rebuilds its state
from the log and freshly synced informers before its first attempt; a lost
lease stops scheduling at once (the process then exits, as kube-scheduler
does, and is restarted as a candidate).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog
from sqlalchemy.exc import SQLAlchemyError

from eventsched.cli.database import refuse_slice
from eventsched.cli.gctuning import collection_paused, resume_collection
from eventsched.cli.serve import Check
from eventsched.cluster.kube import ClientConnection, KubeCluster
from eventsched.cluster.kube.connection import Api
from eventsched.cluster.kube.prefetch import Prefetch
from eventsched.config.file import SchedulerConfig
from eventsched.events import EventStore, EventStoreError, SchemaOutdatedError, check_schema
from eventsched.events.chainwatch import ChainCheck, ChainWatch
from eventsched.framework import Features, Registry
from eventsched.metrics import SchedulerMetrics
from eventsched.scheduler import Scheduler, SchedulerOptions

if TYPE_CHECKING:
    from kubernetes import client

    from eventsched.cluster.kube.election import LeaderElector

log = structlog.get_logger(__name__)

#: Exit status after losing the lease: a restart makes this process a candidate again.
EXIT_LEASE_LOST = 1
#: Seconds a candidate may take to lead and still use the first lists asked for at its
#: start (a restarted leader takes the lease it released at once).
PREFETCH_LEAD_WAIT = 5.0
#: Seconds a readiness ping of the event log is reused: probes from several sources cost one query.
LOG_PING_EVERY = 2.0


@dataclass(slots=True)
class RunnerState:
    schema_current: bool = False
    role: str = "starting"  # starting, standby, leading, stopped
    synced: bool = False
    rebuilt: bool = False
    lease_lost: bool = False


class Runner:
    def __init__(
        self,
        store: EventStore,
        config: SchedulerConfig,
        api: Api | client.ApiClient,
        registry: Registry,
        identity: str | None = None,
        options: SchedulerOptions | None = None,
        verify_chain_every: float = 60.0,
        prefetch: Prefetch | None = None,
        owns_process: bool = False,
        stop: threading.Event | None = None,
    ) -> None:
        """`verify_chain_every`: seconds between checks of the batches appended since the
        last one (events/chainwatch.py); 0 turns the watch off. `prefetch`: the first lists
        of nodes and pods, asked for already (taken when this process leads at once).
        `owns_process`: the process is this runner's (the `run` command): what its start
        built is frozen out of the garbage collector's walks (`resume_collection`). `stop`: set
        to stop (the command's signal thread sets it); a new one if not given."""
        self.store = store
        self.config = config
        self.api = api
        self.registry = registry
        self.identity = identity
        self.options = options or SchedulerOptions(
            initial_backoff=config.pod_initial_backoff_seconds,
            max_backoff=config.pod_max_backoff_seconds,
        )
        self.metrics = SchedulerMetrics(version=config.features.version)
        self.chain_watch = (
            ChainWatch(store, verify_chain_every, self._chain_checked)
            if verify_chain_every > 0
            else None
        )
        self.stop = stop or threading.Event()
        self.state = RunnerState()
        self.prefetch = prefetch
        self.owns_process = owns_process
        self.scheduler: Scheduler | None = None
        self.elector: LeaderElector | None = None
        self._ping_lock = threading.Lock()
        self._pinged_at = float("-inf")
        self._log_reachable = True

    # -- what the endpoints report ---------------------------------------------

    def readiness(self) -> Sequence[Check]:
        """Ready: schema current and, when leading, informers synced and state rebuilt.

        A standby replica is ready as soon as the schema is: it serves
        /metrics and waits for the lease, as kube-scheduler's standbys do.
        """
        s = self.state
        checks: list[Check] = [
            ("event-log-schema", s.schema_current, "run `eventsched db upgrade`"),
        ]
        if s.role == "leading":
            checks.append(("informer-sync", s.synced, "waiting for nodes and pods"))
            checks.append(("state-rebuilt", s.rebuilt, "folding the event log"))
            log_ok = self.scheduler is not None and not self.scheduler.log_down
            checks.append(("event-log-writable", log_ok, "appends fail; scheduling paused"))
            checks.append(("event-log-reachable", self._ping_log(), "the database does not answer"))
        elif s.role == "stopped":
            checks.append(("running", False, "shutting down"))
        return checks

    def _ping_log(self) -> bool:
        """Ask the database, at most every LOG_PING_EVERY seconds, whether it answers.

        An idle scheduler appends nothing, so `log_down` alone would keep a
        replica ready for as long as no pod arrives after its database went
        away. The ping does not pause scheduling: the next append decides that.
        """
        with self._ping_lock:
            now = time.monotonic()
            if now - self._pinged_at < LOG_PING_EVERY:
                return self._log_reachable
            self._pinged_at = now
            was = self._log_reachable
            try:
                self.store.last_position()
            except EventStoreError as exc:
                self._log_reachable = False
                if was:
                    log.error("event log unreachable (not ready)", error=str(exc))
            else:
                self._log_reachable = True
                if not was:
                    log.info("event log reachable again")
            return self._log_reachable

    def liveness(self) -> Sequence[Check]:
        return (("ping", True, ""), ("leader-election", not self.state.lease_lost, "lease lost"))

    # -- the run ----------------------------------------------------------------

    def run(self) -> int:
        try:
            if not self._wait_for_schema():
                return 0
            if self.chain_watch is not None:
                self.chain_watch.start()
            if self.config.leader_election.leader_elect:
                # A standby may wait for days: collect meanwhile (paused again to start).
                resume_collection()
            if self.config.leader_election.leader_elect and not self._lead():
                # Stopped while standing by (0), or the election itself failed.
                return EXIT_LEASE_LOST if self.state.lease_lost else 0
            return self._schedule()
        finally:
            self.state.role = "stopped"
            if self.chain_watch is not None:
                self.chain_watch.stop()
            if self.elector is not None and not self.state.lease_lost:
                self.elector.release()

    def _chain_checked(self, check: ChainCheck) -> None:
        self.metrics.chain_checked(check.result, check.reached.position)

    def _wait_for_schema(self) -> bool:
        delay = 1.0
        while not self.stop.is_set():
            try:
                check_schema(self.store.engine)
            except SchemaOutdatedError as exc:
                log.warning("waiting for the event log schema (not ready)", problem=str(exc))
            except (EventStoreError, SQLAlchemyError) as exc:
                log.warning(
                    "event log unreachable; retrying (not ready)",
                    error=str(exc).splitlines()[0],
                    retry_seconds=delay,
                )
            else:
                refuse_slice(self.store)
                self.state.schema_current = True
                return True
            self.stop.wait(delay)
            delay = min(delay * 2, 30.0)
        return False

    def _lead(self) -> bool:
        # Imported here: not needed when election is off.
        from eventsched.cluster.kube.election import LeaseSettings, lease_elector

        le = self.config.leader_election
        settings = LeaseSettings(
            leader_elect=True,
            lease_duration=le.lease_duration,
            renew_deadline=le.renew_deadline,
            retry_period=le.retry_period,
            resource_name=le.resource_name,
            resource_namespace=le.resource_namespace,
        )
        self.elector = lease_elector(
            self.api.configuration,
            settings,
            self.identity,
            on_lost=self._lease_lost,
            on_status=self.metrics.leader_status,
            observer=self.metrics.api_request,
        )
        self.state.role = "standby"
        self.elector.start()
        if self.prefetch is not None and not self.elector.wait_leading(
            self.stop, PREFETCH_LEAD_WAIT
        ):
            # A standby: what was listed at its start is dropped; it lists when it leads.
            self.prefetch.discard()
            self.prefetch = None
        return self.elector.wait_leading(self.stop)

    def _lease_lost(self) -> None:
        self.state.lease_lost = True
        self.stop.set()

    def _schedule(self) -> int:
        self.state.role = "leading"
        cc = self.config.client_connection
        cluster = KubeCluster(
            self.api,
            self.config.scheduler_names,
            ClientConnection(kubeconfig=cc.kubeconfig, qps=cc.qps, burst=cc.burst),
            request_threads=self.options.binder_workers,
            custom_kinds=self.registry.custom_kinds(
                name for profile in self.config.profiles for name in profile.plugin_names()
            ),
            observer=self.metrics.api_request,
            prefetch=self.prefetch,
            accounting=self.config.features.accounting,
            observed_generation_tracking=_observed_generation_gate(self.config.features),
        )
        self.prefetch = None
        scheduler = Scheduler(
            self.store,
            cluster,
            self.config.profiles,
            self.registry,
            self.options,
            metrics=self.metrics,
        )
        self.scheduler = scheduler
        try:
            with collection_paused():
                started = scheduler.start(stop=self.stop)
            # Paused since the process began (cli/main.py), or by the above.
            resume_collection(freeze=started and self.owns_process)
            self.state.synced = self.state.rebuilt = started
            if started:
                log.info(
                    "scheduling",
                    profiles=list(self.config.scheduler_names),
                    nodes=len(scheduler.cache.table),
                )
                scheduler.run(stop=self.stop)
        finally:
            if self.state.lease_lost:
                scheduler.abandon()
            else:
                scheduler.stop()
        if self.state.lease_lost:
            log.error("leaderelection lost; exiting so that a restart rejoins as a candidate")
            return EXIT_LEASE_LOST
        return 0


def _observed_generation_gate(features: Features) -> bool | None:
    """PodObservedGenerationTracking as the cluster is told it: None before v1.34, whose
    kube-scheduler writes no observedGeneration (cluster/kube/observedgeneration.py)."""
    return features.pod_observed_generation_tracking if features.since("1.34") else None
