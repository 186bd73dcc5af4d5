"""What the restart scenarios measure around an outage of a server the replica uses."""

from __future__ import annotations

from collections import Counter

from eventsched.benchmarks.failover.figures import longest_gap
from eventsched.benchmarks.failover.replicas import Replica
from eventsched.benchmarks.failover.report import Result
from eventsched.benchmarks.failover.run import Run
from eventsched.benchmarks.failover.scrapes import MASTER, changes, first_at
from eventsched.events import EventStore


def _outage_figures(
    run: Run, replica: Replica, result: Result, what: str, started: float, done: float
) -> None:
    binds = run.binds()
    readyz = changes(replica.samples, "readyz")
    not_ready = next((t for t, v in readyz if v != 200 and t >= started), None)
    after = [t for t in binds.values() if t >= done]
    result.figures["pods bound before / during / after"] = (
        f"{sum(t < started for t in binds.values())} / "
        f"{sum(started <= t < done for t in binds.values())} / {len(after)}"
    )
    gap_start, gap = longest_gap(binds.values())
    result.timeline.update(
        {
            "replica-1 started": 0.0,
            "replica-1 leads": first_at(changes(replica.samples, MASTER), 1.0, 0.0),
            f"{what} begins": started,
            f"{what} done": done,
            "/readyz not 200": not_ready,
            "/readyz 200 again": first_at(readyz, 200.0, not_ready or started),
            "last bind before": max((t for t in binds.values() if t < started), default=None),
            "first bind after": min(after, default=None),
            "last pod bound": max(binds.values()),
        }
    )
    result.figures["decisions logged during"] = logged_between(
        run.url, run.wall + started, run.wall + done
    )
    result.figures.update(
        {
            "/readyz answers seen": [(round(t, 2), int(v)) for t, v in readyz],
            "recovery: done -> first bind after (s)": min(after) - done if after else None,
            "longest pause between binds (s)": gap,
            "  it began at": gap_start,
        }
    )


def logged_between(url: str, start: float, end: float) -> dict[str, int]:
    """Decisions by kind whose batch was recorded between two Unix times."""
    kinds = ["reserved", "bound", "bind_failed", "unreserved", "unschedulable"]
    with EventStore.connect(url) as store:
        found = Counter(
            e.kind for e in store.read(kinds=kinds) if start <= e.recorded_at.timestamp() <= end
        )
    return {kind: found[kind] for kind in kinds}
