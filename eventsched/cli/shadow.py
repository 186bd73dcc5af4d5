"""`eventsched shadow`: decide beside kube-scheduler, bind nothing, record where they agree."""

from __future__ import annotations

import argparse
import threading
from collections.abc import Sequence
from dataclasses import replace

import structlog

from eventsched.cli import listeners
from eventsched.cli.commands import summary
from eventsched.cli.database import open_store
from eventsched.cli.driverstate import DriverState, run_driver
from eventsched.cli.extender import wait_for_schema
from eventsched.cli.secureserving import add_serving_arguments
from eventsched.cli.versionflags import (
    add_version_arguments,
    cluster_features,
    config_at,
    provisional_config,
)
from eventsched.cluster.kube import ClientConnection, KubeCluster, api_client
from eventsched.cluster.kube.version import VersionWaitStopped
from eventsched.config.defaults import default_profile
from eventsched.config.file import ConfigError, SchedulerConfig
from eventsched.framework import Profile
from eventsched.metrics import SchedulerMetrics
from eventsched.plugins import full_registry
from eventsched.scheduler import SchedulerOptions
from eventsched.shadow.scheduler import ShadowScheduler

log = structlog.get_logger(__name__)

#: The scheduler shadowed when none is named: kube-scheduler's default profile.
DEFAULT_SHADOWED = "default-scheduler"
#: The shadow scores every node, so that it can rank the shadowed scheduler's node.
EVERY_NODE = 100


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "shadow",
        help=summary("shadow"),
        description="Watch the cluster beside kube-scheduler and decide every pod it places, "
        "fails or nominates, against the cluster as it stood just before; record eventsched's "
        "attempt and a verdict (agree, tie or differ, with the cause). Binds, evicts and "
        "writes nothing: a get/list/watch role is enough (deploy/shadow/).",
    )
    p.add_argument(
        "--config",
        metavar="FILE",
        help="KubeSchedulerConfiguration (v1) file: give kube-scheduler's own, whose profiles "
        "name the schedulers shadowed (default: kube-scheduler's default profile)",
    )
    p.add_argument(
        "--scheduler-name",
        action="append",
        metavar="NAME",
        help="shadow the pods of this schedulerName (repeatable; default: default-scheduler)",
    )
    p.add_argument(
        "--kubeconfig",
        metavar="FILE",
        help="kubeconfig to use instead of the in-cluster service account",
    )
    add_version_arguments(p, "the API server's")
    add_serving_arguments(p)
    p.set_defaults(func=run)


def shadowed_profiles(
    config: SchedulerConfig, names: Sequence[str], from_file: bool
) -> list[Profile]:
    """The profile deciding each shadowed scheduler's pods: the configuration's profile of
    that schedulerName (without a file, or a file listing no profiles: kube-scheduler's
    default plugins), scoring every node; one line naming the fix when the file lists
    profiles but not that one."""
    profiles = []
    # A file that lists no profiles has kube-scheduler's default one, under any name.
    default = default_profile(features=config.features)
    listed = from_file and [
        replace(p, percentage_of_nodes_to_score=None) for p in config.profiles
    ] != [default]
    for name in names:
        found = next((p for p in config.profiles if p.scheduler_name == name), None)
        if found is None and listed:
            known = ", ".join(p.scheduler_name for p in config.profiles)
            raise ConfigError(
                "--scheduler-name",
                "",
                f"the configuration has no profile with schedulerName {name!r} (it has {known}): "
                "give kube-scheduler's own configuration file, or name one of its profiles",
            )
        profile = found or replace(default, scheduler_name=name)
        profiles.append(replace(profile, percentage_of_nodes_to_score=EVERY_NODE))
    return profiles


def run(args: argparse.Namespace) -> int:
    return run_driver(args, _shadow, "stopping: the log is flushed")


def _shadow(
    args: argparse.Namespace, state: DriverState[ShadowScheduler], stop: threading.Event
) -> int:
    serving = listeners.check_serving(args)  # refused before anything starts
    registry = full_registry()
    names = list(dict.fromkeys(args.scheduler_name or [DEFAULT_SHADOWED]))
    provisional = provisional_config(args, registry)
    shadowed_profiles(provisional, names, bool(args.config))  # refused before connecting
    try:
        features = cluster_features(args, stop=stop)
    except VersionWaitStopped:
        return 0  # stopped before the API server answered: nothing was started
    config = config_at(features, provisional, args, registry)
    profiles = shadowed_profiles(config, names, bool(args.config))
    percentages = {
        p.scheduler_name: p.percentage_of_nodes_to_score
        for p in config.profiles
        if p.scheduler_name in names
    }
    cc = config.client_connection
    connection = ClientConnection(
        kubeconfig=args.kubeconfig or cc.kubeconfig, qps=cc.qps, burst=cc.burst
    )
    api = api_client(connection)
    store = open_store(args.db, require_schema=False)
    metrics = SchedulerMetrics(version=config.features.version)

    endpoints = listeners.start_endpoints(serving, api, metrics.registry, state.readiness)
    try:
        if not wait_for_schema(store, stop):
            return 0
        state.schema_current = True
        cluster = KubeCluster(
            api,
            names,
            connection,
            request_threads=1,
            custom_kinds=registry.custom_kinds(
                name for profile in profiles for name in profile.plugin_names()
            ),
            observer=metrics.api_request,
            accounting=config.features.accounting,
        )
        scheduler = ShadowScheduler(
            store,
            cluster,
            profiles,
            registry,
            SchedulerOptions(),
            metrics=metrics,
            percentages=percentages,
        )
        state.scheduler = scheduler
        try:
            if scheduler.start(stop=stop):
                state.started = True
                log.info(
                    "shadowing: deciding each pod these schedulers place, binding nothing",
                    schedulers=names,
                    nodes=len(scheduler.cache.table),
                )
                scheduler.run(stop=stop)
        finally:
            scheduler.stop()
            counts = scheduler.counts
            log.info("shadow stopped", verdicts=dict(counts.verdicts), total=counts.total)
        return 0
    finally:
        listeners.stop_endpoints(endpoints)
        store.engine.dispose()
