"""`eventsched extender`: serve one profile to kube-scheduler as its scheduler extender."""

from __future__ import annotations

import argparse
import threading

import structlog

from eventsched.cli import extenderlisteners, listeners
from eventsched.cli.commands import summary
from eventsched.cli.database import open_store, wait_for_schema
from eventsched.cli.driverstate import DriverState, run_driver
from eventsched.cli.versionflags import (
    add_version_arguments,
    cluster_features,
    config_at,
    provisional_config,
)
from eventsched.cluster.kube import ClientConnection, KubeCluster, api_client
from eventsched.cluster.kube.version import VersionWaitStopped
from eventsched.config.file import ConfigError, SchedulerConfig
from eventsched.extenderserver.scheduler import ExtenderScheduler
from eventsched.framework import Profile
from eventsched.metrics import SchedulerMetrics
from eventsched.plugins import full_registry
from eventsched.scheduler import SchedulerOptions

log = structlog.get_logger(__name__)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "extender",
        help=summary("extender"),
        description="Answer kube-scheduler's extender calls (filter, prioritize, bind) with one "
        "profile of the configuration, logging every call's decision before answering it. "
        "Serves HTTPS on --secure-port to kube-scheduler's client certificate (signed by "
        "--client-ca-file): point kube-scheduler's extenders[].urlPrefix at "
        "https://HOST:PORT/ and its tlsConfig at the certificates (docs/extender.md).",
    )
    p.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (v1) file")
    p.add_argument(
        "--profile",
        metavar="NAME",
        help="the profile (schedulerName) to serve (default: the configuration's first)",
    )
    p.add_argument(
        "--kubeconfig",
        metavar="FILE",
        help="kubeconfig to use instead of the in-cluster service account",
    )
    add_version_arguments(p, "the API server's")
    extenderlisteners.add_arguments(p)
    p.set_defaults(func=run)


def served_profile(config: SchedulerConfig, name: str | None) -> Profile:
    """The profile named by --profile, else the first; one line naming the choices if absent."""
    if name is None:
        return config.profiles[0]
    for profile in config.profiles:
        if profile.scheduler_name == name:
            return profile
    known = ", ".join(p.scheduler_name for p in config.profiles)
    raise ConfigError("--profile", "", f"no profile named {name!r}; the configuration has {known}")


def run(args: argparse.Namespace) -> int:
    return run_driver(args, _serve, "stopping: in-flight bindings finish and the log is flushed")


def _serve(
    args: argparse.Namespace, state: DriverState[ExtenderScheduler], stop: threading.Event
) -> int:
    serving = extenderlisteners.check_serving(args)  # refused before anything starts
    registry = full_registry()
    provisional = provisional_config(args, registry)
    served_profile(provisional, args.profile)  # refused before connecting
    try:
        features = cluster_features(args, stop=stop)
    except VersionWaitStopped:
        return 0  # stopped before the API server answered: nothing was started
    config = config_at(features, provisional, args, registry)
    profile = served_profile(config, args.profile)
    cc = config.client_connection
    api = api_client(
        ClientConnection(kubeconfig=args.kubeconfig or cc.kubeconfig, qps=cc.qps, burst=cc.burst)
    )
    store = open_store(args.db, require_schema=False)
    metrics = SchedulerMetrics(version=config.features.version)

    servers = extenderlisteners.start_servers(
        serving, api, lambda: state.scheduler, metrics.registry, state.readiness
    )
    try:
        if not wait_for_schema(store, stop):
            return 0
        state.schema_current = True
        cluster = KubeCluster(
            api,
            # Pending pods of the served profile are observed (never queued: kube-scheduler
            # schedules them); a bind-only extender is then asked about pods it has seen.
            (profile.scheduler_name,),
            ClientConnection(kubeconfig=cc.kubeconfig, qps=cc.qps, burst=cc.burst),
            request_threads=SchedulerOptions().binder_workers,
            custom_kinds=registry.custom_kinds(profile.plugin_names()),
            observer=metrics.api_request,
            accounting=config.features.accounting,
        )
        scheduler = ExtenderScheduler(
            store,
            cluster,
            [profile],
            registry,
            SchedulerOptions(),
            metrics=metrics,
            accounting=config.features.accounting,
        )
        state.scheduler = scheduler
        try:
            if scheduler.start(stop=stop):
                state.started = True
                log.info(
                    "answering kube-scheduler's extender calls",
                    profile=profile.scheduler_name,
                    ports=[server.port for server in servers],
                    nodes=len(scheduler.cache.table),
                )
                scheduler.run(stop=stop)
        finally:
            scheduler.stop()
        return 0
    finally:
        listeners.stop_endpoints(servers)
        store.engine.dispose()
