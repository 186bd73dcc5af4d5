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
from typing import Protocol, TypeVar

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


class Listener(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...


L = TypeVar("L", bound=Listener)


def start_endpoints(
    serving: Serving,
    api: Api,
    registry: CollectorRegistry,
    readiness: Callable[[], Sequence[Check]],
    liveness: Callable[[], Sequence[Check]] | None = None,
) -> list[Endpoints]:
    """The listeners asked for, started; a port that cannot be bound raises one line."""
    return open_listeners(
        serving,
        api,
        lambda secure, security: Endpoints(
            secure.address, registry, readiness, liveness, security=security
        ),
        lambda address: Endpoints(address, registry, readiness, liveness),
        "/metrics",
    )


def open_listeners(
    serving: Serving,
    api: Api,
    secure_one: Callable[[SecureServing, Security], L],
    plain_one: Callable[[str], L],
    what: str,
) -> list[L]:
    """The HTTPS listener (`secure_one`) and the plain one (`plain_one`, serving `what`
    to anyone) that `serving` asks for, started once both are bound; a port that cannot
    be bound raises one line naming its flag."""
    started: list[L] = []
    try:
        if serving.secure is not None:
            secure = serving.secure
            try:
                started.append(secure_one(secure, security(secure, api)))
            except OSError as exc:
                raise ServingFlagError(
                    f"--secure-port {secure.port} (--bind-address {secure.bind_address}): "
                    f"{exc.strerror or exc}"
                ) from None
        if serving.http_address is not None:
            try:
                started.append(plain_one(serving.http_address))
            except OSError as exc:
                raise ServingFlagError(
                    f"--http-address {serving.http_address}: {exc.strerror or exc}"
                ) from None
            log.warning(
                f"serving {what} over plain HTTP without authentication",
                address=serving.http_address,
            )
    except BaseException:
        stop_endpoints(started)
        raise
    for one in started:
        one.start()
    return started


def security(secure: SecureServing, api: Api) -> Security:
    """The HTTPS listener's TLS context and guard, its reviews asked of `api`'s server."""
    from eventsched._httpguard import Guard
    from eventsched.cluster.kube.reviews import Reviews

    return Security(secure.context, Guard(Reviews(api), secure.always_allow_paths))


def stop_endpoints(endpoints: Sequence[Listener]) -> None:
    for one in endpoints:
        one.stop()
