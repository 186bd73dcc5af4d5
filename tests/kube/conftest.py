"""Fixtures for Kubernetes-facing tests: the official client pointed at the test's API server."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from kubernetes import client

from tests.kube.realserver import real_binaries
from tests.kube.scripted import Script, ScriptedServer

#: The RBAC, TLS and UI access tests need a real API server: not collected without the
#: binaries.
collect_ignore = (
    []
    if real_binaries() is not None
    else [
        "test_rbac_real.py",
        "test_tls_real.py",
        "test_secure_serving_real.py",
        "test_ui_access_real.py",
    ]
)


@pytest.fixture
def api_client(request: pytest.FixtureRequest) -> Iterator[client.ApiClient]:
    """The official client for the test's server: `kube_server` if the test uses it, else the
    emulator `apiserver` (tests/conftest.py).

    Emulator: HTTP without auth. Real kube-apiserver: HTTPS verified against the control
    plane's CA file, with the admin bearer token.
    """
    name = "kube_server" if "kube_server" in request.fixturenames else "apiserver"
    api = request.getfixturevalue(name).client()
    try:
        yield api
    finally:
        api.close()


@pytest.fixture
def serve() -> Iterator[Callable[[Script], ScriptedServer]]:
    """Starts scripted servers (scripted.py); each is stopped after the test."""
    servers: list[ScriptedServer] = []

    def start(script: Script) -> ScriptedServer:
        server = ScriptedServer(script)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
