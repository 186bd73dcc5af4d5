"""The eventsched process collects garbage less often than CPython's default (cli/gctuning.py).

Each case runs a command in a fresh interpreter, since the setting is process-wide,
and reads the collector's threshold after it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = (
    "import gc, sys\n"
    "from eventsched.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "print(gc.get_threshold()[0])\n"
    "sys.exit(code)\n"
)
CHECK = ["config", "check", str(ROOT / "examples" / "profiles" / "nodelabel.yaml")]


def run(flags: list[str], environment: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "EVENTSCHED_GC_THRESHOLD"}
    if environment is not None:
        env["EVENTSCHED_GC_THRESHOLD"] = environment
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, *flags, *CHECK],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("flags", "environment", "threshold"),
    [
        ([], None, "50000"),
        ([], "700", "700"),
        ([], " 0 ", "0"),
        (["--gc-threshold", "3000"], "700", "3000"),
    ],
)
def test_the_threshold_comes_from_the_flag_else_the_environment_else_the_default(
    flags: list[str], environment: str | None, threshold: str
) -> None:
    done = run(flags, environment)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == threshold


@pytest.mark.parametrize("environment", ["lots", "-1", "1e5"])
def test_a_malformed_environment_value_is_refused_in_one_line(environment: str) -> None:
    done = run([], environment)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(
        f"eventsched: error: EVENTSCHED_GC_THRESHOLD={environment!r}: must be a whole number"
    )


def test_collection_is_paused_while_a_start_builds_its_view_and_restored_after() -> None:
    import gc

    from eventsched.cli.gctuning import collection_paused

    assert gc.isenabled()
    try:
        with collection_paused():
            assert not gc.isenabled()
            raise RuntimeError("a start that fails")
    except RuntimeError:
        pass
    assert gc.isenabled()
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()


def test_no_collection_runs_while_the_command_loads_its_modules() -> None:
    """`main` pauses the collector while the command's modules load (with CPython's
    threshold, loading `config check`'s modules alone collects dozens of times), and
    leaves it on afterwards, as it found it."""
    program = (
        "import gc, sys\n"
        "collections = []\n"
        "gc.callbacks.append(lambda phase, info: phase == 'start' and collections.append(1))\n"
        "from eventsched.cli.main import main\n"
        "before = len(collections)\n"
        "code = main(sys.argv[1:])\n"
        "print(len(collections) - before, gc.isenabled())\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, *CHECK],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "0 True"


def test_run_keeps_the_collector_paused_until_its_scheduler_has_started() -> None:
    from eventsched.cli.main import build_parser

    args = build_parser("run").parse_args(["run"])
    assert args.collect_after_start
    args = build_parser("config").parse_args(CHECK)
    assert not getattr(args, "collect_after_start", False)


def test_resuming_after_a_start_freezes_what_the_start_built() -> None:
    """`run` resumes collection with `freeze`: the objects that exist then (modules, view)
    are out of every later collection's walk, so the first collection after a start
    finds a young generation of what came after it, not the whole heap. In a fresh
    interpreter: freezing is process-wide."""
    program = (
        "import gc\n"
        "from eventsched.cli.gctuning import resume_collection\n"
        "gc.disable()\n"
        "built = [{'pod': i, 'labels': {'app': 'x'}} for i in range(50_000)]\n"
        "resume_collection(freeze=True)\n"
        "gc.collect(0)\n"
        "print(gc.isenabled(), gc.get_freeze_count() >= 50_000, len(gc.get_objects(0)) < 1_000)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "True"]
