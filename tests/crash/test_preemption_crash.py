"""SIGKILL between a preemption's decision and its evictions; the restart finishes it.

The emulator holds the victim's status PATCH (its DisruptionTarget condition, the
first request of the eviction). When it arrives the `preempted` decision must
already be committed; the process is killed there and the held request dropped,
so the victim is never marked nor deleted. The next process must find the open
decision in the log and evict the victim (an `evicted` with `reconciled`), after
which the preemptor is bound to the node the decision nominated.

The restart's watch is held back meanwhile, as a loaded API server's can lag: the
view still shows the victim after its deletion was answered, and the preemptor
must wait for the watch to show the deletion rather than preempt the victim again.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from eventsched.events import EventStore
from tests.crash.harness import SchedulerProcess, committed, node, node_of, wait_for
from tests.kube.apiserver import ApiServer

pytestmark = pytest.mark.slow


def prioritized(name: str, cpu: str, priority: int, node_name: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": "eventsched",
        "priority": priority,
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}],
    }
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
        "status": {"phase": "Running" if node_name else "Pending"},
    }


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[list[SchedulerProcess]]:
    started: list[SchedulerProcess] = []
    try:
        yield started
    finally:
        for process in started:
            process.ensure_dead()


def test_kill_between_the_decision_and_the_eviction(
    apiserver: ApiServer,
    crash_db: str,
    log_engine: sa.Engine,
    tmp_path: Path,
    processes: list[SchedulerProcess],
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "leaderElection: {leaderElect: false}\nprofiles:\n  - schedulerName: eventsched\n"
    )
    kube = apiserver.kubeconfig(tmp_path / "kubeconfig")
    apiserver.create(node("node-a", cpu="2"))
    apiserver.create(prioritized("victim", "2", 0, "node-a"))
    hold = apiserver.hold_next("PATCH", r"/pods/victim/status$")

    def start(n: int) -> SchedulerProcess:
        process = SchedulerProcess(crash_db, kube, config, tmp_path / f"scheduler-{n}.log")
        processes.append(process.start())
        process.wait_ready()
        return process

    first = start(1)
    apiserver.create(prioritized("critical", "1", 1000))
    (held,) = hold.wait(timeout=30)
    decided = committed(
        log_engine,
        "SELECT attempt, node FROM events WHERE kind = 'preempted' AND name = 'critical'",
    )
    assert len(decided) == 1, "the decision must be durable before the first eviction request"
    attempt, nominated = decided[0]
    assert nominated == "node-a"
    first.kill()
    hold.drop()
    assert apiserver.get("pods", "victim", "default") is not None  # never marked nor deleted
    assert committed(log_engine, "SELECT 1 FROM events WHERE kind = 'evicted'") == []

    apiserver.delay_watches()
    second = start(2)
    wait_for("the victim to be deleted", lambda: apiserver.get("pods", "victim") is None, 20)
    wait_for(
        "the preemptor to wait for its victim's deletion",
        lambda: committed(
            log_engine, "SELECT 1 FROM events WHERE kind = 'requeued' AND name = 'critical'"
        ),
        20,
    )
    apiserver.deliver_watches()
    wait_for("the preemptor to be bound", lambda: node_of(apiserver, "critical") == "node-a", 20)
    assert second.terminate() == 0, second.output()

    with EventStore.connect(crash_db) as store:
        (decision,) = store.read(kinds=["preempted"])  # decided once, never again
        parked, *moved = store.read(kinds=["requeued"])  # then on the victim's deletion
        (evicted,) = store.read(kinds=["evicted"])
    assert decision.attempt == attempt
    assert parked.position > evicted.position
    assert (parked.data["to"], parked.data["event"]) == ("unschedulable", "ScheduleAttemptFailure")
    assert moved[0].data["event"] == "AssignedPodDelete"
    assert (evicted.name, evicted.attempt, evicted.node) == ("victim", attempt, "node-a")
    assert evicted.data["outcome"] == "deleted" and evicted.data["reconciled"] is True
    assert evicted.data["preemptor"]["name"] == "critical"
    patches = [
        r.body
        for r in apiserver.requests
        if r.method == "PATCH" and r.path.endswith("victim/status")
    ]
    assert len(patches) == 2  # the held one, dropped, and the restart's
    conditions = patches[-1]["status"]["conditions"]  # type: ignore[index]
    assert any(
        c["type"] == "DisruptionTarget" and c["reason"] == "PreemptionByScheduler"
        for c in conditions
    )
    assert held.status == 0
    nominations = [
        r.body["status"].get("nominatedNodeName")  # type: ignore[index]
        for r in apiserver.requests
        if r.method == "PATCH" and r.path.endswith("critical/status")
    ]
    assert "node-a" in nominations  # the report the first process did not live to write
    for process in processes:
        assert "Traceback" not in process.output(), process.output()
