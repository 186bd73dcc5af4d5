"""Plain kubeconfigs and the in-cluster account read without the official client
(cluster/kube/kubeconfig.py): the same fields as the official loader reads, the
official loader for everything else, and requests that work on the real API server."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config

from eventsched.cluster.kube import kubeconfig
from eventsched.cluster.kube.connection import ClientConnection, KubeConfigError, api_client
from eventsched.cluster.kube.kubeconfig import plain_in_cluster, plain_kubeconfig

PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def write(path: Path, cluster: dict[str, Any], user: dict[str, Any], **extra: Any) -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "c1", "cluster": cluster},
            {"name": "c2", "cluster": {"server": "https://other:6443"}},
        ],
        "users": [{"name": "u1", "user": user}],
        "contexts": [
            {"name": "first", "context": {"cluster": "c1", "user": "u1", "namespace": "x"}},
            {"name": "second", "context": {"cluster": "c2", "user": "u1"}},
        ],
        "current-context": "first",
        **extra,
    }
    path.write_text(json.dumps(doc))
    return path


def official(path: Path, context: str | None = None) -> client.Configuration:
    configuration = client.Configuration()
    config.load_kube_config(
        config_file=str(path), context=context, client_configuration=configuration
    )
    return configuration


def header(configuration: Any) -> str | None:
    settings = configuration.auth_settings()
    return settings["BearerToken"]["value"] if settings else None


@pytest.fixture
def files(tmp_path: Path) -> Path:
    for name in ("ca.crt", "client.crt", "client.key"):
        (tmp_path / name).write_text(PEM)
    return tmp_path


PLAIN = {
    "token and CA file": (
        {"server": "https://k:6443/", "certificate-authority": "ca.crt"},
        {"token": "t0k"},
    ),
    "client certificate": (
        {"server": "https://k:6443", "certificate-authority": "ca.crt"},
        {"client-certificate": "client.crt", "client-key": "client.key"},
    ),
    "insecure, server name": (
        {
            "server": "https://10.0.0.1:6443",
            "insecure-skip-tls-verify": True,
            "tls-server-name": "k",
        },
        {"token": "t"},
    ),
    "plain HTTP ignores certificates": (
        {"server": "http://k:8080", "certificate-authority": "missing.crt"},
        {"client-certificate": "missing.crt"},
    ),
    "no user": ({"server": "https://k:6443"}, {}),
}


@pytest.mark.parametrize("name", PLAIN)
def test_a_plain_kubeconfig_reads_as_the_official_loader_reads_it(files: Path, name: str) -> None:
    cluster, user = PLAIN[name]
    path = write(files / "kubeconfig", cluster, user)
    plain = plain_kubeconfig(str(path))
    assert plain is not None
    want = official(path)
    for field in ("host", "verify_ssl", "ssl_ca_cert", "cert_file", "key_file", "tls_server_name"):
        assert getattr(plain, field) == getattr(want, field), field
    assert header(plain) == header(want)


def test_certificate_authority_data_is_the_pem_the_official_loader_writes_to_a_file(
    files: Path,
) -> None:
    data = base64.standard_b64encode(PEM.encode()).decode()
    cluster = {
        "server": "https://k:6443",
        "certificate-authority-data": data,
        "certificate-authority": "ca.crt",
    }
    path = write(files / "kubeconfig", cluster, {"token": "t"})
    plain = plain_kubeconfig(str(path))
    assert plain is not None and plain.ssl_ca_cert is None
    assert plain.ca_cert_data == Path(official(path).ssl_ca_cert).read_text() == PEM


def test_the_named_context_is_read_instead_of_the_current_one(files: Path) -> None:
    path = write(files / "kubeconfig", {"server": "https://k:6443"}, {"token": "t"})
    plain = plain_kubeconfig(str(path), "second")
    assert plain is not None and plain.host == official(path, "second").host == "https://other:6443"


NOT_PLAIN = {
    "exec plugin": ({"server": "https://k:6443"}, {"exec": {"command": "get-token"}}),
    "auth provider": ({"server": "https://k:6443"}, {"auth-provider": {"name": "oidc"}}),
    "token file": ({"server": "https://k:6443"}, {"tokenFile": "token"}),
    "username and password": ({"server": "https://k:6443"}, {"username": "a", "password": "b"}),
    "inline client certificate": (
        {"server": "https://k:6443"},
        {"client-certificate-data": "eA=="},
    ),
    "proxy": ({"server": "https://k:6443", "proxy-url": "http://proxy:3128"}, {}),
    "missing CA file": ({"server": "https://k:6443", "certificate-authority": "gone.crt"}, {}),
    "CA data not base64": ({"server": "https://k:6443", "certificate-authority-data": "%%"}, {}),
    "no server": ({"certificate-authority": "ca.crt"}, {"token": "t"}),
    "a server without a scheme": ({"server": "k:6443"}, {}),
    "a token that is not text": ({"server": "https://k:6443"}, {"token": 42}),
    "insecure as text": ({"server": "https://k:6443", "insecure-skip-tls-verify": "yes"}, {}),
}


@pytest.mark.parametrize("name", NOT_PLAIN)
def test_anything_else_is_left_to_the_official_loader(files: Path, name: str) -> None:
    cluster, user = NOT_PLAIN[name]
    assert plain_kubeconfig(str(write(files / "kubeconfig", cluster, user))) is None


def test_missing_or_ambiguous_entries_and_several_files_are_left_to_it(files: Path) -> None:
    cluster, user = {"server": "https://k:6443"}, {"token": "t"}
    assert (
        plain_kubeconfig(str(write(files / "a", cluster, user, **{"current-context": "nope"})))
        is None
    )
    doubled = write(files / "b", cluster, user)
    doc = json.loads(doubled.read_text())
    doc["users"].append(doc["users"][0])
    doubled.write_text(json.dumps(doc))
    assert plain_kubeconfig(str(doubled)) is None
    good = write(files / "c", cluster, user)
    assert plain_kubeconfig(f"{good}:{good}") is None
    assert plain_kubeconfig(str(files / "absent")) is None
    (files / "d").write_text("{not: yaml: at all")
    assert plain_kubeconfig(str(files / "d")) is None


def test_api_client_uses_the_official_loader_and_its_words_for_the_rest(files: Path) -> None:
    (files / "token").write_text("from-file")
    path = write(files / "kubeconfig", {"server": "https://k:6443"}, {"tokenFile": "token"})
    api = api_client(ClientConnection(kubeconfig=str(path)))
    assert isinstance(api.configuration, client.Configuration)
    assert header(api.configuration) == "Bearer from-file"
    broken = write(
        files / "broken", {"server": "https://k:6443", "certificate-authority": "gone"}, {}
    )
    with pytest.raises(
        KubeConfigError, match=r"^cannot configure the Kubernetes client from kubeconfig .*gone"
    ):
        api_client(ClientConnection(kubeconfig=str(broken)))


def test_the_service_account_is_read_and_its_rotated_token_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ca.crt").write_text(PEM)
    token = tmp_path / "token"
    token.write_text("first\n")
    monkeypatch.setattr(kubeconfig, "SERVICE_CA", str(tmp_path / "ca.crt"))
    monkeypatch.setattr(kubeconfig, "SERVICE_TOKEN", str(token))
    env = {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"}
    plain = plain_in_cluster(env)
    assert plain is not None
    assert (plain.host, plain.ssl_ca_cert) == ("https://[fd00::1]:443", str(tmp_path / "ca.crt"))
    assert header(plain) == "Bearer first"
    token.write_text("second")
    assert header(plain) == "Bearer second"
    token.unlink()
    assert header(plain) == "Bearer second"  # kept while the file is away
    assert plain_in_cluster({}) is None
    assert plain_in_cluster(env) is None  # no token: the official loader says why


def test_starting_on_a_plain_kubeconfig_does_not_import_the_official_client(files: Path) -> None:
    path = write(
        files / "kubeconfig",
        {"server": "https://k:6443", "certificate-authority": "ca.crt"},
        {"token": "t"},
    )
    code = (
        "import sys\n"
        "from eventsched.cluster.kube.connection import ClientConnection, api_client\n"
        f"api = api_client(ClientConnection(kubeconfig={str(path)!r}))\n"
        "from eventsched.cluster.kube.rest import Rest\n"
        "Rest(api.configuration)\n"
        "print(type(api.configuration).__name__, 'kubernetes' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["PlainConfiguration", "False"]
