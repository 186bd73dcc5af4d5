"""The API server's version (`GET /version`): the Kubernetes version `run`, `shadow` and
`extender` decide as when `--kubernetes-version` does not say."""

from __future__ import annotations

import threading

import structlog

from eventsched.cluster.kube.connection import Api
from eventsched.cluster.kube.rest import Rest, TransportError

log = structlog.get_logger(__name__)

#: Seconds between tries while the API server does not answer (doubling up to the last).
RETRY_SECONDS = (1.0, 2.0, 4.0, 8.0)
_HINT = "pass --kubernetes-version to say which Kubernetes to decide as"


class ServerVersionError(Exception):
    """The API server answered without saying its version; the message says what to pass."""


class VersionWaitStopped(Exception):
    """Stopped (a signal) while the API server had not yet answered."""


def server_version(api: Api, stop: threading.Event | None = None) -> str:
    """`gitVersion` of the API server's /version ("v1.37.2").

    While the server does not answer, tried again (1, 2, 4, then every 8 s, each try
    logged with why), as kube-scheduler keeps trying to reach a server that is down at
    its start; VersionWaitStopped when `stop` is set meanwhile. An answer without a
    version is ServerVersionError at once."""
    rest = Rest(api.configuration, pool_size=1)
    tries = 0
    while True:
        try:
            answer = rest.request("GET", "/version")
            break
        except TransportError as exc:
            wait = RETRY_SECONDS[min(tries, len(RETRY_SECONDS) - 1)]
            tries += 1
            log.warning(
                "cannot read the API server's version; retrying",
                status=0,
                error=f"no answer from the API server: {exc}",
                retry_seconds=wait,
                hint=_HINT,
            )
            if stop is None:
                stop = threading.Event()
            if stop.wait(wait):
                raise VersionWaitStopped() from exc
    body = answer.body if isinstance(answer.body, dict) else {}
    version = body.get("gitVersion")
    if not answer.ok or not isinstance(version, str) or not version:
        raise ServerVersionError(
            f"the API server's /version answered {answer.message} without a gitVersion; {_HINT}"
        )
    return version
