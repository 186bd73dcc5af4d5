"""Requests that skip urllib3's response layers still make their TLS connections as the
client's Configuration says: the server's certificate is checked against the configured
certificate authority, and one that does not verify is no answer. Real kube-apiserver only
(the emulator speaks plain HTTP); not collected without its binaries (conftest.py).
"""

from __future__ import annotations

import base64
import json
import ssl
from pathlib import Path

import pytest

from eventsched.cluster.kube.connection import ClientConnection, api_client
from eventsched.cluster.kube.kubeconfig import PlainConfiguration, plain_kubeconfig
from eventsched.cluster.kube.leaselock import LeaseLock
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


def test_requests_on_a_plain_kubeconfig_verify_the_real_api_server(
    real_apiserver: RealApiServer, tmp_path: Path
) -> None:
    path = real_apiserver.kubeconfig(tmp_path / "kubeconfig")
    api = api_client(ClientConnection(kubeconfig=str(path)))
    assert isinstance(api.configuration, PlainConfiguration)
    assert Rest(api.configuration).request("GET", "/api/v1/namespaces/default").status == 200
    # Leader election's Lease requests, from the same file.
    assert LeaseLock(Rest(api.configuration), "default", "absent", "me").get() is None

    doc = json.loads(path.read_text())
    pem = real_apiserver.ca_file.read_bytes()
    del doc["clusters"][0]["cluster"]["certificate-authority"]
    doc["clusters"][0]["cluster"]["certificate-authority-data"] = base64.standard_b64encode(
        pem
    ).decode()
    path.write_text(json.dumps(doc))
    inline = plain_kubeconfig(str(path))
    assert (
        inline is not None
        and Rest(inline).request("GET", "/api/v1/namespaces/default").status == 200
    )

    other = real_apiserver.control_plane.client_ca_file.read_bytes()  # not the server's CA
    doc["clusters"][0]["cluster"]["certificate-authority-data"] = base64.standard_b64encode(
        other
    ).decode()
    path.write_text(json.dumps(doc))
    wrong = plain_kubeconfig(str(path))
    assert wrong is not None
    with pytest.raises(
        TransportError, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"
    ):
        Rest(wrong).request("GET", "/api/v1/namespaces/default")


def test_every_connection_shares_one_context_with_the_authority_loaded_once(
    real_apiserver: RealApiServer, tmp_path: Path
) -> None:
    api = api_client(ClientConnection(kubeconfig=str(real_apiserver.kubeconfig(tmp_path / "kc"))))
    rest = Rest(api.configuration)
    pool = rest._direct  # the connections requests and watches are made on
    assert pool is not None
    target = "/api/v1/namespaces/default/pods?watch=true"
    watches = [pool.open(target, rest._headers()) for _ in range(3)]  # a connection each
    try:
        contexts = {id(w._connection.sock.context) for w in watches}
        assert len(contexts) == 1
        context = watches[0]._connection.sock.context
        assert context.cert_store_stats()["x509_ca"] == 1  # not loaded again per connection
        assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    finally:
        for watch in watches:
            watch.close()
    assert rest.request("GET", "/api/v1/namespaces/default").status == 200


def test_an_authority_file_that_does_not_load_fails_the_first_request_as_before(
    real_apiserver: RealApiServer, tmp_path: Path
) -> None:
    path = real_apiserver.kubeconfig(tmp_path / "kubeconfig")
    (tmp_path / "ca.crt").write_text("not a certificate\n")
    doc = json.loads(path.read_text())
    doc["clusters"][0]["cluster"]["certificate-authority"] = str(tmp_path / "ca.crt")
    path.write_text(json.dumps(doc))
    configuration = plain_kubeconfig(str(path))
    assert configuration is not None
    with pytest.raises(TransportError, match=r"(?i)ssl|certificate|PEM"):
        Rest(configuration).request("GET", "/api/v1/namespaces/default")
