"""/healthz, /readyz and /metrics, as kube-scheduler's serving endpoints answer: over HTTPS
behind its delegated authentication and authorization (`Guard`), or over plain HTTP.

/readyz lists its checks the way the Kubernetes components do
(`[+]name ok` / `[-]name failed: ...`), so `curl /readyz?verbose` tells an
operator which condition holds a replica back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

import structlog
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from eventsched._httpguard import Guard
from eventsched._httpserver import QuietHTTPServer, SecureHTTPServer, Security, guard_refusal

log = structlog.get_logger(__name__)

#: (check name, passed, detail when it did not).
Check = tuple[str, bool, str]


def ping() -> Sequence[Check]:
    """The liveness of a process whose threads answer at all."""
    return (("ping", True, ""),)


class AddressError(ValueError):
    """A listen address that cannot be used; the message shows the expected form."""


def parse_address(address: str) -> tuple[str, int]:
    """`HOST:PORT` or `:PORT` (all interfaces); names the fix when malformed."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise AddressError(
            f"--http-address {address!r}: expected HOST:PORT, e.g. 0.0.0.0:10259 or :10259"
        )
    return host.strip("[]") or "0.0.0.0", int(port)


class Endpoints:
    def __init__(
        self,
        address: str,
        registry: CollectorRegistry,
        readiness: Callable[[], Sequence[Check]],
        liveness: Callable[[], Sequence[Check]] | None = None,
        security: Security | None = None,
    ) -> None:
        host, port = parse_address(address)
        endpoints = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 60  # a client that stops sending holds its thread no longer

            def do_GET(self) -> None:
                if security is None or endpoints._let_through(self, security.guard):
                    endpoints._answer(self)

            def log_message(self, format: str, *args: object) -> None:
                pass  # probes every few seconds would drown the log

        self.registry = registry
        self.readiness = readiness
        self.liveness = liveness or ping
        self.scheme = "http" if security is None else "https"
        self.server = (
            QuietHTTPServer((host, port), Handler)
            if security is None
            else SecureHTTPServer((host, port), Handler, security.context)
        )
        self._thread = threading.Thread(
            target=self.server.serve_forever, name="http-endpoints", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def start(self) -> None:
        self._thread.start()
        log.info("serving /healthz, /readyz and /metrics", port=self.port, scheme=self.scheme)

    def stop(self) -> None:
        if self._thread.is_alive():
            self.server.shutdown()
        self.server.server_close()

    def _let_through(self, request: BaseHTTPRequestHandler, guard: Guard) -> bool:
        refusal = guard_refusal(request, guard)
        if refusal is None:
            return True
        self._send(request, refusal.code, refusal.body, refusal.content_type)
        return False

    def _answer(self, request: BaseHTTPRequestHandler) -> None:
        url = urlsplit(request.path)
        if url.path == "/metrics":
            self._send(request, 200, generate_latest(self.registry), CONTENT_TYPE_LATEST)
        elif url.path in ("/healthz", "/livez"):
            self._checks(request, url.path[1:], self.liveness(), "verbose" in url.query)
        elif url.path == "/readyz":
            self._checks(request, "readyz", self.readiness(), "verbose" in url.query)
        else:
            self._send(request, 404, b"404 page not found\n", "text/plain; charset=utf-8")

    def _checks(
        self, request: BaseHTTPRequestHandler, name: str, checks: Sequence[Check], verbose: bool
    ) -> None:
        ok = all(passed for _, passed, _ in checks)
        lines = [
            f"[+]{check} ok" if passed else f"[-]{check} failed: {detail}"
            for check, passed, detail in checks
        ]
        if ok:
            body = "\n".join([*lines, f"{name} check passed"]) if verbose else "ok"
        else:
            body = "\n".join([*lines, f"{name} check failed"])
        self._send(request, 200 if ok else 503, (body + "\n").encode(), "text/plain; charset=utf-8")

    @staticmethod
    def _send(request: BaseHTTPRequestHandler, code: int, body: bytes, content_type: str) -> None:
        request.send_response(code)
        request.send_header("Content-Type", content_type)
        request.send_header("Content-Length", str(len(body)))
        request.send_header("X-Content-Type-Options", "nosniff")
        request.end_headers()
        request.wfile.write(body)
