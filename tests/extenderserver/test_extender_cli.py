"""`eventsched extender` refuses bad input in one line with exit code 2, before serving."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def test_a_bad_listen_address_is_refused_in_one_line(tmp_path: Path) -> None:
    done = _extender(tmp_path, "--listen", "bogus")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "eventsched: error: --listen 'bogus': expected HOST:PORT, e.g. 0.0.0.0:10259 or :10259"
    ]


def test_an_unknown_profile_names_the_ones_there_are(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: a\n- schedulerName: b\n"
    )
    done = _extender(tmp_path, "--config", str(config), "--profile", "c")
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
    done = _extender(tmp_path, "--config", str(config))
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "extenders[0].weight" in line
