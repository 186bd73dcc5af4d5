"""The threaded HTTP server behind /metrics, the probes and the extender API.

`http.server`'s own prints a traceback to stderr for any error in a request's
thread, a client that hung up before its answer was written included (a
Prometheus scrape that timed out, a probe that gave up). Here a client gone
is one debug line and any other error one structured log line.
"""

from __future__ import annotations

import socket
import sys
from http.server import ThreadingHTTPServer

import structlog

log = structlog.get_logger(__name__)


class QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: object
    ) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            log.debug("client went away before its answer was written", client=str(client_address))
            return
        log.exception("request failed", client=str(client_address))
