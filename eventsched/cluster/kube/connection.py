"""Reaching the API server: kubeconfig or in-cluster config, and the client's limits."""

from __future__ import annotations

import os
import ssl
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import structlog
import urllib3
import yaml

from eventsched.cluster.kube.kubeconfig import (
    ApiConfiguration,
    PlainConfiguration,
    plain_in_cluster,
    plain_kubeconfig,
)
from eventsched.cluster.kube.ratelimit import TokenBucket

if TYPE_CHECKING:
    from kubernetes import client

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


class Api:
    """How to reach the API server: the `configuration` rest.py makes its connections
    from, read without the official client when the source is plain (kubeconfig.py),
    else by the official client's loader."""

    def __init__(self, configuration: ApiConfiguration) -> None:
        self.configuration = configuration


def api_client(connection: ClientConnection) -> Api:
    """From `kubeconfig` when given (or $KUBECONFIG), else the in-cluster config."""
    path = connection.kubeconfig or os.environ.get("KUBECONFIG", "")
    plain = plain_kubeconfig(path, connection.context) if path else plain_in_cluster()
    configuration: ApiConfiguration
    if plain is not None:
        configuration = plain
    else:
        configuration = _official_configuration(path, connection.context)
    # Bindings, Events and status patches run concurrently in a pool.
    configuration.connection_pool_maxsize = max(configuration.connection_pool_maxsize, 32)
    if not configuration.verify_ssl:
        warn_insecure(configuration.host)
    return Api(configuration)


def _official_configuration(path: str, context: str) -> client.Configuration:
    """The official loader's configuration; its errors become one KubeConfigError."""
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    configuration = client.Configuration()
    try:
        if path:
            config.load_kube_config(
                config_file=path, context=context or None, client_configuration=configuration
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
    return configuration


def pool_manager(configuration: ApiConfiguration, pool_size: int) -> Any:
    """The urllib3 pools to the API server. For a plain configuration, made as the
    official client's `RESTClientObject` makes them for the same fields; any other
    (proxies, socket options) is the official client's and made by it."""
    if not isinstance(configuration, PlainConfiguration):
        from kubernetes.client import rest

        return rest.RESTClientObject(configuration).pool_manager
    cert_reqs = ssl.CERT_REQUIRED if configuration.verify_ssl else ssl.CERT_NONE
    args: dict[str, Any] = {"cert_reqs": cert_reqs, "maxsize": pool_size}
    context = _tls_context(configuration, cert_reqs)
    if context is not None:
        args["ssl_context"] = context
    else:
        args.update(
            ca_certs=configuration.ssl_ca_cert,
            ca_cert_data=configuration.ca_cert_data,
            cert_file=configuration.cert_file,
            key_file=configuration.key_file,
        )
    if configuration.tls_server_name:
        args["server_hostname"] = configuration.tls_server_name
    return urllib3.PoolManager(**args)


def _tls_context(configuration: PlainConfiguration, cert_reqs: int) -> ssl.SSLContext | None:
    """One TLS context for every connection to the API server, its certificate authority
    and client certificate loaded once.

    Given only the files, urllib3 makes a context and loads them again for each
    connection it opens (about 0.5 ms of CPU each here; a start opens some thirty:
    lists, watches, Bindings, Events). The context is made as urllib3 makes its own
    (`create_urllib3_context`), so what is checked does not change. None when a file
    does not load: then urllib3 is given the files, and the first request fails with
    its words, as before.
    """
    from urllib3.util.ssl_ import create_urllib3_context

    context = create_urllib3_context(cert_reqs=cert_reqs)
    try:
        if cert_reqs == ssl.CERT_REQUIRED:
            if configuration.ssl_ca_cert or configuration.ca_cert_data:
                context.load_verify_locations(
                    configuration.ssl_ca_cert, None, configuration.ca_cert_data
                )
            else:
                context.load_default_certs()
        if configuration.cert_file:
            context.load_cert_chain(configuration.cert_file, configuration.key_file)
    except (OSError, ValueError):  # ssl.SSLError is an OSError
        return None
    return context


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
