"""`--kubernetes-version` and `--feature-gates`: which Kubernetes a command decides as.

`run`, `shadow` and `extender` default to the API server's version (its `/version`); the
commands without a cluster (`simulate`, `config check`) to the newest eventsched supports.
Gates are kube-scheduler's, with its per-version defaults (`eventsched.config.featuregates`,
imported only when the flags are read: `run` asks for its first lists before it imports
the framework).
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from eventsched.cluster.kube.connection import Api
    from eventsched.config.types import SchedulerConfig
    from eventsched.framework import Features, Registry


def add_version_arguments(parser: argparse.ArgumentParser, default: str) -> None:
    """The two flags; `default` says in the help what a missing version means."""
    parser.add_argument(
        "--kubernetes-version",
        metavar="1.MINOR",
        help=f"the Kubernetes version to decide as, e.g. 1.37 or v1.37.2 (default: {default}); "
        "one eventsched does not support is refused, naming those it does",
    )
    parser.add_argument(
        "--feature-gates",
        metavar="NAME=BOOL,...",
        help="kube-scheduler's feature gates, as kube-scheduler takes them "
        "(e.g. PodLevelResources=false); unset ones take that version's defaults",
    )


def features_from_args(
    args: argparse.Namespace, server_version: Callable[[], str] | None = None
) -> Features:
    """What `--kubernetes-version` and `--feature-gates` say; without a version, the API
    server's (`server_version`), else the newest supported. Refused in one line
    (VersionError) when either is wrong."""
    from eventsched.config.featuregates import features_for, newest, parse_version

    gates = _gates(args)
    if args.kubernetes_version:
        version = parse_version(args.kubernetes_version)
    elif server_version is not None:
        version = parse_version(server_version(), "the API server's /version")
    else:
        version = newest()
    return features_for(version, gates)


def cluster_features(
    args: argparse.Namespace,
    api: Api | None = None,
    stop: threading.Event | None = None,
) -> Features:
    """`features_from_args` for a command against a cluster: without a version, the API
    server's, asked with `api` (else a client made from `--kubeconfig` or the
    configuration file's, as the command makes its own), tried again while the server
    does not answer until `stop` is set (VersionWaitStopped)."""
    from eventsched.cluster.kube.connection import ClientConnection, api_client
    from eventsched.cluster.kube.version import server_version

    def version() -> str:
        if api is not None:
            return server_version(api, stop)
        kubeconfig = args.kubeconfig or kubeconfig_in(args.config)
        return server_version(api_client(ClientConnection(kubeconfig=kubeconfig)), stop)

    return features_from_args(args, version)


def provisional_config(args: argparse.Namespace, registry: Registry) -> SchedulerConfig:
    """The configuration (`--config`, else the defaults) read before the cluster says its
    version, so that what is wrong in the file is said before anything connects.

    With `--kubernetes-version`, that version's: the configuration that runs. Without it,
    the newest version's, or the oldest's when only that one accepts the file (a plugin a
    newer kube-scheduler no longer has): the file is read again at the API server's
    version before it runs, and only what no version accepts is refused here."""
    from eventsched.config.featuregates import SUPPORTED, VersionError, features_for
    from eventsched.config.file import ConfigError, read_config

    if args.kubernetes_version:
        return read_config(args.config, registry, features_from_args(args))
    gates = _gates(args)
    try:
        return read_config(args.config, registry, features_for(SUPPORTED[-1], gates))
    except (ConfigError, VersionError) as newest_refused:
        try:
            return read_config(args.config, registry, features_for(SUPPORTED[0], gates))
        except (ConfigError, VersionError):
            raise newest_refused from None


def config_at(
    features: Features, provisional: SchedulerConfig, args: argparse.Namespace, registry: Registry
) -> SchedulerConfig:
    """The configuration that runs at `features`: the provisional one when it was read at
    them, else the file read again."""
    if provisional.features == features:
        return provisional
    from eventsched.config.file import read_config

    return read_config(args.config, registry, features)


def kubeconfig_in(path: str | None) -> str:
    """`clientConnection.kubeconfig` of the configuration file, read without checking
    the rest of it ("" when there is none or the file does not say; `load_config` checks
    the file afterwards, and a client configured from another kubeconfig drops the lists)."""
    if not path:
        return ""
    try:
        with open(path, encoding="utf-8") as f:
            doc: Any = yaml.safe_load(f)
        value = doc["clientConnection"]["kubeconfig"]
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return ""
    return value if isinstance(value, str) else ""


def _gates(args: argparse.Namespace) -> dict[str, bool]:
    from eventsched.config.featuregates import parse_feature_gates

    return parse_feature_gates(args.feature_gates or "")
