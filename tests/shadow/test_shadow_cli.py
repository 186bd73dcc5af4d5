"""`eventsched shadow` refuses bad input in one line with exit code 2, before watching, and
picks the profile that decides each shadowed scheduler's pods."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from eventsched.cli.shadow import EVERY_NODE, shadowed_profiles
from eventsched.config.defaults import default_profile
from eventsched.config.file import ConfigError, SchedulerConfig, parse_config
from eventsched.plugins import full_registry

ROOT = Path(__file__).resolve().parents[2]
HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def _shadow(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable, "-c", "from eventsched.cli.main import main; raise SystemExit(main())",
            "--db", f"sqlite:///{tmp_path / 'x.db'}", "shadow", *args,
        ],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip


def test_a_scheduler_the_configuration_has_no_profile_for_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(HEAD + "profiles:\n- schedulerName: a\n- schedulerName: b\n")
    done = _shadow(tmp_path, "--config", str(config), "--scheduler-name", "c")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "eventsched: error: --scheduler-name: the configuration has no profile with "
        "schedulerName 'c' (it has a, b): give kube-scheduler's own configuration file, "
        "or name one of its profiles"
    ]
    assert "Traceback" not in done.stderr + done.stdout


def test_a_bad_http_address_is_refused_in_one_line(tmp_path: Path) -> None:
    done = _shadow(tmp_path, "--http-address", "bogus")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "eventsched: error: --http-address 'bogus': expected HOST:PORT, e.g. 0.0.0.0:10259 "
        "or :10259"
    ]


def _config(text: str) -> SchedulerConfig:
    import yaml

    return parse_config(yaml.safe_load(HEAD + text), "config", full_registry())


def test_each_shadowed_scheduler_is_decided_by_its_profile_scoring_every_node() -> None:
    config = _config(
        "percentageOfNodesToScore: 30\nprofiles:\n- schedulerName: default-scheduler\n"
        "- schedulerName: batch\n  plugins:\n    score:\n      disabled:\n      - name: '*'\n"
    )
    batch, default = shadowed_profiles(config, ["batch", "default-scheduler"], from_file=True)
    assert batch.scheduler_name == "batch" and not batch.at("score")
    assert default.scheduler_name == "default-scheduler" and default.at("score")
    assert batch.percentage_of_nodes_to_score == default.percentage_of_nodes_to_score == EVERY_NODE


def test_a_file_listing_no_profiles_has_kube_schedulers_default_one() -> None:
    (profile,) = shadowed_profiles(_config(""), ["default-scheduler"], from_file=True)
    expected = default_profile("default-scheduler")
    assert profile.plugins == expected.plugins
    with pytest.raises(ConfigError):
        shadowed_profiles(_config("profiles:\n- schedulerName: x\n"), ["y"], from_file=True)
