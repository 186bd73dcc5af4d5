"""The session's temporary directories in memory: `tmp_path` under /dev/shm when it exists.

Most tests open an SQLite log under `tmp_path`, and SQLite syncs every commit to the disk:
25 ms a commit on this kind of machine, so that the breadth suite's replays spent most of
their time waiting on the disk (100 scenarios: 28-52 s on disk, 8-14 s in memory, 3-4 s
of CPU either way). Nothing the tests check depends on the disk: a killed process loses
nothing on tmpfs either.

Each session makes a directory of its own, named for its pid, since sessions may run side
by side; it is removed when the session passes, kept when it fails (to look at), and
removed by the next session once its process is gone. `--basetemp` is used as given.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

MEMORY = Path("/dev/shm")
PREFIX = "eventsched-pytest-"
#: The directory this session made (the controller's; unset on workers and with --basetemp).
_OURS = pytest.StashKey[Path]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Before the tmp_path factory reads it: the basetemp in memory, on the controller
    (pytest-xdist's workers get their own directory under it)."""
    if config.option.basetemp is not None or hasattr(config, "workerinput"):
        return
    if not (MEMORY.is_dir() and os.access(MEMORY, os.W_OK)):
        return
    _remove_finished_sessions()
    config.option.basetemp = str(MEMORY / f"{PREFIX}{os.getpid()}")
    config.stash[_OURS] = Path(config.option.basetemp)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    ours = session.config.stash.get(_OURS, None)
    if ours is not None and exitstatus == pytest.ExitCode.OK:
        shutil.rmtree(ours, ignore_errors=True)


def _remove_finished_sessions() -> None:
    for directory in MEMORY.glob(f"{PREFIX}*"):
        pid = directory.name.removeprefix(PREFIX)
        if pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(directory, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
