"""`eventsched run`: the long-running scheduler against a Kubernetes API server.

The first lists of nodes and pods are asked for before the scheduler is
imported (`cluster/kube/prefetch.py`): this module imports only what that
needs at the top, and the rest inside `run`.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from dataclasses import dataclass

import structlog

from eventsched.cli.arguments import seconds
from eventsched.cli.commands import summary
from eventsched.cli.secureserving import add_serving_arguments
from eventsched.cli.signals import StopSignals
from eventsched.cli.versionflags import (
    add_version_arguments,
    cluster_features,
    config_at,
    kubeconfig_in,
    provisional_config,
)
from eventsched.cluster.kube.connection import Api, ClientConnection, KubeConfigError, api_client
from eventsched.cluster.kube.prefetch import Prefetch, first_lists

log = structlog.get_logger(__name__)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help=summary("run"),
        description="Run as a named second scheduler: watch nodes and pods, schedule pending "
        "pods whose spec.schedulerName is one of the configured profiles, log every decision.",
    )
    p.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (v1) file")
    p.add_argument(
        "--kubeconfig",
        metavar="FILE",
        help="kubeconfig to use instead of the in-cluster service account "
        "(overrides clientConnection.kubeconfig)",
    )
    p.add_argument(
        "--leader-elect",
        choices=["true", "false"],
        help="override leaderElection.leaderElect",
    )
    p.add_argument(
        "--verify-chain-every",
        type=seconds,
        default=60.0,
        metavar="SECONDS",
        help="verify the hash chain of the batches appended since the previous check this "
        "often (default 60; 0: never). eventsched replay verifies the whole log",
    )
    add_version_arguments(p, "the API server's")
    add_serving_arguments(p)
    # The collector stays paused (see cli/main.py) until the scheduler has started.
    p.set_defaults(func=run, collect_after_start=True)


@dataclass(frozen=True, slots=True)
class EarlyLists:
    """The API client configured from the kubeconfig named before the configuration was
    read, and the first lists it asked for."""

    kubeconfig: str
    api: Api
    prefetch: Prefetch


def ask_for_first_lists(args: argparse.Namespace) -> EarlyLists | None:
    """Ask for the nodes and pods with the kubeconfig `--kubeconfig` or the configuration
    file names (else $KUBECONFIG or the in-cluster account, as `api_client` has it); None
    when that does not configure a client (the run says why when it configures its own)."""
    kubeconfig = args.kubeconfig or kubeconfig_in(args.config)
    try:
        api = api_client(ClientConnection(kubeconfig=kubeconfig))
    except KubeConfigError:
        return None
    return EarlyLists(kubeconfig, api, first_lists(api.configuration))


def run(args: argparse.Namespace) -> int:
    stop = threading.Event()

    def stopping(signum: signal.Signals) -> None:
        log.info(
            "stopping: no new attempts; in-flight bindings finish and the log is flushed",
            signal=signum.name,
        )
        stop.set()

    # Entered before the first thread starts (the lists asked for next): see cli/signals.py.
    with StopSignals(stopping):
        return _run(args, stop)


def _run(args: argparse.Namespace, stop: threading.Event) -> int:
    early = ask_for_first_lists(args)
    from eventsched.cli import listeners

    serving = listeners.check_serving(args)
    # Imported while the API server prepares the lists.
    from eventsched.cli.database import open_store
    from eventsched.cli.runner import Runner
    from eventsched.cluster.kube.version import VersionWaitStopped
    from eventsched.plugins import full_registry

    registry = full_registry()
    provisional = provisional_config(args, registry)  # the file's errors before connecting
    try:
        features = cluster_features(args, early.api if early is not None else None, stop)
    except VersionWaitStopped:
        return 0  # stopped before the API server answered: nothing was started
    config = config_at(features, provisional, args, registry)
    for warning in config.warnings:
        structlog.get_logger("eventsched").warning("configuration", problem=warning)
    for note in config.notes:
        structlog.get_logger("eventsched").info("configuration", note=note)
    if args.leader_elect is not None:
        from dataclasses import replace

        config = replace(
            config,
            leader_election=replace(
                config.leader_election, leader_elect=args.leader_elect == "true"
            ),
        )
    cc = config.client_connection
    kubeconfig = args.kubeconfig or cc.kubeconfig
    prefetch = None
    if early is not None and early.kubeconfig == kubeconfig:
        api, prefetch = early.api, early.prefetch
    else:
        if early is not None:
            early.prefetch.discard()
        api = api_client(ClientConnection(kubeconfig=kubeconfig, qps=cc.qps, burst=cc.burst))
    store = open_store(args.db, require_schema=False)
    runner = Runner(
        store,
        config,
        api,
        registry,
        verify_chain_every=args.verify_chain_every,
        prefetch=prefetch,
        owns_process=True,
        stop=stop,
    )
    endpoints = listeners.start_endpoints(
        serving, api, runner.metrics.registry, runner.readiness, runner.liveness
    )
    try:
        code = runner.run()
    finally:
        listeners.stop_endpoints(endpoints)
        store.engine.dispose()
    if runner.state.lease_lost:
        # As kube-scheduler: out at once. Binding cycles and writes still in flight on
        # the pools' threads are abandoned (the next leader settles what they leave);
        # the interpreter's exit would otherwise wait for each to time out.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code
