"""HTTP/1.1 requests over kept-alive connections, read without urllib3's and http.client's layers.

Every Binding and every Event is a small request to the API server. Through
urllib3 (`urlopen`, its retry and timeout objects, `http.client`'s response and
the `email` package's header parser) one cost about 400 µs of CPU here; written
and read directly on the socket, about 100 µs (`docs/performance.md`).

Connections are still made by urllib3's connection pool, so TLS is set up
exactly as the client's `Configuration` asks (certificate authority, client
certificates, `verify_ssl`, `tls_server_name`, socket options). This module only
writes the request and reads the answer: a status line, headers, then a body of
`Content-Length` bytes, chunked, or up to the end of the connection. A watch is
read the same way, line by line as its events arrive (`Stream`), on a connection
of its own. Requests through a proxy stay on urllib3 (`rest.py`).
"""

from __future__ import annotations

import contextlib
import io
import socket
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import urllib3
from urllib3.util.wait import wait_for_read

#: A status line or header longer than this is not an API server's answer.
MAX_LINE = 65536
#: Headers read before the answer is refused (http.client's limit).
MAX_HEADERS = 100
#: Attempts at making a connection (urllib3's `Retry(connect=2)`: the request never left).
CONNECT_ATTEMPTS = 3


class ProtocolError(OSError):
    """The connection closed, or what came back is not an HTTP/1.1 answer."""


@dataclass(frozen=True, slots=True)
class RawAnswer:
    """The status and the whole body of an answer, and its Retry-After in seconds (None:
    none, or not a whole number, as client-go reads it)."""

    status: int
    data: bytes
    retry_after: int | None = None


@dataclass(frozen=True, slots=True)
class _Head:
    status: int
    length: int | None  # Content-Length, None when chunked or read to the end
    chunked: bool
    keep_alive: bool
    retry_after: int | None = None


class _Connection:
    """One connected socket (made by urllib3) and the buffered reader over it."""

    __slots__ = ("_conn", "_reader", "sock")

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self.sock = conn.sock
        self._reader: io.BufferedReader = self.sock.makefile("rb")

    def dropped(self) -> bool:
        """Closed by the server while idle (or something unasked-for arrived)."""
        return bool(wait_for_read(self.sock, timeout=0.0))

    def exchange(self, request: bytes, method: str) -> tuple[RawAnswer, bool]:
        """Send the request; the answer, and whether the connection may be used again."""
        head = self.start(request)
        if method == "HEAD" or head.status in (204, 304):
            data, keep = b"", head.keep_alive
        elif head.chunked:
            data, keep = b"".join(self.chunks()), head.keep_alive
        elif head.length is None:
            data, keep = self._reader.read(), False
        else:
            data, keep = self.exactly(head.length), head.keep_alive
        return RawAnswer(head.status, data, head.retry_after), keep

    def start(self, request: bytes) -> _Head:
        """Send the request and read the answer's head (after any interim answers)."""
        self.sock.sendall(request)
        head = _read_head(self._reader)
        while 100 <= head.status < 200:  # interim answers (100 Continue) precede the real one
            head = _read_head(self._reader)
        return head

    def exactly(self, length: int) -> bytes:
        data = self._reader.read(length)
        if len(data) < length:
            raise ProtocolError(f"answer cut off after {len(data)} of {length} bytes")
        return data

    def chunks(self) -> Iterator[bytes]:
        """A chunked body's chunks as they arrive, then its trailers read past."""
        reader = self._reader
        while True:
            size_line = _line(reader).split(b";", 1)[0].strip()
            try:
                size = int(size_line, 16)
            except ValueError:
                raise ProtocolError(f"bad chunk size {size_line[:40]!r}") from None
            if size == 0:
                while _line(reader) not in (b"\r\n", b"\n"):  # trailers
                    pass
                return
            chunk = reader.read(size)
            if len(chunk) < size:
                raise ProtocolError("answer cut off inside a chunk")
            yield chunk
            _line(reader)  # the CRLF after the chunk

    def to_the_end(self) -> Iterator[bytes]:
        """A body without a length: what arrives until the server closes."""
        while data := self._reader.read1(65536):
            yield data

    def close(self) -> None:
        self._reader.close()
        self._conn.close()


def _line(reader: io.BufferedReader) -> bytes:
    line = reader.readline(MAX_LINE + 1)
    if not line:
        raise ProtocolError("the API server closed the connection")
    if len(line) > MAX_LINE:
        raise ProtocolError("an answer line longer than 64 KiB")
    return line


def _read_head(reader: io.BufferedReader) -> _Head:
    status_line = _line(reader)
    version, _, rest = status_line.partition(b" ")
    code = rest[:3]
    if not version.startswith(b"HTTP/1.") or not code.isdigit():
        raise ProtocolError(f"not an HTTP/1.1 answer: {status_line[:80]!r}")
    length: int | None = None
    chunked = False
    keep_alive = version == b"HTTP/1.1"
    retry_after: int | None = None
    for _ in range(MAX_HEADERS):
        line = _line(reader)
        if line in (b"\r\n", b"\n"):
            return _Head(int(code), None if chunked else length, chunked, keep_alive, retry_after)
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = _content_length(value)
        elif name == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
        elif name == b"retry-after":
            retry_after = retry_after_seconds(value.decode("latin-1"))
        elif name == b"connection":
            keep_alive = b"close" not in value.lower() and (
                keep_alive or b"keep-alive" in value.lower()
            )
    raise ProtocolError(f"more than {MAX_HEADERS} headers in an answer")


def retry_after_seconds(value: str | None) -> int | None:
    """A Retry-After header's seconds, as client-go's retryAfterSeconds reads it (an
    integer; a date or anything else is no Retry-After)."""
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None


def _content_length(value: bytes) -> int:
    try:
        length = int(value.strip())
    except ValueError:
        length = -1
    if length < 0:
        raise ProtocolError(f"bad Content-Length {value.strip()[:40]!r}")
    return length


def split_lines(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """Lines (without their newline) of a body read in pieces, each as it is complete."""
    pending = b""
    for piece in pieces:
        pending += piece
        if b"\n" in piece:
            *complete, pending = pending.split(b"\n")
            yield from complete
    if pending:
        yield pending


class Stream:
    """An answer read as it arrives: its status, then its body whole or line by line."""

    def __init__(self, connection: _Connection, head: _Head) -> None:
        self._connection = connection
        self._head = head
        self.status = head.status

    def _pieces(self) -> Iterator[bytes]:
        head = self._head
        if head.chunked:
            return self._connection.chunks()
        if head.length is None:
            return self._connection.to_the_end()
        return iter((self._connection.exactly(head.length),))

    def read(self) -> bytes:
        return b"".join(self._pieces())

    def lines(self) -> Iterator[bytes]:
        """The body's lines (without their newline) as each is complete."""
        return split_lines(self._pieces())

    def shutdown(self) -> None:
        """Wake a reader waiting on another thread: its read ends at once."""
        with contextlib.suppress(OSError):
            self._connection.sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._connection.close()


class KeepAlivePool:
    """Up to `maxsize` idle connections to one server, each used by one request at a time.

    A request takes an idle connection (one the server closed meanwhile is
    dropped) or makes a new one; after a complete answer the connection goes
    back, unless the server said it closes it. A request that failed after it
    was sent is not sent again: a Binding may have been applied.
    """

    def __init__(
        self,
        pool: urllib3.HTTPConnectionPool,
        netloc: str,
        maxsize: int,
        connect_timeout: float,
        read_timeout: float,
    ) -> None:
        self._pool: Any = pool  # `_new_conn` makes a connection as urlopen would
        self._host_line = f"Host: {netloc}\r\n"
        self._maxsize = maxsize
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._idle: list[_Connection] = []
        self._lock = threading.Lock()

    def request(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes | None
    ) -> RawAnswer:
        """One request and its whole answer. Raises OSError or urllib3's HTTPError when
        there is no answer."""
        request = self._request(method, target, headers, body)
        connection = self._take()
        try:
            answer, keep = connection.exchange(request, method)
        except BaseException:
            connection.close()
            raise
        if keep:
            self._give_back(connection)
        else:
            connection.close()
        return answer

    def open(self, target: str, headers: Mapping[str, str]) -> Stream:
        """A GET whose answer is read as it arrives (a watch), on a connection of its own
        that is closed with it, and that waits for the server as long as it takes.

        The connection is an idle one when there is one (an informer's watch then goes
        on the connection its list came back on), else a new one."""
        connection = self._take()
        try:
            connection.sock.settimeout(None)
            head = connection.start(self._request("GET", target, headers, None))
        except BaseException:
            connection.close()
            raise
        return Stream(connection, head)

    def _request(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes | None
    ) -> bytes:
        lines = [f"{method} {target} HTTP/1.1\r\n", self._host_line]
        lines.extend(f"{name}: {value}\r\n" for name, value in headers.items())
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body or b'')}\r\n")
        return "".join(lines).encode("latin-1") + b"\r\n" + (body or b"")

    def _take(self) -> _Connection:
        while True:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            if connection is None:
                return self._connect()
            if not connection.dropped():
                return connection
            connection.close()

    def _give_back(self, connection: _Connection) -> None:
        with self._lock:
            if len(self._idle) < self._maxsize:
                self._idle.append(connection)
                return
        connection.close()

    def _connect(self) -> _Connection:
        for attempt in range(CONNECT_ATTEMPTS):
            conn = self._pool._new_conn()
            conn.timeout = self._connect_timeout
            try:
                conn.connect()
            except (urllib3.exceptions.NewConnectionError, urllib3.exceptions.ConnectTimeoutError):
                conn.close()
                if attempt == CONNECT_ATTEMPTS - 1:
                    raise
                continue
            except BaseException:
                conn.close()
                raise
            connection = _Connection(conn)
            connection.sock.settimeout(self._read_timeout)
            return connection
        raise AssertionError("unreachable")
