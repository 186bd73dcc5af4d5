"""pg-restart: the local PostgreSQL restarted (or stopped, --down seconds, started) while
one replica binds pods created as it runs."""

from __future__ import annotations

from sqlalchemy.engine import make_url

from eventsched.benchmarks.failover.outage import _outage_figures
from eventsched.benchmarks.failover.postgres import (
    LOCAL,
    postgres_down,
    postgres_log,
    restart_postgres,
)
from eventsched.benchmarks.failover.report import Result
from eventsched.benchmarks.failover.run import Run, _timeout
from eventsched.benchmarks.failover.scrapes import (
    APPEND_FAILURES,
    UNREACHABLE,
    changes,
    delta,
    first_at,
)


def pg_restart(run: Run, result: Result) -> None:
    """Restarts the machine's own PostgreSQL cluster: --server must be on it."""
    if make_url(run.url).host not in LOCAL:
        raise ValueError("pg-restart restarts the local PostgreSQL; --server is elsewhere")
    replica = run.fed_replica(run.pods // 3)
    started = run.now()
    restart_postgres(run.down)
    done = run.now()
    run.wait_bound(run.pods, _timeout(run.pods))
    with postgres_log().open(errors="replace") as log:
        down, up = postgres_down(log, run.wall + started)
    result.timeline["PostgreSQL log: shutdown request"] = None if down is None else down - run.wall
    result.timeline["PostgreSQL log: ready to accept connections"] = (
        None if up is None else up - run.wall
    )
    _outage_figures(run, replica, result, "pg_ctlcluster", started, done)
    result.figures[f"{APPEND_FAILURES} during"] = delta(
        replica.samples, APPEND_FAILURES, started, run.now()
    )
    unreachable = changes(replica.samples, UNREACHABLE)
    went = first_at(unreachable, 1.0, started)
    result.timeline[f"{UNREACHABLE} 1"] = went
    result.timeline[f"{UNREACHABLE} 0 again"] = first_at(unreachable, 0.0, went or started)
