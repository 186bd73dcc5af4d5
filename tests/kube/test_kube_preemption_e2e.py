"""Preemption end to end through the Kubernetes adapter: the scheduling loop against an
API server (the emulator, and a real kube-apiserver v1.28 when its binaries are present).

A node full of a low-priority pod, then a high-priority pod that needs its room. What
kube-scheduler v1.28 does, the server must show: the victim marked DisruptionTarget
(PreemptionByScheduler) and deleted, a Normal `Preempted` Event on it related to the
preemptor, the preemptor's FailedScheduling with its nominatedNodeName set, and once
the victim is gone the preemptor bound to that node. No kubelet runs, so a thread
plays one: a pod being deleted is removed at once (grace period 0) and what it looked
like is kept.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kubernetes import client

from eventsched.events import EventStore
from eventsched.model.preemptionwrites import preempted_event_message
from tests.kube.realserver import KubeServer, RealApiError
from tests.kube.test_kube_scheduler import events_about, node, node_of, running

HIGH = "eventsched-test-high"


def prioritized(name: str, cpu: str, priority: int, node_name: str = "") -> dict[str, Any]:
    """A pod with `spec.priority`; non-zero ones name a PriorityClass of that value, as the
    real server's Priority admission requires (the emulator takes spec.priority as given)."""
    spec: dict[str, Any] = {
        "schedulerName": "eventsched",
        "priority": priority,
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}],
    }
    if priority:
        spec["priorityClassName"] = HIGH
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
        "status": {"phase": "Running" if node_name else "Pending"},
    }


def ensure_priority_class(server: KubeServer, value: int) -> None:
    if server.flavor != "real":
        return
    body = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": HIGH},
        "value": value,
    }
    try:
        server.call("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", body)  # type: ignore[attr-defined]
    except RealApiError as exc:
        if exc.status != 409:
            raise


@contextmanager
def kubelet(server: KubeServer) -> Iterator[dict[str, dict[str, Any]]]:
    """Remove pods being deleted at once; yields each one as it was when removed."""
    removed: dict[str, dict[str, Any]] = {}
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(0.05):
            for p in server.list("pods", "default"):
                if p["metadata"].get("deletionTimestamp"):
                    removed[p["metadata"]["name"]] = p
                    server.delete("pods", p["metadata"]["name"], "default")

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield removed
    finally:
        stop.set()
        thread.join(5)


def test_a_high_priority_pod_preempts_through_the_api(
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore
) -> None:
    ensure_priority_class(kube_server, 1000)
    kube_server.create(node("node-a", cpu="2"))
    kube_server.create(prioritized("batch", "1500m", 0, "node-a"))
    with kubelet(kube_server) as removed, running(store, api_client):
        kube_server.create(prioritized("critical", "1", 1000))
        kube_server.wait_for(lambda: node_of(kube_server, "critical") == "node-a", timeout=30)

    assert kube_server.get("pods", "batch", "default") is None
    if kube_server.flavor == "real":  # the emulator deletes at once: no Terminating pod to see
        conditions = removed["batch"]["status"].get("conditions") or []
        (target,) = [c for c in conditions if c["type"] == "DisruptionTarget"]
        assert (target["status"], target["reason"]) == ("True", "PreemptionByScheduler")
        assert target["message"] == "eventsched: preempting to accommodate a higher priority pod"

    (preempted,) = [e for e in events_about(kube_server, "batch") if e["reason"] == "Preempted"]
    assert preempted["type"] == "Normal" and preempted["action"] == "Preempting"
    assert preempted["note"] == preempted_event_message("node-a")
    assert preempted["related"]["name"] == "critical"

    failed = [e for e in events_about(kube_server, "critical") if e["reason"] == "FailedScheduling"]
    assert failed and failed[0]["note"] == "0/1 nodes are available: 1 Insufficient cpu."
    bound = kube_server.get("pods", "critical", "default")
    assert bound["status"].get("nominatedNodeName") == "node-a"

    (decision,) = store.read(kinds=["preempted"])
    assert [v["name"] for v in decision.data["victims"]] == ["batch"]
    (evicted,) = store.read(kinds=["evicted"])
    assert evicted.name == "batch" and evicted.data["outcome"] == "deleted"
    assert decision.position < evicted.position
