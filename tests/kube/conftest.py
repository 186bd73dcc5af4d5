"""Fixtures for Kubernetes-facing tests: a real client pointed at the emulator (tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from tests.kube.apiserver import ApiServer


@pytest.fixture
def api_client(apiserver: ApiServer) -> Iterator[client.ApiClient]:
    """The official client, over HTTP to the emulator, without auth."""
    configuration = client.Configuration(host=apiserver.url)
    api = client.ApiClient(configuration)
    try:
        yield api
    finally:
        api.close()
