"""Requests that skip urllib3's response layers still make their TLS connections as the
client's Configuration says: the server's certificate is checked against the configured
certificate authority, and one that does not verify is no answer. Real kube-apiserver only
(the emulator speaks plain HTTP); not collected without its binaries (conftest.py).
"""

from __future__ import annotations

import pytest

from eventsched.cluster.kube.rest import Rest, TransportError
from tests.kube.realserver import RealApiServer


def test_the_configured_certificate_authority_is_checked(real_apiserver: RealApiServer) -> None:
    configuration = real_apiserver.client().configuration
    assert Rest(configuration).request("GET", "/api/v1/namespaces/default").status == 200

    configuration.ssl_ca_cert = str(real_apiserver.control_plane.client_ca_file)  # another CA
    with pytest.raises(
        TransportError, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"
    ):
        Rest(configuration).request("GET", "/api/v1/namespaces/default")


def test_verify_ssl_off_connects_without_checking(real_apiserver: RealApiServer) -> None:
    configuration = real_apiserver.client().configuration
    configuration.ssl_ca_cert = None
    configuration.verify_ssl = False
    answer = Rest(configuration).request("GET", "/api/v1/namespaces/default")
    assert answer.status == 200 and answer.body["metadata"]["name"] == "default"
