"""The threaded HTTP server behind /metrics, the probes and the extender API.

`http.server`'s own prints a traceback to stderr for any error in a request's
thread, a client that hung up before its answer was written included (a
Prometheus scrape that timed out, a probe that gave up). Here a client gone
is one debug line and any other error one structured log line.

`SecureHTTPServer` serves the same over TLS: each connection's handshake runs in
its own thread (a client slow to shake hands holds no other), and one that fails
(a client certificate the client CA did not sign, a client that does not trust the
server's certificate) is a debug line too. `Security` is what such a listener needs
(its TLS context and its `Guard`), and `guard_refusal` asks the guard about one request.
"""

from __future__ import annotations

import socket
import socketserver
import ssl
import sys
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import structlog

from eventsched._httpguard import Guard, Refusal

log = structlog.get_logger(__name__)


class QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: object
    ) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError | ssl.SSLError | TimeoutError):
            log.debug("client went away before its answer was written", client=str(client_address))
            return
        log.exception("request failed", client=str(client_address))


#: Seconds a client has to complete the TLS handshake.
HANDSHAKE_TIMEOUT = 10.0


class SecureHTTPServer(QuietHTTPServer):
    def __init__(
        self,
        address: tuple[str, int],
        handler: type[socketserver.BaseRequestHandler],
        context: ssl.SSLContext,
    ) -> None:
        self.context = context
        super().__init__(address, handler)

    def finish_request(self, request: socket.socket, client_address: object) -> None:  # type: ignore[override]
        request.settimeout(HANDSHAKE_TIMEOUT)
        with self.context.wrap_socket(request, server_side=True) as tls:
            tls.settimeout(None)
            self.RequestHandlerClass(tls, client_address, self)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Security:
    """TLS and who may ask what: an HTTPS listener's."""

    context: ssl.SSLContext
    guard: Guard


def peer_certificate(request: BaseHTTPRequestHandler) -> dict[str, Any] | None:
    """The client certificate the handshake verified (None: the client sent none)."""
    connection = request.connection
    if isinstance(connection, ssl.SSLSocket):
        return connection.getpeercert() or None
    return None


def guard_refusal(request: BaseHTTPRequestHandler, guard: Guard) -> Refusal | None:
    """The guard's answer to `request` (None: it may go on)."""
    return guard.check(
        request.command,
        urlsplit(request.path).path,
        request.headers.get("Authorization", ""),
        peer_certificate(request),
    )
