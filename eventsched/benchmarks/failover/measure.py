"""The scenarios by name, and one measured on a fresh run."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable
from pathlib import Path

from eventsched.benchmarks.failover.api_faults import api_faults
from eventsched.benchmarks.failover.apiserver_restart import apiserver_restart
from eventsched.benchmarks.failover.disk_full import disk_full
from eventsched.benchmarks.failover.kill9 import kill9
from eventsched.benchmarks.failover.kill_leader import kill_leader
from eventsched.benchmarks.failover.pg_restart import pg_restart
from eventsched.benchmarks.failover.report import Result
from eventsched.benchmarks.failover.run import Run, Settings
from eventsched.benchmarks.failover.smalldisk import small_disk

SCENARIOS = (
    "kill-leader",
    "pg-restart",
    "apiserver-restart",
    "kill-9",
    "disk-full",
    "api-faults",
)


RUNNERS: dict[str, Callable[[Run, Result], None]] = {
    "kill-leader": kill_leader,
    "pg-restart": pg_restart,
    "apiserver-restart": apiserver_restart,
    "kill-9": kill9,
    "disk-full": disk_full,
    "api-faults": api_faults,
}
#: The scenarios whose pods arrive while they run (the others: all before the start).
FED = frozenset({"pg-restart", "disk-full", "api-faults"})


def measure(scenario: str, settings: Settings) -> Result:
    result = Result(scenario, settings.nodes, settings.pods)
    with contextlib.ExitStack() as stack:
        disk = None
        if scenario == "disk-full":
            disk = stack.enter_context(small_disk(settings.server, settings.disk_mib))
        run = Run(stack, settings, upfront=scenario not in FED, disk=disk)
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
