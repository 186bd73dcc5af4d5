"""`eventsched run` as a child process: the environment it gets, and its orderly stop.

A scheduler that does not stop after SIGTERM is aborted with SIGABRT; with
PYTHONFAULTHANDLER set (`child_env`), Python then prints every thread's stack
to the child's output, so the failure shows where each thread waited.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable


def child_env() -> dict[str, str]:
    """The child's environment: this process's as it is now, unbuffered output, and stacks
    on SIGABRT."""
    return {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"}


def terminate(proc: subprocess.Popen[str], output: Callable[[], str], timeout: float = 30.0) -> int:
    """SIGTERM and wait for the exit code; a child still running after `timeout` is
    aborted and the test fails with its output, the stacks at its end."""
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        proc.wait(20)
        raise AssertionError(
            f"the scheduler did not stop within {timeout:g} s of SIGTERM; its threads when "
            f"aborted are at the end of its output:\n{output()}"
        ) from None
