"""apiserver-restart: kube-apiserver stopped and started again under one replica."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from datetime import datetime
from pathlib import Path

from eventsched.benchmarks.failover.outage import _outage_figures
from eventsched.benchmarks.failover.replicas import Replica
from eventsched.benchmarks.failover.report import Result
from eventsched.benchmarks.failover.run import Run, _timeout
from eventsched.benchmarks.failover.scrapes import REST, delta
from eventsched.events import EventStore


def apiserver_restart(run: Run, result: Result) -> None:
    replica = run.replica("replica-1")
    run.wait("replica-1 leads", replica.leading, 60)
    run.wait_bound(run.pods // 3, _timeout(run.pods))
    started = run.now()
    stopped = run.cp.restart_apiserver(run.down, kill=run.kill_apiserver) - run.clock
    ready = run.now()
    result.timeline["kube-apiserver exited"] = stopped
    first = replica.proc
    _supervise(run, replica, result)
    how = "SIGKILL" if run.kill_apiserver else "SIGTERM"
    _outage_figures(run, replica, result, f"kube-apiserver restart ({how})", started, ready)
    lost = lease_lost_at(replica.log, run.wall)
    result.timeline["replica-1 logs `leaderelection lost`"] = lost
    if lost is not None:
        result.figures["`reserved` decisions logged after the lease was lost"] = _reserved_after(
            run.url, f"{socket.gethostname()}-{first.pid}", run.wall + lost
        )
    end = run.now()
    codes = sorted({k for s in replica.samples for k in s.values if k.startswith("rest:")})
    for code in codes:
        if not code.startswith("rest:2"):
            result.figures[f"{REST}{{code={code[5:]!r}}} during"] = delta(
                replica.samples, code, started, end
            )


def _supervise(run: Run, replica: Replica, result: Result) -> None:
    """Wait for every pod bound; when the replica exits, start it again (as a kubelet would,
    without the crash-loop back-off) and put its exit in the timeline."""
    deadline = time.monotonic() + _timeout(run.pods)
    while len(run.watch.bound) < run.pods:
        status = replica.proc.poll()
        if status is not None:
            result.timeline[f"replica-1 exited with status {status}; started again"] = run.now()
            replica.respawn()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(run.watch.bound)} of {run.pods} bound")
        time.sleep(0.1)


def lease_lost_at(log: Path, wall: float) -> float | None:
    """When the replica's JSON log first says `leaderelection lost`, on the run's clock."""
    with log.open(errors="replace") as lines:
        for line in lines:
            if '"leaderelection lost"' in line:
                with contextlib.suppress(ValueError, KeyError):
                    stamp = json.loads(line)["timestamp"].replace("Z", "+00:00")
                    return datetime.fromisoformat(stamp).timestamp() - wall
    return None


def _reserved_after(url: str, instance: str, since: float) -> int:
    with EventStore.connect(url) as store:
        return sum(
            e.instance == instance and e.recorded_at.timestamp() > since
            for e in store.read(kinds=["reserved"])
        )
