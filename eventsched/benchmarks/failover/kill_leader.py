"""kill-leader: two replicas; the leader gets SIGKILL with pods still pending."""

from __future__ import annotations

from collections import Counter

from eventsched.benchmarks.failover.figures import failover
from eventsched.benchmarks.failover.report import Result
from eventsched.benchmarks.failover.run import Run, _timeout
from eventsched.benchmarks.failover.scrapes import MASTER, changes, first_at
from eventsched.events import EventStore


def kill_leader(run: Run, result: Result) -> None:
    """Both replicas start together; the one that takes the lease is killed."""
    replicas = [run.replica("replica-1"), run.replica("replica-2")]
    run.wait("one replica leads", lambda: any(r.leading() for r in replicas), 60)
    leader, standby = sorted(replicas, key=lambda r: not r.leading())
    run.wait(f"{standby.name} stands by", lambda: standby.latest(MASTER) == 0.0, 60)
    run.wait_bound(max(5, run.pods // 10), _timeout(run.pods))
    master_before = standby.latest(MASTER)
    killed = leader.kill()
    run.wait(f"{standby.name} leads", standby.leading, 60)
    lease = first_at(changes(standby.samples, MASTER), 1.0, killed)
    run.wait_bound(run.pods, _timeout(run.pods))
    # The watch sees a Binding before the new leader's `bound` for it is appended (it
    # joins the next group commit): wait for every pod's, or its last binds would be
    # counted as the old leader's.
    run.wait("every bind in the log", lambda: logged_bound(run.url) >= run.pods, 30)
    binds = run.binds()
    own, closed = new_leaders_own_binds(run.url, standby.instance)
    figures = failover(killed, binds, own)
    result.timeline.update(
        {
            "both replicas started": 0.0,
            f"{leader.name} leads": first_at(changes(leader.samples, MASTER), 1.0, 0.0),
            "last bind by the old leader (or reconciled from it)": figures.last_before,
            f"kill -9 {leader.name}": killed,
            f"{standby.name} {MASTER} 0 -> 1": lease,
            f"first bind by {standby.name}": figures.first_after,
            "last pod bound": max(binds.values()),
        }
    )
    result.figures.update(
        {
            "bound before the kill": sum(t <= killed for t in binds.values()),
            "failover, kill -> first bind after (s)": figures.from_kill,
            "failover, last bind before -> first bind after (s)": figures.from_last_bind,
            "kill -> lease taken (s)": None if lease is None else lease - killed,
            "new leader's master status before / after": (
                f"{master_before} / {standby.latest(MASTER)}"
            ),
            "new leader's POSTs answered 409": standby.latest("rest:409") or 0.0,
            "open reservations the new leader closed (bound / unreserved)": (
                f"{closed['bound']} / {closed['unreserved']}"
            ),
        }
    )


def logged_bound(url: str) -> int:
    """Pods with a `bound` event in the log."""
    with EventStore.connect(url) as store:
        return len({e.name for e in store.read(kinds=["bound"])})


def new_leaders_own_binds(url: str, instance: str) -> tuple[set[str], Counter[str]]:
    """Pods whose `bound` event this instance logged for a Binding it made, and how many
    reservations left open by its predecessor it closed (`bound` / `unreserved` marked
    `reconciled`: found bound in the API, or not)."""
    own: set[str] = set()
    closed: Counter[str] = Counter()
    with EventStore.connect(url) as store:
        for e in store.read(kinds=["bound", "unreserved"]):
            if e.instance != instance:
                continue
            if e.data.get("reconciled"):
                closed[e.kind] += 1
            elif e.kind == "bound":
                own.add(str(e.name))
    return own, closed
