"""The keep-alive HTTP/1.1 pool against a server that answers exactly as each test scripts it.

The API server's own answers (Content-Length, chunked lists, Status bodies) go
through `Rest` in every other test of tests/kube; this server produces what
a healthy API server rarely does: connections closed while idle, answers cut
off, HTTP/1.0, `Connection: close`, silence.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable

import pytest
import urllib3
from kubernetes import client

from eventsched.cluster.kube.keepalive import KeepAlivePool, ProtocolError
from eventsched.cluster.kube.rest import Rest, TransportError
from tests.kube.scripted import THEN_CLOSE, Script, ScriptedServer, ok


def pool_for(server: ScriptedServer, read_timeout: float = 10.0) -> KeepAlivePool:
    urllib3_pool = urllib3.HTTPConnectionPool("127.0.0.1", server.port)
    return KeepAlivePool(urllib3_pool, f"127.0.0.1:{server.port}", 4, 5.0, read_timeout)


def test_requests_share_one_connection_and_send_what_was_asked(
    serve: Callable[[Script], ScriptedServer],
) -> None:
    server = serve(lambda conn, n: ok(b'{"n":%d}' % n))
    pool = pool_for(server)
    first = pool.request("POST", "/api/v1/x?a=b", {"Content-Type": "application/json"}, b"{}")
    second = pool.request("GET", "/api/v1/y", {"Accept": "application/json"}, None)
    assert (first.status, first.data, second.data) == (201, b'{"n":0}', b'{"n":1}')
    assert server.connections == 1
    post, get = server.requests
    assert post.startswith(b"POST /api/v1/x?a=b HTTP/1.1\r\n")
    assert f"Host: 127.0.0.1:{server.port}\r\n".encode() in post
    assert b"Content-Length: 2\r\n" in post and post.endswith(b"\r\n\r\n{}")
    assert b"Content-Length" not in get


def test_a_chunked_answer_is_read_whole_with_its_trailers(
    serve: Callable[[Script], ScriptedServer],
) -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'4;ext=1\r\n{"a"\r\n3\r\n:1}\r\n0\r\nX-Trailer: t\r\n\r\n'
    )
    server = serve(lambda conn, n: chunked)
    pool = pool_for(server)
    assert pool.request("GET", "/", {}, None).data == b'{"a":1}'
    assert pool.request("GET", "/", {}, None).data == b'{"a":1}'
    assert server.connections == 1


def test_no_body_for_204_and_interim_answers_are_skipped(
    serve: Callable[[Script], ScriptedServer],
) -> None:
    server = serve(lambda conn, n: b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
    pool = pool_for(server)
    answer = pool.request("DELETE", "/x", {}, None)
    assert (answer.status, answer.data) == (204, b"")
    assert pool.request("DELETE", "/x", {}, None).status == 204
    assert server.connections == 1


def test_connection_close_and_http_1_0_answers_are_not_reused(
    serve: Callable[[Script], ScriptedServer],
) -> None:
    def script(conn: int, n: int) -> bytes | None:
        if conn == 0:
            return ok(extra=b"Connection: close\r\n")
        if conn == 1:
            return b"HTTP/1.0 200 OK\r\n\r\nto the end" + THEN_CLOSE
        return ok()

    server = serve(script)
    pool = pool_for(server)
    pool.request("GET", "/", {}, None)
    assert pool.request("GET", "/", {}, None).data == b"to the end"  # read to the close
    pool.request("GET", "/", {}, None)
    assert server.connections == 3


def test_a_connection_the_server_closed_while_idle_is_not_used(
    serve: Callable[[Script], ScriptedServer],
) -> None:
    server = serve(lambda conn, n: ok() + THEN_CLOSE if conn == 0 else ok())
    pool = pool_for(server)
    pool.request("GET", "/", {}, None)
    assert server.closed.wait(10)
    # Sent on the closed connection, the request would read "closed the connection".
    assert pool.request("POST", "/binding", {}, b"{}").status == 201
    assert server.connections == 2
    assert len(server.requests) == 2


def test_an_answer_cut_off_is_an_error_and_the_request_is_not_sent_again(
    serve: Callable[[Script], ScriptedServer],
) -> None:
    server = serve(
        lambda conn, n: b'HTTP/1.1 201 Created\r\nContent-Length: 50\r\n\r\n{"kin' + THEN_CLOSE
    )
    pool = pool_for(server)
    with pytest.raises(ProtocolError, match="cut off after 5 of 50 bytes"):
        pool.request("POST", "/binding", {}, b"{}")
    assert len(server.requests) == 1


def test_no_answer_at_all_is_a_transport_error_naming_it(
    serve: Callable[[Script], ScriptedServer],
) -> None:
    server = serve(lambda conn, n: None)
    configuration = client.Configuration()
    configuration.host = f"http://127.0.0.1:{server.port}"
    rest = Rest(configuration)
    with pytest.raises(TransportError, match="closed the connection"):
        rest.request("POST", "/api/v1/namespaces/d/pods/p/binding", {"a": 1})
    assert len(server.requests) == 1


def test_garbage_instead_of_an_answer_is_refused(
    serve: Callable[[Script], ScriptedServer],
) -> None:
    server = serve(lambda conn, n: b"SSH-2.0-OpenSSH\r\n\r\n")
    with pytest.raises(ProtocolError, match=r"not an HTTP/1\.1 answer"):
        pool_for(server).request("GET", "/", {}, None)


def test_a_silent_server_times_out(serve: Callable[[Script], ScriptedServer]) -> None:
    answered = threading.Event()

    def never(conn: int, n: int) -> None:
        answered.wait(30)

    server = serve(never)
    try:
        with pytest.raises(TimeoutError):
            pool_for(server, read_timeout=0.3).request("GET", "/", {}, None)
    finally:
        answered.set()


def test_a_refused_connection_is_tried_again_then_reported() -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]  # closed when the block ends: nothing listens there
    configuration = client.Configuration()
    configuration.host = f"http://127.0.0.1:{port}"
    with pytest.raises(TransportError, match=r"[Cc]onnection refused"):
        Rest(configuration).request("GET", "/api/v1/nodes")


def test_a_stream_yields_lines_as_they_complete_across_chunks(
    serve: Callable[[Script], ScriptedServer],
) -> None:
    body = b'{"a":1}\n{"b"', b':2}\n{"c":3}\n'
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in body)
    server = serve(
        lambda conn, n: (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"
        )
    )
    stream = pool_for(server).open("/api/v1/pods?watch=true", {})
    try:
        assert stream.status == 200
        assert list(stream.lines()) == [b'{"a":1}', b'{"b":2}', b'{"c":3}']
    finally:
        stream.close()


def test_shutting_a_stream_down_ends_a_read_waiting_on_another_thread(
    serve: Callable[[Script], ScriptedServer],
) -> None:
    # The head arrives, then nothing: a watch with no events.
    server = serve(lambda conn, n: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    stream = pool_for(server).open("/api/v1/pods?watch=true", {})
    ended: list[BaseException] = []

    def read() -> None:
        try:
            list(stream.lines())
        except OSError as exc:
            ended.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    stream.shutdown()
    reader.join(10)
    stream.close()
    assert not reader.is_alive()
    assert ended and "closed the connection" in str(ended[0])


def test_a_watch_goes_on_the_idle_connection_a_list_came_back_on(
    serve: Callable[[Script], ScriptedServer],
) -> None:
    watch_head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    server = serve(lambda conn, n: ok() if n == 0 else watch_head)
    pool = pool_for(server)
    assert pool.request("GET", "/api/v1/pods", {}, None).status == 201  # the list
    stream = pool.open("/api/v1/pods?watch=true", {})  # its watch, on the same connection
    try:
        assert (stream.status, list(stream.lines())) == (200, [])
    finally:
        stream.close()
    assert server.connections == 1 and len(server.requests) == 2
    # Closed with the stream, not given back: the next request makes a new connection.
    assert pool.request("GET", "/api/v1/pods", {}, None).status == 201
    assert server.connections == 2


def test_a_watch_does_not_take_an_idle_connection_the_server_closed(
    serve: Callable[[Script], ScriptedServer],
) -> None:
    watch_head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    server = serve(lambda conn, n: ok() + THEN_CLOSE if conn == 0 else watch_head)
    pool = pool_for(server)
    pool.request("GET", "/api/v1/pods", {}, None)
    assert server.closed.wait(10)
    stream = pool.open("/api/v1/pods?watch=true", {})
    try:
        assert stream.status == 200
    finally:
        stream.close()
    assert server.connections == 2
