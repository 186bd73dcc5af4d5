"""The extender's HTTP server: kube-scheduler's verbs, and /healthz, /readyz, /metrics.

HTTP/1.1 with keep-alive, as kube-scheduler's client reuses its connections. A POST to
any path whose last segment is a verb (`urlPrefix + "/" + verb`) is a call; its body is
checked against the protocol before the loop sees it, and a body kube-scheduler would
not send is answered 400 in the verb's result shape with `Error` naming the field.

With `security`, the listener serves HTTPS: the verbs only to kube-scheduler's client
certificate (access.py), /metrics and the probes through the `Guard`. Without it, plain
HTTP to anyone (`--http-address`, and the in-process benchmark and tests).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

import orjson
import structlog
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    generate_latest,
)

from eventsched._httpserver import (
    QuietHTTPServer,
    SecureHTTPServer,
    Security,
    guard_refusal,
    peer_certificate,
)
from eventsched.extenderserver.access import verb_refusal
from eventsched.extenderserver.calls import Call
from eventsched.extenderserver.protocol import (
    VERBS,
    BindingArgs,
    ExtenderArgs,
    PreemptionArgs,
    ProtocolError,
    error_result,
    parse_args,
    parse_binding,
    parse_preemption,
)
from eventsched.extenderserver.scheduler import ExtenderScheduler
from eventsched.metrics import extenderserver
from eventsched.metrics.builder import register

log = structlog.get_logger(__name__)

#: (check name, passed, detail when it did not), as `eventsched run`'s /readyz lists them.
Check = tuple[str, bool, str]
#: Each verb's request reader (filter and prioritize read ExtenderArgs).
PARSERS: dict[str, Callable[[bytes], ExtenderArgs | BindingArgs | PreemptionArgs]] = {
    "bind": parse_binding,
    "preempt": parse_preemption,
}
#: Bodies larger than this are refused (a NodeList of 5,000 nodes is about 25 MB).
MAX_BODY = 256 * 1024 * 1024


class ExtenderMetrics:
    """The extender server's families (metrics/extenderserver.py), in the scheduler's registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        registered = register(registry, extenderserver.TABLE)
        self.requests = registered[extenderserver.EXTENDER_REQUESTS]
        self.duration = registered[extenderserver.EXTENDER_REQUEST_DURATION]


class ExtenderServer:
    def __init__(
        self,
        host: str,
        port: int,
        scheduler: Callable[[], ExtenderScheduler | None],
        registry: CollectorRegistry,
        readiness: Callable[[], Sequence[Check]],
        security: Security | None = None,
        metrics: ExtenderMetrics | None = None,
    ) -> None:
        """`metrics`: the families of another listener of the same process (a registry
        takes each family once)."""
        self.scheduler = scheduler
        self.registry = registry
        self.readiness = readiness
        self.security = security
        self.metrics = metrics or ExtenderMetrics(registry)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: without TCP_NODELAY, Nagle holds the
            # body until the client's delayed ACK of the headers, 40 ms on every call.
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                if server._let_through(self):
                    server._post(self)

            def do_GET(self) -> None:
                if server._let_through(self):
                    server._get(self)

            def log_message(self, format: str, *args: object) -> None:
                pass  # one line per call would drown the log; /metrics counts them

        self.scheme = "http" if security is None else "https"
        self.httpd = (
            QuietHTTPServer((host, port), Handler)
            if security is None
            else SecureHTTPServer((host, port), Handler, security.context)
        )
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, name="extender-http", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def start(self) -> None:
        self._thread.start()
        log.info(
            "serving the extender verbs, /healthz, /readyz and /metrics",
            port=self.port,
            scheme=self.scheme,
        )

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- requests ----------------------------------------------------------------

    def _let_through(self, request: BaseHTTPRequestHandler) -> bool:
        """Plain HTTP lets everything through; HTTPS asks access.py (POST: a verb) or the
        guard (GET), and answers a refusal itself."""
        if self.security is None:
            return True
        if request.command == "POST":
            refusal = verb_refusal(peer_certificate(request))
            if refusal is not None:
                verb = _verb(request)
                log.warning(
                    "extender call refused: no client certificate of --client-ca-file",
                    verb=verb,
                    client=request.client_address[0],
                )
                self._count(verb, refusal.code)
                request.close_connection = True  # its body is not read
        else:
            refusal = guard_refusal(request, self.security.guard)
        if refusal is None:
            return True
        self._send(request, refusal.code, refusal.body, refusal.content_type)
        return False

    def _post(self, request: BaseHTTPRequestHandler) -> None:
        began = time.perf_counter()
        verb = _verb(request)
        length = int(request.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            request.close_connection = True
            self._json(request, 413, verb, error_result(verb, "request body too large"))
            return
        body = request.rfile.read(length)
        if verb not in VERBS:
            self._json(request, 404, verb, {"Error": f"unknown verb {verb!r}: {', '.join(VERBS)}"})
            return
        try:
            args = PARSERS.get(verb, parse_args)(body)
        except ProtocolError as exc:
            log.warning("extender call refused", verb=verb, problem=str(exc))
            self._json(request, 400, verb, error_result(verb, str(exc)))
            return
        scheduler = self.scheduler()
        if scheduler is None:
            self._json(request, 503, verb, error_result(verb, "eventsched extender is starting"))
            return
        call = scheduler.submit(Call(verb, args))
        self._json(request, 200 if call.ok else 500, verb, call.answer)
        self.metrics.duration.labels(verb).observe(time.perf_counter() - began)

    def _get(self, request: BaseHTTPRequestHandler) -> None:
        path = urlsplit(request.path).path
        if path == "/metrics":
            self._send(request, 200, generate_latest(self.registry), CONTENT_TYPE_LATEST)
        elif path in ("/healthz", "/livez"):
            self._send(request, 200, b"ok", "text/plain; charset=utf-8")
        elif path == "/readyz":
            checks = self.readiness()
            ok = all(passed for _, passed, _ in checks)
            lines = [f"[+]{n} ok" if p else f"[-]{n} failed: {d}" for n, p, d in checks]
            text = "\n".join([*lines, "readyz check passed" if ok else "readyz check failed"])
            self._send(
                request, 200 if ok else 503, (text + "\n").encode(), "text/plain; charset=utf-8"
            )
        else:
            self._send(request, 404, b"not found\n", "text/plain; charset=utf-8")

    def _json(self, request: BaseHTTPRequestHandler, code: int, verb: str, body: object) -> None:
        self._count(verb, code)
        self._send(request, code, orjson.dumps(body), "application/json")

    def _count(self, verb: str, code: int) -> None:
        self.metrics.requests.labels(verb if verb in VERBS else "unknown", str(code)).inc()

    @staticmethod
    def _send(request: BaseHTTPRequestHandler, code: int, body: bytes, content_type: str) -> None:
        request.send_response(code)
        request.send_header("Content-Type", content_type)
        request.send_header("Content-Length", str(len(body)))
        if request.close_connection:  # a body left unread: the client must not reuse it
            request.send_header("Connection", "close")
        request.end_headers()
        request.wfile.write(body)


def _verb(request: BaseHTTPRequestHandler) -> str:
    """The last segment of the path: kube-scheduler posts to `urlPrefix + "/" + verb`."""
    return urlsplit(request.path).path.rstrip("/").rsplit("/", 1)[-1]
