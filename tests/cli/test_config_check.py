"""`eventsched config check`: upstream example configs pass, bad ones fail naming the field."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from eventsched.cli.main import main

UPSTREAM = sorted((Path(__file__).parent.parent / "config" / "upstream").glob("*.yaml"))
EXAMPLES = sorted((Path(__file__).parents[2] / "examples" / "profiles").glob("*.yaml"))


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def check(capsys: pytest.CaptureFixture[str]) -> Callable[..., Done]:
    """The command in-process (the CLI tests elsewhere run it as a process)."""

    def run(path: Path, *extra: str) -> Done:
        code = main(["config", "check", str(path), *extra])
        out = capsys.readouterr()
        return Done(code, out.out, out.err)

    return run


@pytest.mark.parametrize("path", UPSTREAM + EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_accepted_and_the_effective_config_reads_back_the_same(
    path: Path, tmp_path: Path, check: Callable[..., Done]
) -> None:
    first = check(path)
    assert first.returncode == 0, first.stderr
    effective = yaml.safe_load(first.stdout)
    assert effective["kind"] == "KubeSchedulerConfiguration"
    again = tmp_path / "effective.yaml"
    again.write_text(first.stdout)
    second = check(again)
    assert second.returncode == 0, second.stderr
    # Comments aside: each says the version and gates it decides as, and the first names
    # what the default profile leaves out (DynamicResources at the newest version); the
    # effective config disables every default, so the second leaves nothing out.
    def uncommented(text: str) -> str:
        return "".join(line for line in text.splitlines(True) if line[:1] != "#")

    assert first.stdout.startswith("# deciding as Kubernetes 1.37; feature gates ")
    assert second.stdout.splitlines()[0] == first.stdout.splitlines()[0]
    assert uncommented(second.stdout) == uncommented(first.stdout)


def test_effective_config_shows_expanded_plugins_and_weights(check: Callable[..., Done]) -> None:
    done = check(Path(__file__).parent.parent / "config" / "upstream" / "reweighted-defaults.yaml")
    profile = yaml.safe_load(done.stdout)["profiles"][0]
    assert profile["plugins"]["score"]["enabled"] == [
        {"name": "NodeAffinity", "weight": 5},
        {"name": "NodeResourcesFit", "weight": 1},
        {"name": "VolumeBinding", "weight": 1},
        {"name": "PodTopologySpread", "weight": 2},
        {"name": "InterPodAffinity", "weight": 2},
        {"name": "NodeResourcesBalancedAllocation", "weight": 1},
        {"name": "ImageLocality", "weight": 1},
    ]
    assert {"name": "TaintToleration"} in profile["plugins"]["filter"]["enabled"]


def test_cluster_level_spread_defaults_load_and_are_in_force(check: Callable[..., Done]) -> None:
    """kubernetes.io's example of PodTopologySpread defaults, unchanged: its args are kept."""
    done = check(
        Path(__file__).parent.parent / "config" / "upstream" / "topology-spread-defaults.yaml"
    )
    assert done.returncode == 0 and done.stderr == ""
    profile = yaml.safe_load(done.stdout)["profiles"][0]
    (spread,) = [c for c in profile["pluginConfig"] if c["name"] == "PodTopologySpread"]
    assert spread["args"]["defaultingType"] == "List"
    assert spread["args"]["defaultConstraints"][0]["topologyKey"] == "topology.kubernetes.io/zone"


def test_a_warning_for_a_plugin_eventsched_lacks_goes_to_stderr(
    check: Callable[..., Done], tmp_path: Path
) -> None:
    config = tmp_path / "dra.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n  - pluginConfig:\n      - name: DynamicResources\n"
        "        args: {}\n"
    )
    done = check(config)
    assert done.returncode == 0
    assert "DynamicResources is not implemented by eventsched yet" in done.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodeAfinity\n",
            "profiles[0].plugins.score.enabled[0].name: unknown plugin 'NodeAfinity'; known plugins:",
        ),
        (
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: Packed\n",
            "profiles[0].pluginConfig[0].args.scoringStrategy.type:",
        ),
        (
            "percentageOfNodesToScore: 150\n",
            "percentageOfNodesToScore: must be a whole number 0..100",
        ),
        ("profiles:\n- schedulerName: a\n  plugin: {}\n", "profiles[0].plugin: unknown field"),
    ],
)
def test_rejected_with_the_path_and_exit_2(
    tmp_path: Path, text: str, message: str, check: Callable[..., Done]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + text
    )
    done = check(path)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"eventsched: error: {path}: {message}"), lines[0]
