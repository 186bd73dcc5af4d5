"""A fault-injecting HTTP proxy in front of kube-apiserver.

The scheduler's kubeconfig points at the proxy (plain HTTP on loopback); the proxy
forwards each request, with the client's own Authorization header, over TLS to the
real kube-apiserver, passing streamed answers (watches) through chunk by chunk. While
faults are on, it answers a share of the requests itself, with the Status body
kube-apiserver would send: 409 Conflict on writes, 410 Expired on watches and on lists
from a resourceVersion, 429 TooManyRequests (with Retry-After) and 500 InternalError on
any. Turning faults on also cuts the watches in flight, so that they are made again
while the faults last.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import random
import re
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from eventsched._httpguard import failure_status

#: Headers that belong to one hop, not passed on.
_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "upgrade"}
_BINDING = re.compile(r"^/api/v1/namespaces/[^/]+/pods/([^/]+)/binding$")
RETRY_AFTER = 1


@dataclass(frozen=True, slots=True)
class Fault:
    """One answer the proxy gave instead of kube-apiserver."""

    at: float  # time.monotonic()
    method: str
    path: str
    code: int

    @property
    def binding_of(self) -> str | None:
        """The pod whose Binding this answered, if it answered one."""
        match = _BINDING.match(self.path) if self.method == "POST" else None
        return match[1] if match else None


def codes_for(method: str, query: dict[str, list[str]]) -> tuple[int, ...]:
    """The faults kube-apiserver could answer this request with."""
    if method in ("POST", "PUT", "PATCH", "DELETE"):
        return (409, 429, 500)
    version = query.get("resourceVersion", [""])[0]
    if query.get("watch", [""])[0] in ("true", "1") or version not in ("", "0"):
        return (410, 429, 500)
    return (429, 500)


def named(path: str) -> str:
    """How kube-apiserver names the object of a request path in a Status message:
    `pods "p"` (its status too), `pods/binding "p"`, or the resource alone."""
    parts = path.strip("/").split("/")
    if "namespaces" in parts[:-1] and len(parts) > parts.index("namespaces") + 2:
        rest = parts[parts.index("namespaces") + 2 :]
    else:
        rest = parts[2:] if parts[:1] == ["api"] else parts[3:]
    if len(rest) < 2:
        return "/".join(rest)
    resource = "pods/binding" if rest[2:3] == ["binding"] else rest[0]
    return f'{resource} "{rest[1]}"'


def status_body(code: int, path: str) -> dict[str, Any]:
    """A metav1.Status as kube-apiserver writes it for `code`."""
    reason, message = {
        409: ("Conflict", f"Operation cannot be fulfilled on {named(path)}: the object has been "
                          "modified; please apply your changes to the latest version and try again"),
        410: ("Expired", "too old resource version: 1 (2)"),
        429: ("TooManyRequests", "Too many requests, please try again later."),
        500: ("InternalError", "Internal error occurred: injected by the fault proxy"),
    }[code]  # fmt: skip
    details = {"retryAfterSeconds": RETRY_AFTER} if code == 429 else None
    return failure_status(code, reason, message, details)


class FaultProxy:
    """The proxy, served on a thread from `start()` to `close()`."""

    def __init__(self, upstream: str, ca_file: Path, *, share: float, seed: int) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 443)
        self.tls = ssl.create_default_context(cafile=str(ca_file))
        self.share = share
        self.faults: list[Fault] = []
        self.forwarded = 0  # while faults were on
        self._random = random.Random(seed)
        self._until = 0.0
        self._lock = threading.Lock()
        self._streams: set[socket.socket] = set()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FaultProxy:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def kubeconfig(self, admin: Path) -> Path:
        """A copy of the `admin` kubeconfig (JSON) pointing at the proxy."""
        config = json.loads(admin.read_text())
        for cluster in config["clusters"]:
            cluster["cluster"] = {"server": self.url}
        path = admin.parent / "kubeconfig-faultproxy"
        path.write_text(json.dumps(config, indent=2) + "\n")
        path.chmod(0o600)
        return path

    def faults_for(self, seconds: float) -> None:
        """Answer a share of the requests with faults for `seconds`; cut the watches now."""
        with self._lock:
            self._until = time.monotonic() + seconds
            streams = list(self._streams)
        for sock in streams:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def pick(self, method: str, path: str, query: dict[str, list[str]]) -> int | None:
        """The fault to answer with, or None to forward."""
        with self._lock:
            if time.monotonic() >= self._until:
                return None
            if self._random.random() >= self.share:
                self.forwarded += 1  # while faulting
                return None
            code = self._random.choice(codes_for(method, query))
            self.faults.append(Fault(time.monotonic(), method, path, code))
            return code

    def streaming(self, sock: socket.socket, on: bool) -> None:
        with self._lock:
            (self._streams.add if on else self._streams.discard)(sock)


def _handler(proxy: FaultProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        upstream: http.client.HTTPSConnection | None = None

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            parts = urlsplit(self.path)
            code = proxy.pick(self.command, parts.path, parse_qs(parts.query))
            if code is not None:
                self._status(code, parts.path)
            else:
                self._forward(body)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

        def _status(self, code: int, path: str) -> None:
            data = json.dumps(status_body(code, path)).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if code == 429:
                self.send_header("Retry-After", str(RETRY_AFTER))
            self.end_headers()
            self.wfile.write(data)

        def _forward(self, body: bytes | None) -> None:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
            if body is not None:
                headers["Content-Length"] = str(len(body))
            try:
                response = self._upstream(body, headers)
            except OSError:  # kube-apiserver unreachable: so is the proxy's answer
                self.close_connection = True
                return
            self.send_response(response.status)
            for key, value in response.getheaders():
                if key.lower() not in _HOP:
                    self.send_header(key, value)
            try:
                self._relay(response)
            except (OSError, http.client.HTTPException):  # either end went away
                self.close_connection = True
                self._drop_upstream()

        def _relay(self, response: Any) -> None:
            """The answer's body: whole, or chunk by chunk as it comes (a watch)."""
            if not response.chunked:
                data = response.read()
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            proxy.streaming(self.connection, True)
            try:
                while chunk := response.read1(65536):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            finally:
                proxy.streaming(self.connection, False)

        def _upstream(self, body: bytes | None, headers: dict[str, str]) -> Any:
            """Send on this connection's upstream connection (made again once if stale)."""
            for attempt in (1, 2):
                if self.upstream is None:
                    host, port = proxy.upstream
                    self.upstream = http.client.HTTPSConnection(host, port, context=proxy.tls)
                try:
                    self.upstream.request(self.command, self.path, body, headers)
                    return self.upstream.getresponse()
                except (OSError, http.client.HTTPException):
                    self._drop_upstream()
                    if attempt == 2:
                        raise OSError("kube-apiserver did not answer") from None
            raise AssertionError("unreachable")

        def _drop_upstream(self) -> None:
            if self.upstream is not None:
                self.upstream.close()
                self.upstream = None

        def finish(self) -> None:
            self._drop_upstream()
            super().finish()

    return Handler
