"""kill-9: the single scheduler gets SIGKILL at random moments and is started again on the
same log each time (as a kubelet would restart it, without the crash-loop back-off)."""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from eventsched.benchmarks.failover.figures import longest_gap
from eventsched.benchmarks.failover.kill_leader import logged_bound, new_leaders_own_binds
from eventsched.benchmarks.failover.replicas import Replica
from eventsched.benchmarks.failover.report import Result
from eventsched.benchmarks.failover.run import Run, _timeout

#: A kill waits for its bound count, or, when the count was passed before the process
#: started, for up to this many seconds of the process's life (its start, log fold,
#: leader election, informer sync).
STARTUP_WINDOW = 3.0


@dataclass(frozen=True, slots=True)
class Moment:
    """When a kill comes: once `bound` pods are bound and the process has lived `after` s."""

    bound: int
    after: float


def moments(kills: int, pods: int, seed: int) -> list[Moment]:
    """`kills` moments over the run, seeded: bound counts drawn from 1..pods-1 (sorted)
    and an age each, from 0 to STARTUP_WINDOW seconds."""
    rng = random.Random(seed)
    counts = sorted(rng.randrange(1, max(2, pods)) for _ in range(kills))
    return [Moment(n, rng.uniform(0.0, STARTUP_WINDOW)) for n in counts]


def _due(run: Run, replica: Replica, moment: Moment, started: float) -> Callable[[], bool]:
    """Whether the kill at `moment` is due, for the process started at `started`; raises
    if that process exited by itself."""

    def due() -> bool:
        status = replica.proc.poll()
        if status is not None:
            raise RuntimeError(f"{replica.name} exited by itself with status {status}")
        return len(run.watch.bound) >= moment.bound and time.monotonic() - started >= moment.after

    return due


def kill9(run: Run, result: Result) -> None:
    replica = run.replica("replica-1")
    deadline = time.monotonic() + _timeout(run.pods) + 30 * run.settings.kills
    started = time.monotonic()
    kills: list[float] = []
    instances = [replica.instance]
    for moment in moments(run.settings.kills, run.pods, run.settings.seed):
        run.wait(
            f"{moment.bound} pods bound",
            _due(run, replica, moment, started),
            max(1.0, deadline - time.monotonic()),
        )
        kills.append(replica.kill())
        result.timeline[f"kill -9 #{len(kills)} ({len(run.watch.bound)} bound)"] = kills[-1]
        replica.respawn()
        started = time.monotonic()
        instances.append(replica.instance)
    run.wait_bound(run.pods, max(1.0, deadline - time.monotonic()))
    # the last process's `bound` events join its next group commit: wait for them, or
    # its last binds would count as no process's own
    run.wait("every bind in the log", lambda: logged_bound(run.url) >= run.pods, 30)
    binds = run.binds()
    gap_start, gap = longest_gap(binds.values())
    result.timeline["last pod bound"] = max(binds.values())
    # which process bound each pod itself, and the reservations a killed process left
    # open that the next settled from the API (read once each has folded the log)
    bound_by: dict[str, int] = {}
    closed: Counter[str] = Counter()
    for index, instance in enumerate(instances):
        own, settled = new_leaders_own_binds(run.url, instance)
        bound_by.update(dict.fromkeys(own, index))
        closed += settled
    waits = sorted(_first_own_bind(binds, bound_by, i, k) - k for i, k in enumerate(kills))
    result.figures.update(
        {
            "kills": len(kills),
            "kill -> first bind by a later process, median / max (s)": (
                f"{waits[len(waits) // 2]:.2f} / {waits[-1]:.2f}"
            ),
            "longest pause between binds (s)": gap,
            "  it began at": gap_start,
            "open reservations settled after a kill (bound / unreserved)": (
                f"{closed['bound']} / {closed['unreserved']}"
            ),
        }
    )


def _first_own_bind(
    binds: dict[str, float], bound_by: dict[str, int], killed: int, at: float
) -> float:
    """When a process started after kill number `killed` (0-based) first bound a pod of
    its own choosing (a Binding in flight at the kill is the killed process's)."""
    return min(
        (t for pod, t in binds.items() if bound_by.get(pod, -1) > killed and t > at),
        default=float("inf"),
    )
