"""Symlinks in a manifest directory: followed, and a loop named in one line (exit 2), never
skipped silently. The directory walk used to skip both a looping file link and a link back
to a directory it sits in without a word, and never read a symlinked directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from eventsched.cluster import load_manifests
from eventsched.events import upgrade
from eventsched.model import ManifestError

NODE = """apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status:
  allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}
"""


def node_file(path: Path, name: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(NODE.format(name=name))
    return path


def test_a_link_back_to_a_directory_it_is_in_is_named(tmp_path: Path) -> None:
    node_file(tmp_path / "m" / "nodes.yaml", "n1")
    os.symlink("..", tmp_path / "m" / "up")
    with pytest.raises(ManifestError) as caught:
        load_manifests([tmp_path / "m"])
    assert str(caught.value) == (
        f"{tmp_path / 'm' / 'up'}: symlink: is a loop: it points to .., a directory it is in; "
        "remove it or point it at manifests"
    )


def test_a_link_to_itself_through_another_is_named(tmp_path: Path) -> None:
    node_file(tmp_path / "m" / "nodes.yaml", "n1")
    os.symlink("b.yaml", tmp_path / "m" / "a.yaml")
    os.symlink("a.yaml", tmp_path / "m" / "b.yaml")
    with pytest.raises(ManifestError) as caught:
        load_manifests([tmp_path / "m"])
    a = tmp_path / "m" / "a.yaml"
    assert str(caught.value) == (
        f"{a}: symlink: is a loop ({a} -> b.yaml -> a.yaml); remove it or point it at manifests"
    )


def test_a_looping_path_given_on_the_command_line_is_named(tmp_path: Path) -> None:
    os.symlink("self.yaml", tmp_path / "self.yaml")
    with pytest.raises(ManifestError, match=r"self\.yaml: symlink: is a loop"):
        load_manifests([tmp_path / "self.yaml"])


def test_directories_reached_through_symlinks_are_read(tmp_path: Path) -> None:
    node_file(tmp_path / "shared" / "gpu.yaml", "gpu-1")
    node_file(tmp_path / "m" / "a.yaml", "a-1")
    os.symlink(tmp_path / "shared", tmp_path / "m" / "b")
    os.symlink(tmp_path / "m" / "a.yaml", tmp_path / "m" / "c.yaml")  # a.yaml again: once
    loaded = load_manifests([tmp_path / "m"])
    assert [n.name for n in loaded.nodes] == ["a-1", "gpu-1"]


def test_a_symlink_to_nothing_is_a_warning(tmp_path: Path) -> None:
    node_file(tmp_path / "m" / "a.yaml", "a-1")
    os.symlink("gone.yaml", tmp_path / "m" / "b.yaml")
    loaded = load_manifests([tmp_path / "m"])
    assert [n.name for n in loaded.nodes] == ["a-1"]
    assert loaded.skipped == [
        f"{tmp_path / 'm' / 'b.yaml'}: a symlink to gone.yaml, which does not exist"
    ]


def test_simulate_names_the_loop_in_one_line_and_exits_2(tmp_path: Path) -> None:
    upgrade(f"sqlite:///{tmp_path / 'e.db'}")
    node_file(tmp_path / "m" / "nodes.yaml", "n1")
    os.symlink(".", tmp_path / "m" / "again")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "eventsched.cli.main",
            "--db",
            f"sqlite:///{tmp_path / 'e.db'}",
            "simulate",
            str(tmp_path / "m"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == (
        f"eventsched: error: {tmp_path / 'm' / 'again'}: symlink: is a loop: it points to ., "
        "a directory it is in; remove it or point it at manifests\n"
    )
