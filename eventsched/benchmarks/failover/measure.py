"""The scenarios by name, and one measured on a fresh run."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable
from pathlib import Path

from eventsched.benchmarks.failover.apiserver_restart import apiserver_restart
from eventsched.benchmarks.failover.kill_leader import kill_leader
from eventsched.benchmarks.failover.pg_restart import pg_restart
from eventsched.benchmarks.failover.report import Result
from eventsched.benchmarks.failover.run import Run, Settings

SCENARIOS = ("kill-leader", "pg-restart", "apiserver-restart")


RUNNERS: dict[str, Callable[[Run, Result], None]] = {
    "kill-leader": kill_leader,
    "pg-restart": pg_restart,
    "apiserver-restart": apiserver_restart,
}


def measure(scenario: str, settings: Settings) -> Result:
    result = Result(scenario, settings.nodes, settings.pods)
    with contextlib.ExitStack() as stack:
        run = Run(stack, settings, upfront=scenario != "pg-restart")
        try:
            RUNNERS[scenario](run, result)
        except Exception as e:
            logs = "\n".join(_tail(r.log) for r in run.replicas)
            result.error = f"{type(e).__name__}: {e}\n{logs}"
        for replica in run.replicas:
            replica.stop()
        result.checks = run.check()
        if settings.keep_logs is not None:
            kept = settings.keep_logs / scenario
            kept.mkdir(parents=True, exist_ok=True)
            for log in run.cp.workdir.glob("*.log"):
                shutil.copy(log, kept / log.name)
    return result


def _tail(path: Path, lines: int = 10) -> str:
    try:
        return f"--- {path.name} ---\n" + "\n".join(path.read_text().splitlines()[-lines:])
    except OSError:
        return ""
