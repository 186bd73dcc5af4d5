"""A TCP proxy for fault tests: the database goes away at the network, not behind a patched method.

The scheduler under test connects to the proxy instead of PostgreSQL, so
every failure it sees is one its driver really produces: a connection
closed under a running transaction, a refused reconnect, a COMMIT whose
answer never arrives. Only the standard library: one thread accepting,
two pumping bytes per connection.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from contextlib import suppress


class _Pair:
    """One client connection and its upstream twin; closing one closes both."""

    def __init__(self, client: socket.socket, upstream: socket.socket) -> None:
        self.client = client
        self.upstream = upstream
        self._closed = threading.Event()
        #: While set, what the server sends is dropped, and `answered` is set when it arrives.
        self.swallow = False
        self.answered = threading.Event()

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        for sock in (self.client, self.upstream):
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with suppress(OSError):
                sock.close()


class TcpProxy:
    """Forwards 127.0.0.1:<port> to (host, upstream_port) until told to cut.

    `cut()` closes every live connection (both sides, so the server rolls
    back whatever transaction was open, as it does when a client vanishes)
    and from then on accepts new connections only to close them at once,
    which the client sees as the server going away during the handshake.
    The listening port stays ours throughout, so nothing else can take it.
    `restore()` forwards new connections again.

    `cut_after_commit()` is the ambiguous fault: the next COMMIT a client
    sends is forwarded, its answer is read from the server (so the
    transaction is committed) and thrown away, and then the proxy cuts. The
    client never learns that its COMMIT succeeded.
    """

    def __init__(self, upstream_host: str = "127.0.0.1", upstream_port: int = 5432) -> None:
        self.upstream = (upstream_host, upstream_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._lock = threading.Lock()
        self._pairs: set[_Pair] = set()
        self._cut = False
        self._stopping = False
        self._commit_trap = False
        #: Connections accepted and forwarded / accepted and closed because the proxy was cut.
        self.forwarded = 0
        self.refused = 0
        #: Set when a trapped COMMIT was forwarded, answered by the server, and its answer dropped.
        self.commit_swallowed = threading.Event()
        self._acceptor = threading.Thread(target=self._accept, name="tcpproxy-accept", daemon=True)

    # -- control -------------------------------------------------------------------------

    def start(self) -> TcpProxy:
        self._acceptor.start()
        return self

    def stop(self) -> None:
        self._stopping = True
        with suppress(OSError):
            self._listener.close()
        self._close_all()
        self._acceptor.join(5)

    def __enter__(self) -> TcpProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def is_cut(self) -> bool:
        return self._cut

    @property
    def live_connections(self) -> int:
        with self._lock:
            return len(self._pairs)

    def cut(self) -> None:
        """Close every live connection and refuse new ones until `restore()`."""
        self._cut = True
        self._close_all()

    def restore(self) -> None:
        """Forward new connections again (the closed ones stay closed, as after a restart)."""
        self._commit_trap = False
        self._cut = False

    def cut_after_commit(self) -> None:
        """Arm the trap: the next COMMIT reaches the server, its answer does not reach the client."""
        self.commit_swallowed.clear()
        self._commit_trap = True

    # -- internals -----------------------------------------------------------------------

    def _close_all(self) -> None:
        with self._lock:
            pairs = list(self._pairs)
            self._pairs.clear()
        for pair in pairs:
            pair.close()

    def _accept(self) -> None:
        while not self._stopping:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._cut:
                self.refused += 1
                with suppress(OSError):
                    client.close()
                continue
            try:
                upstream = socket.create_connection(self.upstream, timeout=5)
                upstream.settimeout(None)
            except OSError:
                with suppress(OSError):
                    client.close()
                continue
            pair = _Pair(client, upstream)
            with self._lock:
                self._pairs.add(pair)
            self.forwarded += 1
            for source, target, watch in (
                (client, upstream, self._client_bytes),
                (upstream, client, None),
            ):
                threading.Thread(
                    target=self._pump,
                    args=(pair, source, target, watch),
                    name="tcpproxy-pump",
                    daemon=True,
                ).start()

    def _client_bytes(self, pair: _Pair, chunk: bytes) -> bool:
        """Called with each client-to-server chunk before it is forwarded; True to spring the trap.

        psycopg sends COMMIT as a simple Query message: b"Q", length, b"COMMIT\\0".
        """
        return self._commit_trap and b"COMMIT\x00" in chunk

    def _pump(
        self,
        pair: _Pair,
        source: socket.socket,
        target: socket.socket,
        watch: Callable[[_Pair, bytes], bool] | None,
    ) -> None:
        try:
            while True:
                chunk = source.recv(65536)
                if not chunk:
                    break
                if watch is not None and watch(pair, chunk):
                    self._spring(pair, chunk)
                    return
                if watch is None and pair.swallow:
                    pair.answered.set()  # the server's answer to the trapped COMMIT: dropped
                    continue
                target.sendall(chunk)
        except OSError:
            pass
        finally:
            with self._lock:
                self._pairs.discard(pair)
            pair.close()

    def _spring(self, pair: _Pair, commit: bytes) -> None:
        """Forward the COMMIT, wait until the server has answered it, drop the answer, cut."""
        self._commit_trap = False
        self._cut = True
        pair.swallow = True
        with suppress(OSError):
            pair.upstream.sendall(commit)
        # The server-to-client pump sees the answer (CommandComplete, ReadyForQuery) and
        # drops it: the transaction is committed, and the client will never hear so.
        pair.answered.wait(5)
        self.commit_swallowed.set()
        self._close_all()
        pair.close()
