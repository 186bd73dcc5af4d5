"""`eventsched simulate` on a large manifest says what it is doing: plain progress lines when
stderr is no terminal (it was silent until the summary), and on a terminal bars whose clock
starts with their phase (the scheduling bar's started before the cluster's objects were
logged, and at 0% estimated hours)."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from eventsched.cli.progress import BYTES, Progress
from eventsched.cluster.generate import generate_manifests
from eventsched.events import upgrade
from tests.terminal import on_a_terminal
from tests.waiting import wait_for

PODS = 4000


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated cluster of 300 nodes and 4,000 pods in one YAML file (about 2.7 MB)."""
    where = tmp_path_factory.mktemp("large") / "cluster.yaml"
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    with where.open("w") as out:
        yaml.dump_all(generate_manifests(300, PODS, 0), out, Dumper=dumper, sort_keys=False)
    return where


def simulate(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`eventsched simulate` as a process, stdout and stderr in pipes."""
    return subprocess.run(
        [sys.executable, "-m", "eventsched.cli.main", "--db", url, "simulate", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_plain_lines_when_stderr_is_not_a_terminal(large: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'e.db'}"
    upgrade(url)
    done = simulate(url, str(large), "--progress-every", "0.02")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "\r" not in done.stderr  # no bar
    loading = f"loading manifests from {large}: "
    reading = [line for line in lines if line.startswith(loading) and "%" in line]
    assert reading, lines
    shares = [int(m.group(1)) for line in reading if (m := re.search(r"\((\d+)%\)", line))]
    assert len(shares) == len(reading) and shares == sorted(shares) and max(shares) <= 100
    assert re.fullmatch(re.escape(loading) + r"[\d.]+ MiB in \d+ s", lines[len(reading)]), lines
    scheduling = [line for line in lines if line.startswith("scheduling: ")]
    # Until the first pod is decided a line has no rate to estimate from (none in hours).
    rated = rf"scheduling: [\d,]+ of {PODS:,} pods \(\d+%\), [\d,]+ pods/s, about \d+ (s|min) left"
    before_a_rate = rf"scheduling: 0 of {PODS:,} pods \(0%\)"
    assert all(re.fullmatch(f"{rated}|{before_a_rate}", line) for line in scheduling[:-1])
    assert any(re.fullmatch(rated, line) for line in scheduling), scheduling
    assert scheduling[-1].startswith(f"scheduling: {PODS:,} pods in ")
    assert f"of {PODS} pending pods bound" in done.stdout


def test_a_small_cluster_prints_no_progress(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'e.db'}"
    upgrade(url)
    examples = Path(__file__).resolve().parents[2] / "examples" / "cluster"
    done = simulate(url, str(examples))
    assert done.returncode == 0
    assert done.stderr == ""  # every phase took less than a second


def test_a_phase_without_updates_still_says_it_runs() -> None:
    out = io.StringIO()
    with Progress("starting", every=0.05, out=out, terminal=False):
        wait_for("a progress line", lambda: out.getvalue().count("\n") >= 2)
    lines = out.getvalue().splitlines()
    assert all(re.fullmatch(r"starting: \d+ s so far", line) for line in lines[:-1]), lines
    assert re.fullmatch(r"starting: done in \d+ s", lines[-1])


def test_the_total_may_be_learnt_late() -> None:
    out = io.StringIO()
    with Progress("loading", measure=BYTES, every=0.05, out=out, terminal=False) as loading:
        loading.update(3 << 20, 12 << 20)
        wait_for("a progress line", lambda: "%" in out.getvalue())
        loading.update(12 << 20)
    first, *_, last = out.getvalue().splitlines()
    assert re.fullmatch(
        r"loading: 3\.0 of 12\.0 MiB \(25%\), [\d.,]+ MiB/s, about \d+ s left", first
    )
    assert re.fullmatch(r"loading: 12\.0 MiB in \d+ s", last)


#: A tqdm frame: `scheduling:  18%|███ | 709/6000 [00:01<00:07, 705.40pod/s]`.
FRAME = re.compile(
    r"(?P<what>[^:]+):\s+\d+%\|.*\| *(?P<n>\d+)/\d+ \[(?P<elapsed>[\d:]+)<(?P<left>[\d:?]+),"
)


def seconds(clock: str) -> int:
    parts = [int(p) for p in clock.split(":")]
    return sum(p * 60**i for i, p in enumerate(reversed(parts)))


def test_on_a_terminal_each_phase_has_its_own_bar_and_estimate(large: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'e.db'}"
    upgrade(url)
    began = time.monotonic()
    drawn = on_a_terminal(
        [sys.executable, "-m", "eventsched.cli.main", "--db", url, "simulate", str(large)],
        columns=120,
    )
    wall = time.monotonic() - began
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", drawn.decode(errors="replace"))
    frames = [m for part in re.split(r"[\r\n]", text) if (m := FRAME.search(part.strip()))]
    scheduling = [f for f in frames if f["what"] == "scheduling" and int(f["n"]) > 0]
    assert scheduling, text[-2000:]
    # The scheduling bar counts from the start of scheduling: its clock never shows more
    # than the whole run took. Its estimate (FRAME requires one) is not bounded here: how
    # long it is depends on the machine's load, its first frames extrapolating from a few
    # pods, and a bound failed on loaded machines at 3 and at 10 runs' length.
    for frame in scheduling:
        assert seconds(frame["elapsed"]) <= wall, frame.group(0)
