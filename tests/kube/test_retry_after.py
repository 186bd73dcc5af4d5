"""A 429 or 5xx answer with Retry-After is sent again after that many seconds, up to ten
times, as client-go's withRetry does (checkWait); without Retry-After, or for any other
code, the answer is the caller's at once. The server is the scripted one
(scripted.py), so each attempt is seen as it arrived."""

from __future__ import annotations

from collections.abc import Callable

from kubernetes import client

from eventsched.cluster.kube.rest import MAX_RETRIES, Rest
from tests.kube.scripted import Script, ScriptedServer, ok

BINDING = "/api/v1/namespaces/d/pods/p/binding"


def answer(status: int, retry_after: str | None) -> bytes:
    body = b'{"kind":"Status","code":%d,"message":"busy"}' % status
    header = b"" if retry_after is None else b"Retry-After: %s\r\n" % retry_after.encode()
    return b"HTTP/1.1 %d X\r\nContent-Length: %d\r\n%s\r\n%s" % (
        status,
        len(body),
        header,
        body,
    )


def rest_for(server: ScriptedServer) -> Rest:
    configuration = client.Configuration()
    configuration.host = f"http://127.0.0.1:{server.port}"
    return Rest(configuration)


def test_a_429_with_retry_after_is_sent_again_with_the_same_body(
    serve: Callable[[Script], ScriptedServer],
) -> None:
    server = serve(lambda conn, n: answer(429, "0") if n < 2 else ok())
    got = rest_for(server).request("POST", BINDING, {"target": {"name": "a"}})
    assert got.status == 201
    assert len(server.requests) == 3
    bodies = {request.split(b"\r\n\r\n", 1)[1] for request in server.requests}
    assert bodies == {b'{"target":{"name":"a"}}'}


def test_a_5xx_with_retry_after_is_sent_again_but_not_a_4xx_or_one_without_it(
    serve: Callable[[Script], ScriptedServer],
) -> None:
    cases = {(503, "0"): 2, (500, "0"): 2, (500, None): 1, (409, "0"): 1, (429, "soon"): 1}
    for (status, retry_after), attempts in cases.items():
        server = serve(lambda conn, n, s=status, r=retry_after: answer(s, r) if n == 0 else ok())
        got = rest_for(server).request("POST", BINDING, {})
        assert len(server.requests) == attempts, (status, retry_after)
        assert got.status == (201 if attempts == 2 else status)


def test_after_ten_retries_the_last_answer_is_given(
    serve: Callable[[Script], ScriptedServer],
) -> None:
    server = serve(lambda conn, n: answer(429, "0"))
    got = rest_for(server).request("GET", "/api/v1/nodes")
    assert (got.status, got.message) == (429, "busy")
    assert len(server.requests) == 1 + MAX_RETRIES
