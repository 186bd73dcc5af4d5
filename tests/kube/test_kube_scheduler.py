"""eventsched against an API server: the real client, a real database.

Each test runs the scheduling loop in a thread, drives the cluster through
the server as kubelet, users or other controllers would, and checks what
the API server holds (bound pods, Events, the PodScheduled condition) and
what the log holds. Tests on `kube_server` run against the emulator and,
when its binaries are present (EVENTSCHED_KUBE_BIN), a real kube-apiserver;
on the emulator they also check the requests it received. Tests on
`apiserver` need what only the emulator can do (injected failures, watch
expiry).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from kubernetes import client

from eventsched.cluster.kube import REQUIRED_ACCESS, KubeCluster
from eventsched.config import default_profile
from eventsched.events import EventStore
from eventsched.framework import CycleState, Profile, Registry, Status
from eventsched.model import Pod
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from eventsched.scheduler.batch import Batch
from tests.kube.apiserver import ApiServer
from tests.kube.realserver import EmulatedApiServer, KubeServer
from tests.scheduler.helpers import profile_with

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


def node_of(server: KubeServer, name: str) -> str:
    found = server.get("pods", name, "default")
    return ((found or {}).get("spec") or {}).get("nodeName") or ""


def bindings(apiserver: ApiServer, name: str) -> list[Any]:
    """The Binding requests for pod `name` the emulator received (emulator only)."""
    return [
        r
        for r in apiserver.requests
        if r.method == "POST" and r.path.endswith(f"/pods/{name}/binding")
    ]


def events_about(server: KubeServer, name: str) -> list[dict[str, Any]]:
    return [e for e in server.list("events") if e["regarding"]["name"] == name]


def condition_of(server: KubeServer, name: str, kind: str) -> dict[str, Any] | None:
    found = server.get("pods", name, "default") or {}
    conditions = (found.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == kind), None)


class Meddle:
    """A PreBind plugin that lets the test act on the API just before the pod's Binding is
    posted (as a rival binder, a user deleting the pod...), once per pod name."""

    name = "Meddle"

    def __init__(self, actions: dict[str, Callable[[Pod], None]]) -> None:
        self.actions = actions

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        action = self.actions.pop(pod.name, None)
        if action is not None:
            action(pod)
        return None


def meddling(actions: dict[str, Callable[[Pod], None]]) -> tuple[Profile, Registry]:
    registry = in_tree_registry()
    registry.register("Meddle", lambda args, handle, features: Meddle(actions))
    return profile_with({"preBind": ("Meddle",)}), registry


@contextmanager
def running(
    store: EventStore,
    api_client: client.ApiClient,
    profile: Profile | None = None,
    registry: Registry | None = None,
    **options: Any,
) -> Iterator[Scheduler]:
    cluster = KubeCluster(api_client, ["eventsched"])
    scheduler = Scheduler(
        store,
        cluster,
        [profile or default_profile()],
        registry or in_tree_registry(),
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
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore
) -> None:
    kube_server.create(node("node-a"))
    kube_server.create(pod("early"))
    kube_server.create(pod("theirs", scheduler="default-scheduler"))
    with running(store, api_client):
        kube_server.wait_for(lambda: node_of(kube_server, "early") == "node-a")
        created = kube_server.create(pod("late"))
        kube_server.wait_for(lambda: node_of(kube_server, "late") == "node-a")
        kube_server.wait_for(lambda: len(events_about(kube_server, "late")) == 1)

    assert node_of(kube_server, "theirs") == ""  # another scheduler's pod is left alone
    assert [e.name for e in store.read(kinds=["pod_observed"])].count("theirs") == 0
    bound = kube_server.get("pods", "late", "default")
    assert bound["metadata"]["uid"] == created["metadata"]["uid"]
    scheduled = condition_of(kube_server, "late", "PodScheduled")
    assert scheduled is not None and scheduled["status"] == "True"  # the Binding's doing

    (event,) = events_about(kube_server, "late")
    assert event["type"] == "Normal"
    assert event["reason"] == "Scheduled"
    assert event["action"] == "Binding"
    assert event["note"] == "Successfully assigned default/late to node-a"
    assert event["reportingController"] == "eventsched"
    assert event["reportingInstance"].startswith("eventsched-")
    assert event["regarding"]["kind"] == "Pod"
    assert event["regarding"]["uid"] == created["metadata"]["uid"]
    assert event["metadata"]["name"].startswith("late.")
    assert event["eventTime"]

    kinds = [e.kind for e in store.read_pod("default", "late")]
    assert kinds.index("selected") < kinds.index("reserved") < kinds.index("bound")
    assert not list(store.read(kinds=["bind_failed"]))

    if isinstance(kube_server, EmulatedApiServer):
        (binding,) = bindings(kube_server, "late")
        assert binding.body == {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": "late", "namespace": "default", "uid": created["metadata"]["uid"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "node-a"},
        }
        # Nothing outside the RBAC rules deploy/ grants (on a real server: test_rbac_real.py).
        granted = {(a.api_group, a.resource, v) for a in REQUIRED_ACCESS for v in a.verbs}
        assert kube_server.access_used() <= granted


def test_a_pod_replaced_under_its_name_is_not_bound_by_the_decision_for_the_old_one(
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore
) -> None:
    """The Binding names the pod's uid: a pod deleted and created again under the same name
    between decision and Binding makes the server refuse it (409, precondition failed)."""
    kube_server.create(node("node-a"))
    first = kube_server.create(pod("p"))
    replaced: list[dict[str, Any]] = []

    def replace(_: Pod) -> None:
        kube_server.delete("pods", "p", "default")
        replaced.append(kube_server.create(pod("p")))

    profile, registry = meddling({"p": replace})
    with running(store, api_client, profile, registry):
        kube_server.wait_for(lambda: replaced and node_of(kube_server, "p") == "node-a")
        second = replaced[0]
        kube_server.wait_for(
            lambda: any(e.uid == second["metadata"]["uid"] for e in store.read(kinds=["bound"]))
        )

    assert second["metadata"]["uid"] != first["metadata"]["uid"]
    (failed,) = store.read(kinds=["bind_failed"])
    assert failed.uid == first["metadata"]["uid"]
    assert failed.data["code"] == 409
    assert "Precondition failed" in failed.data["reason"], failed.data
    assert [e.uid for e in store.read(kinds=["bound"])] == [second["metadata"]["uid"]]
    if isinstance(kube_server, EmulatedApiServer):
        assert [r.status for r in bindings(kube_server, "p")] == [409, 201]


def test_unschedulable_pod_gets_failed_scheduling_and_the_pod_scheduled_condition(
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore
) -> None:
    kube_server.create(node("node-a", cpu="1"))
    big = pod("big", cpu="2")
    big["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    kube_server.create(big)
    message = (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.."
    )

    with running(store, api_client):
        cond = kube_server.wait_for(lambda: condition_of(kube_server, "big", "PodScheduled"))
        kube_server.wait_for(lambda: events_about(kube_server, "big"))

    assert cond["status"] == "False"
    assert cond["reason"] == "Unschedulable"
    assert cond["message"] == message
    assert cond["lastTransitionTime"]
    ready = condition_of(kube_server, "big", "Ready")  # merged, not replaced
    assert ready is not None and ready["status"] == "False"
    assert node_of(kube_server, "big") == ""
    event = events_about(kube_server, "big")[0]
    assert (event["type"], event["reason"], event["action"], event["note"]) == (
        "Warning",
        "FailedScheduling",
        "Scheduling",
        message,
    )
    assert event["reportingController"] == "eventsched"
    assert event["reportingInstance"].startswith("eventsched-")
    assert event["regarding"]["kind"] == "Pod"
    assert event["regarding"]["name"] == "big"
    assert event["eventTime"]
    (failed,) = store.read(kinds=["unschedulable"])
    assert failed.data["message"] == message
    if isinstance(kube_server, EmulatedApiServer):
        (patch,) = [r for r in kube_server.requests if r.path.endswith("/pods/big/status")]
        assert patch.method == "PATCH"
        assert patch.content_type == "application/strategic-merge-patch+json"


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
        scheduled,
        'running Bind plugin "DefaultBinder": etcdserver: request timed out',
        'running Bind plugin "DefaultBinder": the object has been modified',
    ]


def test_pod_bound_by_someone_else_meanwhile_is_not_requeued(
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore
) -> None:
    """Another binder wins the race: our Binding gets the server's 409 "already assigned",
    and the informer shows the pod assigned, so it is not scheduled again."""
    kube_server.create(node("node-a"))
    kube_server.create(node("node-b", cpu="1"))  # the scheduler prefers node-a
    created = kube_server.create(pod("p"))
    rival: list[tuple[int, Any]] = []
    profile, registry = meddling(
        {"p": lambda p: rival.append(kube_server.bind("p", "node-b", uid=p.uid))}
    )
    # A backoff short enough to end within the test: a requeued attempt would start again.
    with running(
        store, api_client, profile, registry, initial_backoff=0.3, max_backoff=0.3
    ) as scheduler:
        kube_server.wait_for(lambda: list(store.read(kinds=["bind_failed"])))
        kube_server.wait_for(
            lambda: scheduler.cache.node_of(created["metadata"]["uid"]) == "node-b"
        )
        time.sleep(1.0)  # three backoffs: no second attempt comes
    assert rival[0][0] == 201, rival
    assert node_of(kube_server, "p") == "node-b"
    (failed,) = store.read(kinds=["bind_failed"])
    assert failed.data["code"] == 409
    assert failed.node == "node-a"
    kinds = [e.kind for e in store.read_pod("default", "p")]
    assert kinds.count("attempt_started") == 1, " ".join(kinds)
    assert "bound" not in kinds, " ".join(kinds)
    scheduled = [e for e in events_about(kube_server, "p") if e["reason"] == "Scheduled"]
    assert scheduled == []
    if isinstance(kube_server, EmulatedApiServer):
        assert [r.status for r in bindings(kube_server, "p")] == [201, 409]  # the rival's, ours


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
    pod_lists = [
        r.query.get("resourceVersion")
        for r in apiserver.requests
        if r.verb == "list" and r.resource == "pods"
    ]
    assert len(pod_lists) > lists_before
    # As client-go's reflector: the first list from the watch cache ("0"); after a 410
    # the version is gone, and the relist is a consistent read (no resourceVersion).
    assert pod_lists[0] == "0"
    assert pod_lists[lists_before] is None


def test_reconcile_on_start_closes_reservations_a_crash_left_open(
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore
) -> None:
    kube_server.create(node("node-a"))
    bound = kube_server.create(pod("was-bound", node_name="node-a"))
    pending = kube_server.create(pod("never-bound"))
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
        kube_server.wait_for(lambda: node_of(kube_server, "never-bound") == "node-a")
        kube_server.wait_for(
            lambda: [e for e in store.read(kinds=["bound"]) if e.name == "never-bound"]
        )

    closed = {
        e.name: e for e in store.read(kinds=["bound", "unreserved"]) if e.data.get("reconciled")
    }
    assert closed["was-bound"].kind == "bound" and closed["was-bound"].attempt == "a-was-bound"
    assert closed["never-bound"].kind == "unreserved"
    assert not list(store.read(kinds=["bind_failed"]))  # never bound twice
    bound_events = [e.name for e in store.read(kinds=["bound"])]
    assert sorted(bound_events) == ["never-bound", "was-bound"]
    if isinstance(kube_server, EmulatedApiServer):
        assert bindings(kube_server, "was-bound") == []
        assert len(bindings(kube_server, "never-bound")) == 1


def test_pod_bound_while_the_scheduler_was_down_records_its_first_placement(
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore
) -> None:
    from eventsched.events import rebuild

    kube_server.create(node("node-a"))
    kube_server.create(pod("placed-by-hand", node_name="node-a"))
    with running(store, api_client):
        pass
    placement = rebuild(store).first_placements["default/placed-by-hand"]
    assert placement.node == "node-a"
