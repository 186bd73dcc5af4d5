"""The listeners of `eventsched extender`: HTTPS for kube-scheduler's extender client, and
plain HTTP only where `--http-address` asks for it.

The HTTPS port takes `run`'s secure serving flags (secureserving.py), on port 8888, and
needs `--client-ca-file`: the verbs are served only to a client certificate it signed,
the one kube-scheduler presents from its `extenders[].tlsConfig` (certFile, keyFile);
/metrics and the probes are guarded as `run`'s are (extenderserver/access.py says why
the two differ). The old `--listen` (plain HTTP) is refused with what replaced it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from prometheus_client import CollectorRegistry

from eventsched.cli import listeners, secureserving
from eventsched.cli.listeners import Serving
from eventsched.cli.secureserving import ServingFlagError
from eventsched.cli.serve import parse_address
from eventsched.cluster.kube.connection import Api
from eventsched.extenderserver.scheduler import ExtenderScheduler
from eventsched.extenderserver.server import Check, ExtenderMetrics, ExtenderServer

#: The extender's HTTPS port (kube-scheduler has no default for an extender's).
DEFAULT_PORT = 8888


def add_arguments(p: argparse.ArgumentParser) -> None:
    secureserving.add_arguments(p, default_port=DEFAULT_PORT)
    p.add_argument(
        "--http-address",
        default=None,
        metavar="HOST:PORT",
        help="also serve the verbs and /healthz, /readyz, /metrics here over plain HTTP, to "
        "anyone (off unless given; for a kube-scheduler whose urlPrefix is http://)",
    )
    p.add_argument("--listen", default=None, help=argparse.SUPPRESS)


def check_serving(args: argparse.Namespace) -> Serving:
    """The serving flags, checked before anything starts: one line naming the flag."""
    if args.listen is not None:
        raise ServingFlagError(
            f"--listen {args.listen}: the extender now serves HTTPS on --bind-address and "
            f"--secure-port (default 0.0.0.0:{DEFAULT_PORT}) with --client-ca-file; give "
            "--http-address HOST:PORT (and --secure-port 0) to keep serving plain HTTP"
        )
    serving = listeners.check_serving(args)
    if serving.secure is not None and not args.client_ca_file:
        raise ServingFlagError(
            f"--secure-port {serving.secure.port} needs --client-ca-file: the authority that "
            "signed kube-scheduler's client certificate (extenders[].tlsConfig.certFile); or "
            "give --secure-port 0 and --http-address HOST:PORT to serve plain HTTP"
        )
    if serving.secure is None and serving.http_address is None:
        raise ServingFlagError(
            "--secure-port 0 without --http-address: nothing would serve kube-scheduler's calls"
        )
    return serving


def start_servers(
    serving: Serving,
    api: Api,
    scheduler: Callable[[], ExtenderScheduler | None],
    registry: CollectorRegistry,
    readiness: Callable[[], Sequence[Check]],
) -> list[ExtenderServer]:
    """The listeners asked for, started; a port that cannot be bound raises one line."""
    metrics = ExtenderMetrics(registry)  # one set of families for both listeners
    return listeners.open_listeners(
        serving,
        api,
        lambda secure, security: ExtenderServer(
            secure.bind_address, secure.port, scheduler, registry, readiness, security, metrics
        ),
        lambda address: ExtenderServer(
            *parse_address(address), scheduler, registry, readiness, metrics=metrics
        ),
        "the extender verbs and /metrics",
    )
