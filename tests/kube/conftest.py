"""Fixtures for Kubernetes-facing tests: the API server emulator and a real client pointed at it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from tests.kube.apiserver import ApiServer


@pytest.fixture
def apiserver() -> Iterator[ApiServer]:
    """A started emulator, stopped at teardown.

    Teardown also fails the test if the emulator itself raised: a bug in the
    emulator answers 500, which a test of retry logic could otherwise take for
    an injected failure and pass.
    """
    server = ApiServer().start()
    try:
        yield server
    finally:
        server.stop()
    assert not server.internal_errors, "the emulator raised:\n" + "\n".join(server.internal_errors)


@pytest.fixture
def api_client(apiserver: ApiServer) -> Iterator[client.ApiClient]:
    """The official client, over HTTP to the emulator, without auth."""
    configuration = client.Configuration(host=apiserver.url)
    api = client.ApiClient(configuration)
    try:
        yield api
    finally:
        api.close()
