"""Reaching the API server: kubeconfig or in-cluster config, and the client's limits."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import structlog
import urllib3
import yaml
from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException

from eventsched.cluster.kube.ratelimit import TokenBucket

log = structlog.get_logger(__name__)

_insecure_warned = threading.Lock()


class KubeConfigError(Exception):
    """No usable API server configuration; the message says which source failed and why."""


@dataclass(frozen=True, slots=True)
class ClientConnection:
    """kube-scheduler's `clientConnection` (KubeSchedulerConfiguration v1), same defaults."""

    kubeconfig: str = ""
    qps: float = 50.0
    burst: int = 100
    context: str = ""


def api_client(connection: ClientConnection) -> client.ApiClient:
    """An ApiClient from `kubeconfig` when given (or $KUBECONFIG), else the in-cluster config."""
    configuration = client.Configuration()
    path = connection.kubeconfig or os.environ.get("KUBECONFIG", "")
    try:
        if path:
            config.load_kube_config(
                config_file=path,
                context=connection.context or None,
                client_configuration=configuration,
            )
        else:
            config.load_incluster_config(client_configuration=configuration)
    except (ConfigException, OSError, TypeError, ValueError, KeyError, yaml.YAMLError) as exc:
        source = f"kubeconfig {path}" if path else "the in-cluster service account"
        problem = " ".join(str(exc).split())  # YAML's errors span lines
        raise KubeConfigError(
            f"cannot configure the Kubernetes client from {source}: {problem}; "
            "pass --kubeconfig FILE (or set clientConnection.kubeconfig) when running outside a cluster"
        ) from exc
    # Bindings, Events and status patches run concurrently in a pool.
    configuration.connection_pool_maxsize = max(configuration.connection_pool_maxsize, 32)
    if not configuration.verify_ssl:
        warn_insecure(configuration.host)
    return client.ApiClient(configuration)


def warn_insecure(host: str) -> None:
    """urllib3 warns on every unverified request (the leader election's and the watches'
    included); say it once, in the structured log."""
    urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    if _insecure_warned.acquire(blocking=False):
        log.warning(
            "TLS verification of the API server is off (insecure-skip-tls-verify)", host=host
        )


def rate_limiter(connection: ClientConnection) -> TokenBucket:
    return TokenBucket(connection.qps, connection.burst)


#: (connect, read) seconds for every request but watches: a hung API server must
#: not hold a binder or recorder thread forever.
REQUEST_TIMEOUT = (5.0, 30.0)
