"""`eventsched ui`'s serving flags: HTTPS needs an API server to ask, `--insecure-local`
is loopback only, and each bad value is one line naming its flag, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from eventsched.cli.main import main
from eventsched.ui.app import Settings, create_app
from tests.serving.certs import issue, make_ca


@pytest.fixture
def outside_a_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


def _refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err
    return err


def test_without_an_api_server_or_insecure_local_it_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], outside_a_cluster: None
) -> None:
    err = _refused(["ui", "--db", f"sqlite:///{tmp_path / 'e.db'}"], capsys)
    assert "--kubeconfig" in err and "--insecure-local" in err


@pytest.mark.parametrize("address", ["0.0.0.0:8090", "192.0.2.1:8090", "[::]:0", "ui.example:1"])
def test_insecure_local_refuses_a_non_loopback_address(
    address: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _refused(["ui", "--insecure-local", "--listen", address], capsys)
    assert err.startswith(f"eventsched: error: --listen {address}: --insecure-local serves")


def test_listen_without_insecure_local_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused(["ui", "--listen", "127.0.0.1:0", "--kubeconfig", "k"], capsys)
    assert "--listen 127.0.0.1:0: plain HTTP needs --insecure-local" in err


def test_a_missing_certificate_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.crt"
    args = ["ui", "--kubeconfig", "k", "--tls-cert-file", str(missing)]
    err = _refused([*args, "--tls-private-key-file", str(tmp_path / "nope.key")], capsys)
    assert err.startswith(f"eventsched: error: --tls-cert-file {missing}: ")


def test_an_unparseable_client_ca_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ca = make_ca(tmp_path)
    server = issue(ca, tmp_path, "server", "localhost", client=False)
    garbage = tmp_path / "ca.pem"
    garbage.write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    args = ["ui", "--kubeconfig", "k", "--tls-cert-file", str(server.crt)]
    args += ["--tls-private-key-file", str(server.key), "--client-ca-file", str(garbage)]
    err = _refused(args, capsys)
    assert f"--client-ca-file {garbage}: not a PEM certificate authority" in err


def test_the_app_is_never_made_without_saying_who_may_read(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"Settings\.access"):
        create_app(Settings(f"sqlite:///{tmp_path / 'e.db'}"))
