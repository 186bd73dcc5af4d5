"""The secure serving flags refuse what cannot be served in one line naming the flag, exit 2,
before anything starts (`run`, `shadow` and `extender` alike); the self-signed certificate is made at start,
and kept in --cert-dir when one is given."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from eventsched.cli.secureserving import add_serving_arguments, secure_serving
from tests.serving.certs import issue, make_ca

ROOT = Path(__file__).resolve().parents[2]


def _eventsched(tmp_path: Path, command: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable, "-c", "from eventsched.cli.main import main; raise SystemExit(main())",
            "--db", f"sqlite:///{tmp_path / 'x.db'}", command,
            "--kubeconfig", str(tmp_path / "no-kubeconfig"), *args,
        ],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip


def _refused(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("eventsched: error: ")
    return lines[0].removeprefix("eventsched: error: ")


@pytest.mark.parametrize("command", ["run", "shadow", "extender"])
def test_a_certificate_that_is_not_there_is_refused(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "missing.crt"
    line = _refused(
        _eventsched(
            tmp_path, command, "--tls-cert-file", str(missing),
            "--tls-private-key-file", str(tmp_path / "k"),
        )
    )  # fmt: skip
    assert line == f"--tls-cert-file {missing}: No such file or directory"


@pytest.mark.parametrize("command", ["run", "shadow", "extender"])
def test_an_expired_certificate_is_refused(tmp_path: Path, command: str) -> None:
    ca = make_ca(tmp_path)
    old = issue(ca, tmp_path, "old", "localhost", client=False, expired=True)
    line = _refused(
        _eventsched(
            tmp_path, command, "--tls-cert-file", str(old.crt),
            "--tls-private-key-file", str(old.key),
        )
    )  # fmt: skip
    assert line.startswith(f"--tls-cert-file {old.crt}: the certificate expired at ")


def test_a_client_ca_that_does_not_parse_is_refused(tmp_path: Path) -> None:
    garbage = tmp_path / "ca.crt"
    garbage.write_text(
        "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n"
    )
    line = _refused(_eventsched(tmp_path, "run", "--client-ca-file", str(garbage)))
    assert line.startswith(f"--client-ca-file {garbage}: not a PEM certificate authority")
    empty = tmp_path / "empty.crt"
    empty.write_text("nothing here\n")
    line = _refused(_eventsched(tmp_path, "shadow", "--client-ca-file", str(empty)))
    assert line.startswith(f"--client-ca-file {empty}: not a PEM certificate authority")
    line = _refused(_eventsched(tmp_path, "extender", "--client-ca-file", str(garbage)))
    assert line.startswith(f"--client-ca-file {garbage}: not a PEM certificate authority")
    missing = tmp_path / "missing-ca.crt"
    line = _refused(_eventsched(tmp_path, "extender", "--client-ca-file", str(missing)))
    assert line == f"--client-ca-file {missing}: no such file"


def test_a_key_of_another_certificate_and_a_lone_certificate_are_refused(tmp_path: Path) -> None:
    ca = make_ca(tmp_path)
    one = issue(ca, tmp_path, "one", "localhost", client=False)
    two = issue(ca, tmp_path, "two", "localhost", client=False)
    line = _refused(
        _eventsched(
            tmp_path, "run", "--tls-cert-file", str(one.crt), "--tls-private-key-file", str(two.key)
        )
    )
    assert line.startswith(f"--tls-private-key-file {two.key}: not the private key of {one.crt}")
    line = _refused(_eventsched(tmp_path, "run", "--tls-cert-file", str(one.crt)))
    assert line == "--tls-cert-file needs --tls-private-key-file too"


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_serving_arguments(parser)
    return parser.parse_args(list(argv))


def test_defaults_are_kube_schedulers_and_plain_http_is_off() -> None:
    args = _args()
    assert (args.secure_port, args.bind_address, args.http_address) == (10259, "0.0.0.0", None)
    serving = secure_serving(args)
    assert serving is not None
    assert serving.always_allow_paths == ("/healthz", "/readyz", "/livez")
    assert secure_serving(_args("--secure-port", "0")) is None


def test_the_self_signed_certificate_is_kept_in_cert_dir_and_reused(tmp_path: Path) -> None:
    secure_serving(_args("--cert-dir", str(tmp_path / "certs")))
    crt = tmp_path / "certs" / "eventsched.crt"
    key = tmp_path / "certs" / "eventsched.key"
    first = crt.read_bytes()
    assert key.stat().st_mode & 0o077 == 0
    secure_serving(_args("--cert-dir", str(tmp_path / "certs")))
    assert crt.read_bytes() == first


def test_the_old_plain_http_address_on_the_secure_port_says_what_to_do(tmp_path: Path) -> None:
    line = _refused(_eventsched(tmp_path, "run", "--http-address", "0.0.0.0:10259"))
    assert line.startswith(
        "--http-address 0.0.0.0:10259 is on --secure-port 10259, where HTTPS is now served"
    )
