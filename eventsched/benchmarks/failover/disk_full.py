"""disk-full: the filesystem under the database fills while one replica binds pods
created as it runs, stays full a while, and is freed again."""

from __future__ import annotations

import time

from eventsched.benchmarks.failover.outage import _outage_figures
from eventsched.benchmarks.failover.postgres import line_time, postgres_log
from eventsched.benchmarks.failover.report import Result
from eventsched.benchmarks.failover.run import Run, _timeout
from eventsched.benchmarks.failover.scrapes import (
    APPEND_FAILURES,
    UNREACHABLE,
    changes,
    delta,
    first_at,
)

#: How long the disk stays full when --down is not given.
FULL_SECONDS = 15.0
NO_SPACE = "No space left on device"


def disk_full(run: Run, result: Result) -> None:
    disk = run.disk
    if disk is None:
        raise ValueError("disk-full needs the run's database on a small disk")
    replica = run.fed_replica(run.pods // 3)
    started = run.now()
    taken = disk.fill()
    filled = run.now()
    time.sleep(run.down or FULL_SECONDS)
    freed_at = run.now()
    disk.free()
    run.wait_bound(run.pods, _timeout(run.pods))
    result.timeline["disk filled (filler written)"] = filled
    result.timeline["disk freed (filler removed)"] = freed_at
    _outage_figures(run, replica, result, "disk full", started, freed_at)
    unreachable = changes(replica.samples, UNREACHABLE)
    went = first_at(unreachable, 1.0, started)
    result.timeline[f"{UNREACHABLE} 1"] = went
    result.timeline[f"{UNREACHABLE} 0 again"] = first_at(unreachable, 0.0, went or started)
    result.figures.update(
        {
            "filler size (MiB)": round(taken / 2**20, 1),
            f"{APPEND_FAILURES} during": delta(
                replica.samples, APPEND_FAILURES, started, run.now()
            ),
            f"PostgreSQL log lines '{NO_SPACE}' during": _no_space_lines(
                run.wall + started, run.wall + run.now()
            ),
            "replica-1 kept running": replica.proc.poll() is None,
        }
    )


def _no_space_lines(since: float, until: float) -> int:
    """Lines of PostgreSQL's log saying so, stamped between two Unix times."""
    count = 0
    with postgres_log().open(errors="replace") as log:
        for line in log:
            at = line_time(line)
            if at is not None and since <= at <= until and NO_SPACE in line:
                count += 1
    return count
