"""eventsched against an API server: the real client over HTTP to the emulator, a real database.

Each test runs the scheduling loop in a thread, drives the cluster through
the emulator as kubelet, users or other controllers would, and checks what
the API server received (Bindings, Events, status patches) and what the log
holds.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kubernetes import client

from eventsched.cluster.kube import REQUIRED_ACCESS, KubeCluster
from eventsched.config import default_profile
from eventsched.events import EventStore
from eventsched.model import Pod
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from eventsched.scheduler.batch import Batch
from tests.kube.apiserver import ApiServer

BINDING = r"/pods/[^/]+/binding$"


def node(name: str, cpu: str = "4") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def pod(
    name: str, cpu: str = "500m", scheduler: str = "eventsched", node_name: str = ""
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}],
    }
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
        "status": {"phase": "Pending"},
    }


def node_of(apiserver: ApiServer, name: str) -> str:
    found = apiserver.get("pods", name, "default")
    return ((found or {}).get("spec") or {}).get("nodeName") or ""


def bindings(apiserver: ApiServer, name: str) -> list[Any]:
    return [
        r
        for r in apiserver.requests
        if r.method == "POST" and r.path.endswith(f"/pods/{name}/binding")
    ]


def events_about(apiserver: ApiServer, name: str) -> list[dict[str, Any]]:
    return [e for e in apiserver.list("events") if e["regarding"]["name"] == name]


@contextmanager
def running(store: EventStore, api_client: client.ApiClient, **options: Any) -> Iterator[Scheduler]:
    cluster = KubeCluster(api_client, ["eventsched"])
    scheduler = Scheduler(
        store,
        cluster,
        [default_profile()],
        in_tree_registry(),
        SchedulerOptions(**{"initial_backoff": 0.2, "max_backoff": 0.4, **options}),
    )
    stop = threading.Event()
    assert scheduler.start(stop=stop)
    loop = threading.Thread(target=scheduler.run, kwargs={"stop": stop}, daemon=True)
    loop.start()
    try:
        yield scheduler
    finally:
        stop.set()
        loop.join(10)
        scheduler.stop()


def test_pods_listed_at_start_and_created_later_are_bound_with_kube_schedulers_event(
    apiserver: ApiServer, api_client: client.ApiClient, store: EventStore
) -> None:
    apiserver.create(node("node-a"))
    apiserver.create(pod("early"))
    apiserver.create(pod("theirs", scheduler="default-scheduler"))
    with running(store, api_client):
        apiserver.wait_for(lambda: node_of(apiserver, "early") == "node-a")
        created = apiserver.create(pod("late"))
        apiserver.wait_for(lambda: node_of(apiserver, "late") == "node-a")
        apiserver.wait_for(lambda: len(events_about(apiserver, "late")) == 1)

    assert node_of(apiserver, "theirs") == ""  # another scheduler's pod is left alone
    assert [e.name for e in store.read(kinds=["pod_observed"])].count("theirs") == 0

    (binding,) = bindings(apiserver, "late")
    assert binding.body == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "late", "namespace": "default", "uid": created["metadata"]["uid"]},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "node-a"},
    }
    (event,) = events_about(apiserver, "late")
    assert event["type"] == "Normal"
    assert event["reason"] == "Scheduled"
    assert event["action"] == "Binding"
    assert event["note"] == "Successfully assigned default/late to node-a"
    assert event["reportingController"] == "eventsched"
    assert event["reportingInstance"].startswith("eventsched-")
    assert event["regarding"]["kind"] == "Pod"
    assert event["regarding"]["uid"] == created["metadata"]["uid"]
    assert event["metadata"]["name"].startswith("late.")

    kinds = [e.kind for e in store.read_pod("default", "late")]
    assert kinds.index("selected") < kinds.index("reserved") < kinds.index("bound")
    # Nothing outside the RBAC rules deploy/ grants.
    granted = {(a.api_group, a.resource, v) for a in REQUIRED_ACCESS for v in a.verbs}
    assert apiserver.access_used() <= granted


def test_unschedulable_pod_gets_failed_scheduling_and_the_pod_scheduled_condition(
    apiserver: ApiServer, api_client: client.ApiClient, store: EventStore
) -> None:
    apiserver.create(node("node-a", cpu="1"))
    big = pod("big", cpu="2")
    big["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    apiserver.create(big)
    message = "0/1 nodes are available: 1 Insufficient cpu."

    def condition() -> dict[str, Any] | None:
        found = apiserver.get("pods", "big", "default") or {}
        return next(
            (
                c
                for c in (found.get("status") or {}).get("conditions") or []
                if c["type"] == "PodScheduled"
            ),
            None,
        )

    with running(store, api_client):
        cond = apiserver.wait_for(condition)
        apiserver.wait_for(lambda: events_about(apiserver, "big"))

    assert cond["status"] == "False"
    assert cond["reason"] == "Unschedulable"
    assert cond["message"] == message
    assert cond["lastTransitionTime"]
    conditions = apiserver.get("pods", "big", "default")["status"]["conditions"]
    assert {"type": "Ready", "status": "False"} in conditions  # merged, not replaced
    (patch,) = [r for r in apiserver.requests if r.path.endswith("/pods/big/status")]
    assert patch.method == "PATCH"
    assert patch.content_type == "application/strategic-merge-patch+json"
    event = events_about(apiserver, "big")[0]
    assert (event["type"], event["reason"], event["action"], event["note"]) == (
        "Warning",
        "FailedScheduling",
        "Scheduling",
        message,
    )
    (failed,) = store.read(kinds=["unschedulable"])
    assert failed.data["message"] == message


def test_binding_conflict_and_server_error_are_logged_and_retried(
    apiserver: ApiServer, api_client: client.ApiClient, store: EventStore
) -> None:
    apiserver.create(node("node-a"))
    apiserver.fail_next("POST", BINDING, 409, times=1, message="the object has been modified")
    apiserver.fail_next("POST", BINDING, 500, times=1, message="etcdserver: request timed out")
    apiserver.create(pod("p"))
    scheduled = "Successfully assigned default/p to node-a"
    with running(store, api_client):
        apiserver.wait_for(lambda: node_of(apiserver, "p") == "node-a", timeout=10)
        apiserver.wait_for(lambda: scheduled in [e["note"] for e in events_about(apiserver, "p")])

    assert len(bindings(apiserver, "p")) == 3
    failures = list(store.read(kinds=["bind_failed"]))
    assert [(f.data["code"], f.data["reason"]) for f in failures] == [
        (409, "the object has been modified"),
        (500, "etcdserver: request timed out"),
    ]
    kinds = [e.kind for e in store.read_pod("default", "p")]
    assert kinds.count("unreserved") == 2 and kinds.count("bound") == 1
    notes = sorted(e["note"] for e in events_about(apiserver, "p"))
    assert notes == [
        "Binding rejected: etcdserver: request timed out",
        "Binding rejected: the object has been modified",
        scheduled,
    ]


def test_pod_bound_by_someone_else_meanwhile_is_not_requeued(
    apiserver: ApiServer, api_client: client.ApiClient, store: EventStore
) -> None:
    """The 409 the real server gives when another binder won: the informer shows it assigned."""
    apiserver.create(node("node-a"))
    apiserver.create(node("node-b"))
    created = apiserver.create(pod("p", scheduler="nobody"))  # nobody schedules it yet
    with running(store, api_client, initial_backoff=5, max_backoff=5) as scheduler:
        # Now make it ours and, at the same time, have another binder win the race.
        apiserver.fail_next(
            "POST", BINDING, 409, times=1, message='pod p is already assigned to node "node-b"'
        )
        created["spec"]["schedulerName"] = "eventsched"
        apiserver.update(created)
        apiserver.wait_for(lambda: bindings(apiserver, "p"))
        apiserver.patch("pods", "p", {"spec": {"nodeName": "node-b"}}, "default")
        apiserver.wait_for(lambda: list(store.read(kinds=["bind_failed"])))
        apiserver.wait_for(lambda: scheduler.cache.node_of(created["metadata"]["uid"]) == "node-b")
    assert len(bindings(apiserver, "p")) == 1
    assert node_of(apiserver, "p") == "node-b"
    (failed,) = store.read(kinds=["bind_failed"])
    assert failed.data["code"] == 409


def test_watch_expiry_relists_and_keeps_scheduling(
    apiserver: ApiServer, api_client: client.ApiClient, store: EventStore
) -> None:
    apiserver.create(node("node-a", cpu="1"))
    with running(store, api_client) as scheduler:
        lists_before = sum(
            1 for r in apiserver.requests if r.verb == "list" and r.resource == "pods"
        )
        apiserver.expire_watches()
        apiserver.create(node("node-b", cpu="8"))
        apiserver.create(pod("after", cpu="4"))
        apiserver.wait_for(lambda: node_of(apiserver, "after") == "node-b", timeout=10)
        assert sorted(scheduler.cache.node_names()) == ["node-a", "node-b"]
    lists_after = sum(1 for r in apiserver.requests if r.verb == "list" and r.resource == "pods")
    assert lists_after > lists_before


def test_reconcile_on_start_closes_reservations_a_crash_left_open(
    apiserver: ApiServer, api_client: client.ApiClient, store: EventStore
) -> None:
    apiserver.create(node("node-a"))
    bound = apiserver.create(pod("was-bound", node_name="node-a"))
    pending = apiserver.create(pod("never-bound"))
    crashed = Batch("crashed-replica")
    for obj in (bound, pending):
        p = Pod.from_manifest(obj)
        crashed.add(
            "reserved",
            {"plugins": []},
            pod=p,
            scheduler="eventsched",
            attempt=f"a-{p.name}",
            node="node-a",
        )
    store.append(crashed.records)

    with running(store, api_client):
        apiserver.wait_for(lambda: node_of(apiserver, "never-bound") == "node-a")

    closed = {
        e.name: e for e in store.read(kinds=["bound", "unreserved"]) if e.data.get("reconciled")
    }
    assert closed["was-bound"].kind == "bound" and closed["was-bound"].attempt == "a-was-bound"
    assert closed["never-bound"].kind == "unreserved"
    assert bindings(apiserver, "was-bound") == []  # never bound twice
    assert len(bindings(apiserver, "never-bound")) == 1


def test_pod_bound_while_the_scheduler_was_down_records_its_first_placement(
    apiserver: ApiServer, api_client: client.ApiClient, store: EventStore
) -> None:
    from eventsched.events import rebuild

    apiserver.create(node("node-a"))
    apiserver.create(pod("placed-by-hand", node_name="node-a"))
    with running(store, api_client):
        pass
    placement = rebuild(store).first_placements["default/placed-by-hand"]
    assert placement.node == "node-a"
