"""The reference Kubernetes builds (tests/reference/build.sh): pinned modules, a build keyed by
version that does nothing once built, and binaries that say which version they are."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from eventsched.benchmarks.kubebinaries import binary_version, reference_binaries

HERE = Path(__file__).parent
BUILD = HERE / "build.sh"
#: Each reference module: (minor, the k8s.io/kubernetes version, its staging modules' tag).
MODULES = (("1.37", "v1.37.2", "v0.37.2"), ("1.34", "v1.34.4", "v0.34.4"))


def _requires(go_mod: str) -> dict[str, str]:
    return dict(re.findall(r"^\s+(\S+) (v\S+)(?: // indirect)?$", go_mod, re.M))


def _replaces(go_mod: str) -> dict[str, tuple[str, str]]:
    return {
        old: (new, version)
        for old, new, version in re.findall(r"^\s+(\S+) => (\S+) (v\S+)$", go_mod, re.M)
    }


@pytest.mark.parametrize(("minor", "version", "staging"), MODULES)
def test_each_module_pins_kubernetes_and_replaces_every_staging_module(
    minor: str, version: str, staging: str
) -> None:
    go_mod = (HERE / f"v{minor}" / "go.mod").read_text()
    assert _requires(go_mod)["k8s.io/kubernetes"] == version
    replaces = _replaces(go_mod)
    # k8s.io/kubernetes requires its staging modules at v0.0.0 (their source is in its own
    # repository, not in the module): each one must point at its published tag.
    staged = [m for m, v in _requires(go_mod).items() if m.startswith("k8s.io/") and v == "v0.0.0"]
    assert staged, "go mod tidy lists the staging modules k8s.io/kubernetes requires"
    for module in staged:
        assert replaces.get(module) == (module, staging), module
    assert set(replaces) >= {"k8s.io/api", "k8s.io/client-go", "k8s.io/kube-scheduler"}
    go_sum = (HERE / f"v{minor}" / "go.sum").read_text()
    assert f"k8s.io/kubernetes {version} h1:" in go_sum
    assert f"k8s.io/kube-scheduler {staging} h1:" in go_sum
    # The three commands and the gate table's source are what the module builds.
    for command in ("kube-apiserver", "kube-scheduler", "kube-controller-manager"):
        assert f"\tk8s.io/kubernetes/cmd/{command}\n" in go_mod
    assert (HERE / f"v{minor}" / "featuregates" / "main.go").is_file()


def test_an_unknown_version_is_refused_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        ["bash", str(BUILD), "1.99"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "EVENTSCHED_REFERENCE_CACHE": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "build.sh: no reference module for Kubernetes 1.99 (have: v1.34 v1.37 )"
    ]
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(("minor", "version", "staging"), MODULES)
def test_a_built_version_is_not_built_again(minor: str, version: str, staging: str) -> None:
    binaries = reference_binaries(minor)
    if binaries is None:
        pytest.skip(f"Kubernetes {minor} is not built here (tests/reference/build.sh {minor})")
    folder = binaries.apiserver.parent
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    done = subprocess.run(
        ["bash", str(BUILD), minor], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == str(folder)
    assert "building" not in done.stderr
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before
    # What the build stamped into the binaries: /version answers with it.
    for binary in (binaries.apiserver, binaries.scheduler, binaries.controller_manager):
        assert binary is not None
        assert binary_version(binary) == version
    assert binaries.minor == minor
