"""A server that answers exactly as each test scripts it (test_keepalive.py,
test_retry_after.py; conftest.py's `serve` starts one)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

#: What the server writes for the n-th request (counted from 0) on the c-th connection;
#: None closes the connection without answering.
Script = Callable[[int, int], bytes | None]

#: Ends an answer: the server closes the connection after writing it, saying nothing (as
#: a server closes a connection whose keep-alive time is up).
THEN_CLOSE = b"<then close>"


@dataclass
class ScriptedServer:
    script: Script
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0
    port: int = 0
    _listener: socket.socket | None = None
    closed: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        assert self._listener is not None
        while True:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                index = self.connections
                self.connections += 1
            threading.Thread(target=self._serve, args=(sock, index), daemon=True).start()

    def _serve(self, sock: socket.socket, index: int) -> None:
        reader = sock.makefile("rb")
        with sock, reader:
            for number in range(1000):
                request = _read_request(reader)
                if request is None:
                    return
                with self._lock:
                    self.requests.append(request)
                answer = self.script(index, number)
                if answer is None:
                    return
                sock.sendall(answer.removesuffix(THEN_CLOSE))
                if answer.endswith(THEN_CLOSE):
                    sock.shutdown(socket.SHUT_RDWR)
                    self.closed.set()
                    return

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.close()


def _read_request(reader: object) -> bytes | None:
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        line = reader.readline()  # type: ignore[attr-defined]
        if not line:
            return None
        head += line
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head + reader.read(length)  # type: ignore[attr-defined]


def ok(body: bytes = b'{"kind":"Status"}', extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 201 Created\r\nContent-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)
