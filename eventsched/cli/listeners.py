"""The listeners of `run` and `shadow`: HTTPS as kube-scheduler's
(`--secure-port`, authenticated and authorized through the API server), and the
plain-HTTP `--http-address` only when it is given.

kube-scheduler v1.28 has no insecure port. `--http-address` stays for the deployments
and scripts that probe or scrape over plain HTTP: off unless given, and then it
answers anyone who reaches it, as before (bind it to 127.0.0.1, or keep it for probes
inside a network policy).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import structlog
from prometheus_client import CollectorRegistry

from eventsched._httpserver import Security
from eventsched.cli import secureserving
from eventsched.cli.secureserving import SecureServing, ServingFlagError
from eventsched.cli.serve import Check, Endpoints, parse_address
from eventsched.cluster.kube.connection import Api

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Serving:
    """What the flags ask to serve, checked (files loaded, addresses parsed)."""

    secure: SecureServing | None
    http_address: str | None


def check_serving(args: argparse.Namespace) -> Serving:
    """The serving flags, checked before anything starts: one line naming the flag."""
    secure = secureserving.secure_serving(args)
    if args.http_address is not None:
        _, port = parse_address(args.http_address)
        if secure is not None and port == secure.port:
            raise ServingFlagError(
                f"--http-address {args.http_address} is on --secure-port {port}, where HTTPS is "
                "now served (as kube-scheduler's): drop --http-address, move it to another "
                "port, or give --secure-port 0 to serve plain HTTP only"
            )
    return Serving(secure, args.http_address)


def start_endpoints(
    serving: Serving,
    api: Api,
    registry: CollectorRegistry,
    readiness: Callable[[], Sequence[Check]],
    liveness: Callable[[], Sequence[Check]] | None = None,
) -> list[Endpoints]:
    """The listeners asked for, started; a port that cannot be bound raises one line."""
    started: list[Endpoints] = []
    try:
        if serving.secure is not None:
            secure = serving.secure
            try:
                endpoints = Endpoints(
                    secure.address, registry, readiness, liveness, security=security(secure, api)
                )
            except OSError as exc:
                raise secure_port_taken(secure, exc) from None
            started.append(endpoints)
        if serving.http_address is not None:
            try:
                endpoints = Endpoints(serving.http_address, registry, readiness, liveness)
            except OSError as exc:
                raise http_address_taken(serving.http_address, exc) from None
            log.warning(
                "serving /metrics over plain HTTP without authentication",
                address=serving.http_address,
            )
            started.append(endpoints)
    except BaseException:
        stop_endpoints(started)
        raise
    for endpoints in started:
        endpoints.start()
    return started


def security(secure: SecureServing, api: Api) -> Security:
    """The HTTPS listener's TLS context and guard, its reviews asked of `api`'s server."""
    from eventsched._httpguard import Guard
    from eventsched.cluster.kube.reviews import Reviews

    return Security(secure.context, Guard(Reviews(api), secure.always_allow_paths))


def secure_port_taken(secure: SecureServing, exc: OSError) -> ServingFlagError:
    return ServingFlagError(
        f"--secure-port {secure.port} (--bind-address {secure.bind_address}): {exc.strerror or exc}"
    )


def http_address_taken(address: str, exc: OSError) -> ServingFlagError:
    return ServingFlagError(f"--http-address {address}: {exc.strerror or exc}")


def stop_endpoints(endpoints: Sequence[Endpoints]) -> None:
    for one in endpoints:
        one.stop()
