"""The emulator's request hold, which the crash tests time their kills with, through the real client."""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from tests.crash.harness import node, node_of, pod
from tests.kube.apiserver import ApiServer, RequestRecord


@pytest.fixture
def core(apiserver: ApiServer) -> Iterator[client.CoreV1Api]:
    api = client.ApiClient(client.Configuration(host=apiserver.url))
    try:
        yield client.CoreV1Api(api)
    finally:
        api.close()


def bind_in_background(core: client.CoreV1Api, name: str) -> tuple[threading.Thread, list[object]]:
    """POST a Binding on a thread; the list gets the HTTP status, or the exception."""
    outcome: list[object] = []
    body = client.V1Binding(
        metadata=client.V1ObjectMeta(name=name, namespace="default"),
        target=client.V1ObjectReference(kind="Node", name="node-a"),
    )

    def bind() -> None:
        try:
            response = core.create_namespaced_pod_binding(
                name, "default", body, _preload_content=False, _request_timeout=(2, 5)
            )
            outcome.append(response.status)
        except (ApiException, HTTPError, OSError) as exc:
            outcome.append(exc)

    thread = threading.Thread(target=bind, daemon=True)
    thread.start()
    return thread, outcome


def test_a_held_request_is_not_applied_until_released_then_served(
    apiserver: ApiServer, core: client.CoreV1Api
) -> None:
    apiserver.create(node("node-a"))
    apiserver.create(pod("p"))
    arrivals: list[RequestRecord] = []
    hold = apiserver.hold_next("POST", r"/pods/p/binding$", on_arrival=arrivals.append)
    thread, outcome = bind_in_background(core, "p")
    (held,) = hold.wait()
    assert arrivals == [held]
    assert node_of(apiserver, "p") == ""  # held before it was applied
    assert outcome == []  # and not answered
    hold.release()
    thread.join(5)
    assert outcome == [201]
    assert node_of(apiserver, "p") == "node-a"
    assert held.status == 201


def test_a_dropped_request_is_never_applied_and_the_client_gets_no_answer(
    apiserver: ApiServer, core: client.CoreV1Api
) -> None:
    apiserver.create(node("node-a"))
    apiserver.create(pod("p"))
    hold = apiserver.hold_next("POST", r"/pods/p/binding$")
    thread, outcome = bind_in_background(core, "p")
    (held,) = hold.wait()
    hold.drop()
    thread.join(10)
    assert len(outcome) == 1 and isinstance(outcome[0], HTTPError | OSError), outcome
    assert node_of(apiserver, "p") == ""
    assert held.status == 0
    assert held in apiserver.requests


def test_apply_first_applies_before_holding_and_a_drop_keeps_it_applied(
    apiserver: ApiServer, core: client.CoreV1Api
) -> None:
    apiserver.create(node("node-a"))
    apiserver.create(pod("p"))
    apiserver.create(pod("q"))
    hold = apiserver.hold_next("POST", r"/pods/p/binding$", apply_first=True)
    thread, outcome = bind_in_background(core, "p")
    (held,) = hold.wait()
    assert node_of(apiserver, "p") == "node-a"  # applied; the answer is what is held
    assert outcome == []
    hold.drop()
    thread.join(10)
    assert len(outcome) == 1 and isinstance(outcome[0], HTTPError | OSError), outcome
    assert held.status == 201  # what it would have been answered with
    # Only the next matching request is held: q's binding is served at once.
    thread, outcome = bind_in_background(core, "q")
    thread.join(5)
    assert outcome == [201]


def send_and_reset(url: str, method: str, path: str, body: dict) -> None:
    """Send one request on a raw socket, then close it with a reset (a client killed mid-request)."""
    parts = urlsplit(url)
    data = json.dumps(body).encode()
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    )
    with socket.create_connection((parts.hostname, parts.port), timeout=5) as sock:
        sock.sendall(head.encode() + data)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def test_an_answer_to_a_client_that_reset_is_recorded_once_and_is_no_emulator_error(
    apiserver: ApiServer,
) -> None:
    """The crash tests kill the scheduler with Bindings in flight: the server's write then fails."""
    apiserver.create(node("node-a"))
    apiserver.create(pod("p"))
    hold = apiserver.hold_next("POST", r"/pods/p/binding$", apply_first=True)
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p", "namespace": "default"},
        "target": {"kind": "Node", "name": "node-a"},
    }
    send_and_reset(apiserver.url, "POST", "/api/v1/namespaces/default/pods/p/binding", binding)
    (held,) = hold.wait()
    hold.release()  # the answer goes to a connection the client reset
    apiserver.wait_for(lambda: held in apiserver.requests)
    assert [r.status for r in apiserver.requests if r.path.endswith("/pods/p/binding")] == [201]
    assert node_of(apiserver, "p") == "node-a"
    assert not apiserver.internal_errors  # the fixture checks this too, at teardown


def test_stop_drops_what_is_still_held(apiserver: ApiServer, core: client.CoreV1Api) -> None:
    apiserver.create(node("node-a"))
    apiserver.create(pod("p"))
    hold = apiserver.hold_next("POST", r"/pods/p/binding$")
    thread, _ = bind_in_background(core, "p")
    hold.wait()
    apiserver.stop()
    thread.join(10)
    assert not thread.is_alive()
    assert node_of(apiserver, "p") == ""


def watched(core: client.CoreV1Api, since: str, seconds: int) -> list[tuple[str, str]]:
    """(type, name) of the pod watch events from `since`, until the server ends the watch."""
    stream = watch.Watch().stream(
        core.list_namespaced_pod, "default", resource_version=since, timeout_seconds=seconds
    )
    return [(e["type"], e["object"].metadata.name) for e in stream]


def test_delayed_watches_show_nothing_written_since_until_delivered(
    apiserver: ApiServer, core: client.CoreV1Api
) -> None:
    apiserver.create(pod("before"))
    since = core.list_namespaced_pod("default").metadata.resource_version
    apiserver.create(pod("early"))
    apiserver.delay_watches()
    core.create_namespaced_pod("default", pod("late"))
    core.delete_namespaced_pod("early", "default")
    names = [p.metadata.name for p in core.list_namespaced_pod("default").items]
    assert sorted(names) == ["before", "late"]  # requests are served meanwhile
    assert watched(core, since, 1) == [("ADDED", "early")]  # the watch ends at its timeout
    apiserver.deliver_watches()
    assert watched(core, since, 1) == [("ADDED", "early"), ("ADDED", "late"), ("DELETED", "early")]
