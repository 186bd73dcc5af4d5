"""`eventsched extender` refuses bad input in one line with exit code 2, before serving
(the certificate files' problems: tests/serving/test_serving_flags.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.serving.certs import make_ca

ROOT = Path(__file__).resolve().parents[2]


def _extender(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from eventsched.cli.main import main; raise SystemExit(main())",
            "--db",
            f"sqlite:///{tmp_path / 'x.db'}",
            "extender",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


def _refused(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    return line.removeprefix("eventsched: error: ")


def test_the_old_listen_flag_says_what_replaced_it(tmp_path: Path) -> None:
    line = _refused(_extender(tmp_path, "--listen", "0.0.0.0:8888"))
    assert line == (
        "--listen 0.0.0.0:8888: the extender now serves HTTPS on --bind-address and "
        "--secure-port (default 0.0.0.0:8888) with --client-ca-file; give --http-address "
        "HOST:PORT (and --secure-port 0) to keep serving plain HTTP"
    )


def test_a_bad_http_address_is_refused_in_one_line(tmp_path: Path) -> None:
    line = _refused(_extender(tmp_path, "--secure-port", "0", "--http-address", "bogus"))
    assert line == "--http-address 'bogus': expected HOST:PORT, e.g. 0.0.0.0:10259 or :10259"


def test_https_needs_the_client_ca_of_kube_schedulers_certificate(tmp_path: Path) -> None:
    line = _refused(_extender(tmp_path))
    assert line.startswith("--secure-port 8888 needs --client-ca-file: the authority that signed")
    line = _refused(_extender(tmp_path, "--secure-port", "0"))
    assert line == (
        "--secure-port 0 without --http-address: nothing would serve kube-scheduler's calls"
    )


def test_an_unknown_profile_names_the_ones_there_are(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: a\n- schedulerName: b\n"
    )
    ca = make_ca(tmp_path)
    done = _extender(
        tmp_path, "--client-ca-file", str(ca.crt), "--config", str(config), "--profile", "c"
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "eventsched: error: --profile: no profile named 'c'; the configuration has a, b"
    ]
    assert "Traceback" not in done.stderr + done.stdout


def test_a_bad_configuration_field_is_named(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "extenders:\n- urlPrefix: http://127.0.0.1:1/\n  prioritizeVerb: prioritize\n"
    )
    done = _extender(
        tmp_path, "--secure-port", "0", "--http-address", "127.0.0.1:0", "--config", str(config)
    )
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "extenders[0].weight" in line
