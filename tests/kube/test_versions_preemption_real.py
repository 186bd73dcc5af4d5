"""Preemption and a failed attempt on a real v1.34.4 / v1.37.2 control plane: what
eventsched writes (deciding as that version) is what kube-scheduler of that version
writes on the same scenario, run on the same API server.

- the preemptor's FailedScheduling: v1.34's says nothing of a successful preemption,
  v1.37's ends with "preemption: found a potential placement for pod on node X,
  preempting N victims";
- the victim's Preempted Event: "Preempted by pod <preemptor UID> on node <node>";
- the conditions written (PodScheduled=False, DisruptionTarget) carry observedGeneration
  (PodObservedGenerationTracking, on in both);
- a pod no preemption helps: "... preemption: 0/1 nodes are available: 1 No preemption
  victims found for incoming pod." with no "." after it. kube-scheduler's own profile has
  DynamicResources, whose PostFilter says "no new claims to deallocate" first at v1.34
  (eventsched has no DynamicResources: its message lacks that part).

No kubelet runs: a thread removes pods being deleted at once and keeps what they were.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from eventsched.cluster.kube import KubeCluster
from eventsched.config.defaults import default_profile
from eventsched.config.featuregates import features_for
from eventsched.events import EventStore
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.kube.realserver import RealApiServer
from tests.kube.test_kube_preemption_e2e import ensure_priority_class, kubelet, prioritized
from tests.kube.test_kube_scheduler import condition_of, events_about, node, node_of
from tests.waiting import wait_for

SCHEDULER_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles:
- schedulerName: eventsched
"""


@pytest.fixture(params=["1.34", "1.37"])
def plane(request: pytest.FixtureRequest, reference_planes: Any) -> RealApiServer:
    server: RealApiServer = reference_planes(str(request.param))
    server.reset()
    return server


@contextmanager
def eventsched(server: RealApiServer, store: EventStore) -> Iterator[None]:
    minor = server.control_plane.binaries.minor
    features = features_for(minor)
    api = server.client()
    cluster = KubeCluster(
        api,
        ["eventsched"],
        observed_generation_tracking=features.pod_observed_generation_tracking,
    )
    scheduler = Scheduler(
        store,
        cluster,
        [default_profile("eventsched", features)],
        in_tree_registry(),
        SchedulerOptions(initial_backoff=0.2, max_backoff=0.4),
    )
    stop = threading.Event()
    assert scheduler.start(stop=stop)
    loop = threading.Thread(target=scheduler.run, kwargs={"stop": stop}, daemon=True)
    loop.start()
    try:
        yield
    finally:
        stop.set()
        loop.join(10)
        scheduler.stop()
        api.close()


@contextmanager
def kube_scheduler(server: RealApiServer, tmp_path: Path) -> Iterator[None]:
    config = tmp_path / "kube-scheduler.yaml"
    config.write_text(SCHEDULER_CONFIG)
    proc = server.control_plane.start_kube_scheduler(config)
    try:
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def failed_notes(server: RealApiServer, name: str) -> list[str]:
    return [e["note"] for e in events_about(server, name) if e["reason"] == "FailedScheduling"]


def play(server: RealApiServer) -> dict[str, Any]:
    """The scenario, with whichever scheduler is running: `stuck` does not fit beside
    `batch` and may evict no one (Insufficient cpu, within what the node has: an
    Unschedulable status in every version); `critical` evicts `batch`. Returns what the
    checks read."""
    ensure_priority_class(server, 1000)
    server.create(node("node-a", cpu="2"))
    server.create(prioritized("batch", "1500m", 0, "node-a"))
    stuck = server.create(prioritized("stuck", "1", 0))
    wait_for("stuck's FailedScheduling", lambda: failed_notes(server, "stuck"), timeout=60)
    scheduled = wait_for(
        "stuck's PodScheduled condition",
        lambda: condition_of(server, "stuck", "PodScheduled"),
        timeout=30,
    )
    with kubelet(server) as removed:
        critical = server.create(prioritized("critical", "1", 1000))
        wait_for("critical bound", lambda: node_of(server, "critical") == "node-a", timeout=60)
    preempted = [e for e in events_about(server, "batch") if e["reason"] == "Preempted"]
    conditions = removed["batch"]["status"].get("conditions") or []
    return {
        "stuck": failed_notes(server, "stuck")[0],
        "stuck generation": stuck["metadata"]["generation"],
        "stuck condition": scheduled,
        "critical": failed_notes(server, "critical")[0],
        "critical uid": critical["metadata"]["uid"],
        "preempted": [e["note"] for e in preempted],
        "target": next(c for c in conditions if c["type"] == "DisruptionTarget"),
    }


def test_eventsched_writes_what_kube_scheduler_writes(
    plane: RealApiServer, store: EventStore, tmp_path: Path
) -> None:
    minor = plane.control_plane.binaries.minor
    if plane.control_plane.binaries.scheduler is None:
        pytest.skip("this build has no kube-scheduler")
    with kube_scheduler(plane, tmp_path):
        theirs = play(plane)
    plane.reset()
    with eventsched(plane, store):
        ours = play(plane)

    placement = (
        " preemption: found a potential placement for pod on node node-a, preempting 1 victims"
    )
    want_critical = "0/1 nodes are available: 1 Insufficient cpu." + (
        placement if minor == "1.37" else ""
    )
    assert theirs["critical"] == ours["critical"] == want_critical
    for seen in (theirs, ours):
        assert seen["preempted"] == [f"Preempted by pod {seen['critical uid']} on node node-a"]
        assert seen["stuck condition"]["observedGeneration"] == seen["stuck generation"] == 1
        assert seen["target"]["observedGeneration"] == 1
        assert (
            seen["target"]["message"]
            == "eventsched: preempting to accommodate a higher priority pod"
        )
    no_victims = (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod."
    )
    assert ours["stuck"] == no_victims
    if minor == "1.34":
        # kube-scheduler's DynamicResources PostFilter runs first and speaks for a pod
        # without claims (dynamicresources.go, v1.34 only).
        assert theirs["stuck"] == no_victims.replace(
            "preemption:", "no new claims to deallocate, preemption:"
        )
    else:
        assert theirs["stuck"] == no_victims
    assert ours["stuck condition"]["message"] == ours["stuck"]
