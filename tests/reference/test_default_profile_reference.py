"""The default profile against each reference kube-scheduler's own: `--write-config-to` writes the
defaulted KubeSchedulerConfiguration, whose MultiPoint set and VolumeBinding args eventsched's
must be (config/upstreamplugins.py), less what eventsched does not implement."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from eventsched.benchmarks.kubebinaries import reference_binaries
from eventsched.config.featuregates import REFERENCES, features_for
from eventsched.config.upstreamplugins import upstream_default_multi_point
from eventsched.framework import Handle
from eventsched.plugins import full_registry

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {}}]
current-context: c
"""


def _written_config(minor: str, tmp_path: Path) -> dict[str, Any]:
    binaries = reference_binaries(minor)
    if binaries is None or binaries.scheduler is None:
        pytest.skip(f"kube-scheduler {minor} is not built here (tests/reference/build.sh {minor})")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    out = tmp_path / "written.yaml"
    subprocess.run(
        [
            str(binaries.scheduler),
            f"--kubeconfig={kubeconfig}",
            f"--write-config-to={out}",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    written: dict[str, Any] = yaml.safe_load(out.read_text())
    return written


@pytest.mark.parametrize("minor", REFERENCES)
def test_the_default_multipoint_set_is_the_reference_schedulers(minor: str, tmp_path: Path) -> None:
    (profile,) = _written_config(minor, tmp_path)["profiles"]
    theirs = [(p["name"], p.get("weight", 0)) for p in profile["plugins"]["multiPoint"]["enabled"]]
    ours = [(p.name, p.weight) for p in upstream_default_multi_point(features_for(minor))]
    if minor == "1.28":
        # v1.28 appends SchedulingGates (PodSchedulingReadiness); eventsched lists it
        # first, where it serves PreEnqueue alone.
        ours = [*ours[1:], ours[0]]
    assert ours == theirs


@pytest.mark.parametrize("minor", REFERENCES)
def test_volume_bindings_default_args_are_the_reference_schedulers(
    minor: str, tmp_path: Path
) -> None:
    (profile,) = _written_config(minor, tmp_path)["profiles"]
    (args,) = [c["args"] for c in profile["pluginConfig"] if c["name"] == "VolumeBinding"]
    plugin = full_registry().factory("VolumeBinding")({}, Handle(), features_for(minor))
    assert plugin.bind_timeout_seconds == args["bindTimeoutSeconds"]
    shape = tuple((p["utilization"], p["score"]) for p in args.get("shape", ()))
    assert plugin.shape_args == shape
