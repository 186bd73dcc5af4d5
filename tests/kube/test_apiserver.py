"""The emulator behaves like a real API server for what the scheduler uses.

Every test here goes through the official `kubernetes` client over HTTP, so
a pass means the client's own models, Watch, SharedInformer and
leaderelection accept what the emulator says.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from typing import Any

import pytest
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException
from kubernetes.informer import ADDED, DELETED, ERROR, MODIFIED, SharedInformer
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

from tests.kube.apiserver import ApiServer, stop_informer, strategic_merge_patch

STRATEGIC = "application/strategic-merge-patch+json"


def pod_manifest(
    name: str,
    namespace: str = "default",
    node: str = "",
    scheduler: str = "eventsched",
    labels: dict[str, str] | None = None,
    conditions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}],
    }
    if node:
        spec["nodeName"] = node
    manifest: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": spec,
    }
    if conditions:
        manifest["status"] = {"conditions": conditions}
    return manifest


def node_manifest(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def binding(name: str, node: str, uid: str | None = None) -> client.V1Binding:
    return client.V1Binding(
        metadata=client.V1ObjectMeta(name=name, namespace="default", uid=uid),
        target=client.V1ObjectReference(api_version="v1", kind="Node", name=node),
    )


def status_of(exc: ApiException) -> dict[str, Any]:
    return json.loads(exc.body)


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


# -- plain reads and writes --------------------------------------------------------


def test_pods_and_nodes_round_trip_as_typed_models(
    apiserver: ApiServer, core: client.CoreV1Api
) -> None:
    node = core.create_node(client.V1Node(metadata=client.V1ObjectMeta(name="n1")))
    created = core.create_namespaced_pod(
        "default",
        client.V1Pod(
            metadata=client.V1ObjectMeta(name="p1", labels={"app": "web"}),
            spec=client.V1PodSpec(
                containers=[client.V1Container(name="app", image="pause")],
                scheduler_name="eventsched",
            ),
        ),
    )
    apiserver.create(pod_manifest("p2", namespace="other"))
    apiserver.create(node_manifest("n2"))

    assert isinstance(created, client.V1Pod)
    assert created.metadata.namespace == "default"
    assert created.metadata.uid and created.metadata.resource_version
    assert isinstance(created.metadata.creation_timestamp, datetime)
    assert created.status.phase == "Pending"
    assert node.metadata.namespace is None

    everywhere = core.list_pod_for_all_namespaces()
    assert isinstance(everywhere, client.V1PodList)
    assert [(p.metadata.namespace, p.metadata.name) for p in everywhere.items] == [
        ("default", "p1"),
        ("other", "p2"),
    ]
    assert everywhere.metadata.resource_version == str(apiserver.resource_version)
    assert [p.metadata.name for p in core.list_namespaced_pod("other").items] == ["p2"]
    assert [n.metadata.name for n in core.list_node().items] == ["n1", "n2"]

    read = core.read_namespaced_pod("p1", "default")
    assert read.metadata.uid == created.metadata.uid
    assert read.metadata.labels == {"app": "web"}
    assert core.read_node("n2").status.allocatable == {"cpu": "4", "memory": "8Gi", "pods": "110"}

    read.metadata.labels["tier"] = "front"
    replaced = core.replace_namespaced_pod("p1", "default", read)
    assert int(replaced.metadata.resource_version) > int(read.metadata.resource_version)
    assert apiserver.get("pods", "p1")["metadata"]["labels"] == {"app": "web", "tier": "front"}

    deleted = core.delete_namespaced_pod("p1", "default")
    assert deleted.metadata.name == "p1"
    assert core.delete_node("n1")["status"] == "Success"
    assert apiserver.get("pods", "p1") is None
    assert [n["metadata"]["name"] for n in apiserver.list("nodes")] == ["n2"]


def test_errors_are_status_objects_with_the_real_codes(
    apiserver: ApiServer, core: client.CoreV1Api
) -> None:
    with pytest.raises(ApiException) as missing:
        core.read_namespaced_pod("nope", "default")
    assert missing.value.status == 404
    assert status_of(missing.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "nope" not found',
        "reason": "NotFound",
        "code": 404,
        "details": {"name": "nope", "kind": "pods"},
    }

    apiserver.create(pod_manifest("p"))
    with pytest.raises(ApiException) as exists:
        core.create_namespaced_pod("default", pod_manifest("p"))
    assert exists.value.status == 409
    assert status_of(exists.value)["reason"] == "AlreadyExists"
    assert status_of(exists.value)["message"] == 'pods "p" already exists'

    stale = core.read_namespaced_pod("p", "default")
    apiserver.patch("pods", "p", {"metadata": {"labels": {"moved": "on"}}})
    with pytest.raises(ApiException) as conflict:
        core.replace_namespaced_pod("p", "default", stale)
    assert conflict.value.status == 409
    assert status_of(conflict.value)["reason"] == "Conflict"
    assert status_of(conflict.value)["message"].startswith(
        'Operation cannot be fulfilled on pods "p": the object has been modified'
    )

    with pytest.raises(urllib.error.HTTPError) as unknown:
        urllib.request.urlopen(apiserver.url + "/api/v1/namespaces/default/configmaps", timeout=5)
    assert unknown.value.code == 404
    assert json.loads(unknown.value.read())["message"] == (
        "the server could not find the requested resource"
    )

    generated = core.create_namespaced_pod(
        "default",
        {**pod_manifest(""), "metadata": {"generateName": "web-"}},
    )
    assert generated.metadata.name.startswith("web-") and len(generated.metadata.name) == 9


def test_field_and_label_selectors_on_lists(apiserver: ApiServer, core: client.CoreV1Api) -> None:
    apiserver.create(pod_manifest("pending", labels={"app": "web"}))
    apiserver.create(pod_manifest("bound", node="n1", labels={"app": "db"}))
    apiserver.create(pod_manifest("theirs", scheduler="default-scheduler"))

    def names(**selectors: str) -> list[str]:
        return [p.metadata.name for p in core.list_pod_for_all_namespaces(**selectors).items]

    assert names(field_selector="spec.nodeName=") == ["pending", "theirs"]
    assert names(field_selector="spec.nodeName!=") == ["bound"]
    assert names(field_selector="spec.schedulerName=eventsched") == ["bound", "pending"]
    assert names(field_selector="spec.schedulerName=eventsched,spec.nodeName=") == ["pending"]
    assert names(field_selector="status.phase!=Succeeded,status.phase!=Failed") == [
        "bound",
        "pending",
        "theirs",
    ]
    assert names(label_selector="app=web") == ["pending"]
    assert names(label_selector="app in (web,db),app!=db") == ["pending"]
    assert names(label_selector="!app") == ["theirs"]
    with pytest.raises(ApiException) as bad:
        names(field_selector="spec.priority=1")
    assert bad.value.status == 400
    assert status_of(bad.value)["message"] == "field label not supported: spec.priority"


# -- watch -----------------------------------------------------------------------


def test_watch_replays_history_and_follows_selector_transitions(
    apiserver: ApiServer, core: client.CoreV1Api
) -> None:
    start = str(apiserver.resource_version)
    apiserver.create(pod_manifest("p1"))
    apiserver.create(pod_manifest("p2", node="n1"))
    core.create_namespaced_pod_binding("p1", "default", binding("p1", "n2"), _preload_content=False)

    # Unassigned pods: p1 comes in, then leaves the selection when bound.
    unassigned = watch.Watch()
    seen = []
    for event in unassigned.stream(
        core.list_pod_for_all_namespaces,
        field_selector="spec.nodeName=",
        resource_version=start,
        timeout_seconds=5,
    ):
        seen.append((event["type"], event["object"].metadata.name, event["object"].spec.node_name))
        if event["type"] == DELETED:
            unassigned.stop()
    assert seen == [(ADDED, "p1", None), (DELETED, "p1", None)]

    # Assigned pods: p2 as created, p1 when it enters the selection.
    assigned = watch.Watch()
    seen = []
    for event in assigned.stream(
        core.list_pod_for_all_namespaces,
        field_selector="spec.nodeName!=",
        resource_version=start,
        timeout_seconds=5,
    ):
        seen.append((event["type"], event["object"].metadata.name, event["object"].spec.node_name))
        if len(seen) == 2:
            assigned.stop()
    assert seen == [(ADDED, "p2", "n1"), (ADDED, "p1", "n2")]
    assert assigned.resource_version == str(apiserver.resource_version)


def test_watch_expiry_and_initial_events(apiserver: ApiServer, core: client.CoreV1Api) -> None:
    apiserver.create(pod_manifest("a"))
    old = str(apiserver.resource_version)
    apiserver.expire_watches()

    with pytest.raises(ApiException) as gone:
        for _ in watch.Watch().stream(
            core.list_namespaced_pod, "default", resource_version=old, timeout_seconds=5
        ):
            pass
    assert gone.value.status == 410
    assert gone.value.reason == f"Expired: too old resource version: {old} ({int(old) + 1})"

    # A fresh list's version can be watched from.
    listed = core.list_namespaced_pod("default").metadata.resource_version
    apiserver.create(pod_manifest("b"))
    fresh = watch.Watch()
    for event in fresh.stream(
        core.list_namespaced_pod, "default", resource_version=listed, timeout_seconds=5
    ):
        assert (event["type"], event["object"].metadata.name) == (ADDED, "b")
        fresh.stop()

    # Without a resourceVersion the stream starts with every current object.
    initial = watch.Watch()
    names = []
    for event in initial.stream(core.list_namespaced_pod, "default", timeout_seconds=5):
        names.append((event["type"], event["object"].metadata.name))
        if len(names) == 2:
            initial.stop()
    assert names == [(ADDED, "a"), (ADDED, "b")]

    # timeoutSeconds ends a quiet stream cleanly.
    started = time.monotonic()
    assert list(watch.Watch().stream(core.list_node, timeout_seconds=1)) == []
    assert 0.9 <= time.monotonic() - started < 3


def test_stop_ends_open_watch_streams_promptly() -> None:
    server = ApiServer().start()
    api = client.ApiClient(client.Configuration(host=server.url))
    core = client.CoreV1Api(api)
    events: list[dict[str, Any]] = []
    ended = threading.Event()

    def consume() -> None:
        for event in watch.Watch().stream(core.list_node, timeout_seconds=60):
            events.append(event)
        ended.set()

    threading.Thread(target=consume, daemon=True).start()
    server.create(node_manifest("n1"))
    server.wait_for(lambda: server.open_watches == 1 and events)
    started = time.monotonic()
    server.stop()
    assert ended.wait(2), "the watch stream outlived the server"
    assert time.monotonic() - started < 2
    assert [e["object"].metadata.name for e in events] == ["n1"]
    assert not server.internal_errors
    api.close()


# -- informer --------------------------------------------------------------------


class Recorder:
    """Handler calls of a SharedInformer, as (event type, namespace/name)."""

    def __init__(self, informer: SharedInformer) -> None:
        self.seen: list[tuple[str, str]] = []
        self.errors: list[Any] = []
        for event_type in (ADDED, MODIFIED, DELETED):
            informer.add_event_handler(
                event_type,
                lambda obj, t=event_type: self.seen.append(
                    (t, f"{obj.metadata.namespace}/{obj.metadata.name}")
                ),
            )
        informer.add_event_handler(ERROR, self.errors.append)

    def saw(self, *expected: tuple[str, str]) -> bool:
        return all(e in self.seen for e in expected)


def test_informer_syncs_and_follows_changes(apiserver: ApiServer, core: client.CoreV1Api) -> None:
    apiserver.create(pod_manifest("a"))
    apiserver.create(pod_manifest("b", namespace="other"))
    informer = SharedInformer(core.list_pod_for_all_namespaces)
    recorder = Recorder(informer)
    informer.start()
    try:
        apiserver.wait_for(lambda: apiserver.open_watches == 1)
        assert recorder.seen == [(ADDED, "default/a"), (ADDED, "other/b")]
        assert sorted(informer.cache.list_keys()) == ["default/a", "other/b"]

        core.create_namespaced_pod("default", pod_manifest("c"))
        apiserver.patch("pods", "a", {"metadata": {"labels": {"seen": "yes"}}})
        apiserver.delete("pods", "b", "other")
        apiserver.wait_for(
            lambda: recorder.saw(
                (ADDED, "default/c"), (MODIFIED, "default/a"), (DELETED, "other/b")
            )
        )
        assert sorted(informer.cache.list_keys()) == ["default/a", "default/c"]
        assert informer.cache.get_by_key("default/a").metadata.labels == {"seen": "yes"}
        assert not recorder.errors
    finally:
        stop_informer(informer, apiserver)


def test_informer_relists_after_expired_watches(
    apiserver: ApiServer, core: client.CoreV1Api
) -> None:
    apiserver.create(pod_manifest("a"))
    apiserver.create(pod_manifest("b"))
    informer = SharedInformer(core.list_pod_for_all_namespaces)
    recorder = Recorder(informer)
    informer.start()
    try:
        apiserver.wait_for(lambda: apiserver.open_watches == 1)
        lists = sum(1 for r in apiserver.requests if r.verb == "list")

        # The open watch ends with 410; the informer relists and sees every pod again.
        recorder.seen.clear()
        apiserver.expire_watches()
        apiserver.wait_for(lambda: recorder.saw((MODIFIED, "default/a"), (MODIFIED, "default/b")))
        assert [e.status for e in recorder.errors] == [410]
        assert sum(1 for r in apiserver.requests if r.verb == "list") == lists + 1
        apiserver.wait_for(lambda: apiserver.open_watches == 1)

        # A gap the watch cannot bridge: what changed meanwhile arrives by the relist.
        stop_informer(informer, apiserver)
        apiserver.wait_for(lambda: apiserver.open_watches == 0)
        recorder.seen.clear()
        apiserver.create(pod_manifest("c"))
        apiserver.delete("pods", "b")
        apiserver.expire_watches()
        informer.start()
        apiserver.wait_for(lambda: recorder.saw((ADDED, "default/c"), (DELETED, "default/b")))
        assert sorted(informer.cache.list_keys()) == ["default/a", "default/c"]
        assert sum(1 for r in apiserver.requests if r.verb == "list") == lists + 2
    finally:
        stop_informer(informer, apiserver)


# -- scheduler writes ----------------------------------------------------------------


def test_binding_assigns_once(apiserver: ApiServer, core: client.CoreV1Api) -> None:
    uid = apiserver.create(pod_manifest("p"))["metadata"]["uid"]
    before = apiserver.resource_version

    response = core.create_namespaced_pod_binding(
        "p", "default", binding("p", "n1", uid), _preload_content=False
    )
    assert response.status == 201
    assert json.loads(response.data) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    }
    pod = core.read_namespaced_pod("p", "default")
    assert pod.spec.node_name == "n1"
    assert int(pod.metadata.resource_version) == before + 1
    assert [(c.type, c.status) for c in pod.status.conditions] == [("PodScheduled", "True")]

    with pytest.raises(ApiException) as again:
        core.create_namespaced_pod_binding(
            "p", "default", binding("p", "n2"), _preload_content=False
        )
    assert again.value.status == 409
    assert status_of(again.value)["reason"] == "Conflict"
    assert status_of(again.value)["message"] == (
        'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"'
    )

    with pytest.raises(ApiException) as missing:
        core.create_namespaced_pod_binding(
            "ghost", "default", binding("ghost", "n1"), _preload_content=False
        )
    assert missing.value.status == 404

    apiserver.create(pod_manifest("q"))
    with pytest.raises(ApiException) as replaced:
        core.create_namespaced_pod_binding(
            "q", "default", binding("q", "n1", uid="not-the-uid"), _preload_content=False
        )
    assert replaced.value.status == 409
    assert (
        "Precondition failed: UID in precondition: not-the-uid"
        in (status_of(replaced.value)["message"])
    )
    assert apiserver.get("pods", "q")["spec"].get("nodeName") is None


def test_fail_next_answers_the_injected_status_then_serves(
    apiserver: ApiServer, core: client.CoreV1Api
) -> None:
    apiserver.create(pod_manifest("p"))
    apiserver.fail_next("POST", r"/pods/p/binding$", 500, message="etcdserver: leader changed")
    with pytest.raises(ApiException) as failed:
        core.create_namespaced_pod_binding(
            "p", "default", binding("p", "n1"), _preload_content=False
        )
    assert failed.value.status == 500
    assert status_of(failed.value)["reason"] == "InternalError"
    assert status_of(failed.value)["message"] == "etcdserver: leader changed"
    assert apiserver.get("pods", "p")["spec"].get("nodeName") is None

    retried = core.create_namespaced_pod_binding(
        "p", "default", binding("p", "n1"), _preload_content=False
    )
    assert retried.status == 201

    apiserver.fail_next("GET", r"^/api/v1/pods$", 503, times=2)
    for _ in range(2):
        with pytest.raises(ApiException) as unavailable:
            core.list_pod_for_all_namespaces()
        assert unavailable.value.status == 503
    assert [p.metadata.name for p in core.list_pod_for_all_namespaces().items] == ["p"]

    assert [r.status for r in apiserver.requests if r.resource == "pods/binding"] == [500, 201]
    assert [r.status for r in apiserver.requests if r.verb == "list"] == [503, 503, 200]


def test_status_patch_merges_conditions_by_type(
    apiserver: ApiServer, core: client.CoreV1Api
) -> None:
    ready = {"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}
    apiserver.create(pod_manifest("p", conditions=[ready]))

    unschedulable = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/3 nodes are available",
    }
    patched = core.patch_namespaced_pod_status(
        "p", "default", body={"status": {"conditions": [unschedulable]}}, _content_type=STRATEGIC
    )
    assert isinstance(patched, client.V1Pod)
    assert [(c.type, c.status) for c in patched.status.conditions] == [
        ("Ready", "True"),
        ("PodScheduled", "False"),
    ]

    # Same type: merged in place; null deletes a key; $setElementOrder is ignored.
    core.patch_namespaced_pod_status(
        "p",
        "default",
        body={
            "status": {
                "$setElementOrder/conditions": [{"type": "Ready"}, {"type": "PodScheduled"}],
                "conditions": [
                    {"type": "PodScheduled", "message": "0/4 nodes are available", "reason": None}
                ],
                "nominatedNodeName": "n1",
            }
        },
        _content_type=STRATEGIC,
    )
    conditions = apiserver.get("pods", "p")["status"]["conditions"]
    assert conditions == [
        ready,
        {"type": "PodScheduled", "status": "False", "message": "0/4 nodes are available"},
    ]

    # The status subresource ignores everything but status; the main resource ignores status.
    core.patch_namespaced_pod_status(
        "p", "default", body={"metadata": {"labels": {"x": "y"}}}, _content_type=STRATEGIC
    )
    core.patch_namespaced_pod(
        "p", "default", body={"status": {"phase": "Running"}}, _content_type=STRATEGIC
    )
    stored = apiserver.get("pods", "p")
    assert stored["metadata"]["labels"] == {}
    assert stored["status"]["phase"] == "Pending"

    # A JSON merge patch replaces the list.
    core.patch_namespaced_pod_status(
        "p",
        "default",
        body={"status": {"conditions": [{"type": "Ready", "status": "False"}]}},
        _content_type="application/merge-patch+json",
    )
    assert apiserver.get("pods", "p")["status"]["conditions"] == [
        {"type": "Ready", "status": "False"}
    ]


def test_strategic_merge_patch_directives() -> None:
    original = {
        "metadata": {"finalizers": ["a"], "labels": {"keep": "1", "drop": "2"}},
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}, {"type": "X", "status": "True"}]
        },
        "spec": {"tolerations": [{"key": "old"}]},
    }
    patch = {
        "metadata": {"finalizers": ["b", "a"], "labels": {"drop": None}},
        "status": {"conditions": [{"type": "X", "$patch": "delete"}]},
        "spec": {"tolerations": [{"key": "new"}]},
    }
    assert strategic_merge_patch(original, patch) == {
        "metadata": {"finalizers": ["a", "b"], "labels": {"keep": "1"}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        "spec": {"tolerations": [{"key": "new"}]},
    }
    assert (
        strategic_merge_patch(
            original, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}
        )["metadata"]["finalizers"]
        == []
    )
    assert strategic_merge_patch(original, {"spec": {"$patch": "replace", "x": 1}})["spec"] == {
        "x": 1
    }


def test_events_are_stored_per_api(apiserver: ApiServer, api_client: client.ApiClient) -> None:
    events = client.EventsV1Api(api_client)
    created = events.create_namespaced_event(
        "default",
        client.EventsV1Event(
            metadata=client.V1ObjectMeta(generate_name="p."),
            event_time=datetime.now(UTC),
            type="Normal",
            reason="Scheduled",
            action="Binding",
            note="Successfully assigned default/p to n1",
            reporting_controller="eventsched",
            reporting_instance="eventsched-host",
            regarding=client.V1ObjectReference(kind="Pod", name="p", namespace="default"),
        ),
    )
    assert isinstance(created, client.EventsV1Event)
    assert created.metadata.name.startswith("p.")
    [stored] = apiserver.list("events", "default")
    assert stored["apiVersion"] == "events.k8s.io/v1"
    assert (stored["reason"], stored["regarding"]["name"]) == ("Scheduled", "p")
    assert [e.note for e in events.list_namespaced_event("default").items] == [
        "Successfully assigned default/p to n1"
    ]

    client.CoreV1Api(api_client).create_namespaced_event(
        "default",
        client.CoreV1Event(
            metadata=client.V1ObjectMeta(name="legacy"),
            involved_object=client.V1ObjectReference(kind="Pod", name="p"),
            reason="Scheduled",
            message="legacy API",
        ),
    )
    assert [e["metadata"]["name"] for e in apiserver.list("core_events")] == ["legacy"]
    assert len(apiserver.list("events")) == 1


# -- leases and leader election ----------------------------------------------------------


def test_lease_optimistic_concurrency(apiserver: ApiServer, api_client: client.ApiClient) -> None:
    leases = client.CoordinationV1Api(api_client)
    with pytest.raises(ApiException) as absent:
        leases.read_namespaced_lease("sched", "kube-system")
    assert absent.value.status == 404
    assert status_of(absent.value)["message"] == 'leases.coordination.k8s.io "sched" not found'

    body = client.V1Lease(
        metadata=client.V1ObjectMeta(name="sched"),
        spec=client.V1LeaseSpec(holder_identity="a", lease_duration_seconds=15),
    )
    created = leases.create_namespaced_lease("kube-system", body)
    assert created.metadata.namespace == "kube-system"
    with pytest.raises(ApiException) as exists:
        leases.create_namespaced_lease("kube-system", body)
    assert (exists.value.status, status_of(exists.value)["reason"]) == (409, "AlreadyExists")

    current = leases.read_namespaced_lease("sched", "kube-system")
    stale_version = current.metadata.resource_version
    current.spec.holder_identity = "b"
    updated = leases.replace_namespaced_lease("sched", "kube-system", current)
    assert int(updated.metadata.resource_version) > int(stale_version)

    current.spec.holder_identity = "c"
    with pytest.raises(ApiException) as stale:
        leases.replace_namespaced_lease("sched", "kube-system", current)
    assert stale.value.status == 409
    assert status_of(stale.value)["message"] == (
        'Operation cannot be fulfilled on leases.coordination.k8s.io "sched": '
        "the object has been modified; please apply your changes to the latest version and try again"
    )
    assert apiserver.get("leases", "sched", "kube-system")["spec"]["holderIdentity"] == "b"

    assert leases.delete_namespaced_lease("sched", "kube-system")["status"] == "Success"
    assert apiserver.get("leases", "sched", "kube-system") is None


class Candidate:
    """One leader-election candidate of the client library, on its own ApiClient.

    Its own User-Agent tells its requests apart in `ApiServer.requests`. The
    library has no stop: a candidate stops leading when its
    `onstarted_leading` raises, which `release()` makes it do.
    """

    def __init__(self, apiserver: ApiServer, identity: str) -> None:
        self.api = client.ApiClient(client.Configuration(host=apiserver.url))
        self.api.user_agent = f"candidate-{identity}"
        lock = LeaseLock("eventsched", "kube-system", identity)
        lock.api_instance = client.CoordinationV1Api(self.api)
        self.leading = threading.Event()
        self.stopped = threading.Event()
        self._release = threading.Event()
        # The library refuses (sys.exit) retry_period < 1, renew_deadline <= 1.2 * retry_period
        # and lease_duration <= renew_deadline, so these are the shortest it accepts.
        config = electionconfig.Config(
            lock=lock,
            lease_duration=3,
            renew_deadline=2,
            retry_period=1,
            onstarted_leading=self._lead,
            onstopped_leading=self.stopped.set,
        )
        self.thread = threading.Thread(
            target=leaderelection.LeaderElection(config).run, name=identity, daemon=True
        )
        self.thread.start()

    def _lead(self) -> None:
        self.leading.set()
        self._release.wait(30)
        raise RuntimeError("released by the test")

    def release(self) -> None:
        self._release.set()

    def close(self) -> None:
        self.release()
        self.thread.join(5)
        self.api.close()


def test_leader_election_on_a_lease(apiserver: ApiServer) -> None:
    def holder() -> str:
        lease = apiserver.get("leases", "eventsched", "kube-system")
        return lease["spec"]["holderIdentity"] if lease else ""

    def lease_reads(identity: str) -> int:
        return sum(
            1
            for r in apiserver.requests
            if r.user_agent == f"candidate-{identity}" and r.verb == "get"
        )

    a = Candidate(apiserver, "a")
    b: Candidate | None = None
    try:
        assert a.leading.wait(5)
        assert holder() == "a"

        b = Candidate(apiserver, "b")
        apiserver.wait_for(lambda: lease_reads("b") >= 3)
        assert not b.leading.is_set()
        assert holder() == "a"

        # a stops renewing; b takes over once the lease has gone unrenewed for lease_duration.
        a.release()
        assert a.stopped.wait(5)
        assert b.leading.wait(10)
        assert holder() == "b"
    finally:
        a.close()
        if b is not None:
            b.close()
    assert not a.thread.is_alive() and b is not None and not b.thread.is_alive()
    assert {(r.verb, r.status) for r in apiserver.requests if r.resource == "leases"} >= {
        ("get", 404),
        ("create", 201),
        ("get", 200),
        ("update", 200),
    }


# -- RBAC view --------------------------------------------------------------------


def test_access_used_in_rbac_terms(apiserver: ApiServer, api_client: client.ApiClient) -> None:
    core = client.CoreV1Api(api_client)
    leases = client.CoordinationV1Api(api_client)
    apiserver.create(pod_manifest("p"))

    core.list_pod_for_all_namespaces()
    stream = watch.Watch()
    for _ in stream.stream(
        core.list_pod_for_all_namespaces, resource_version="0", timeout_seconds=5
    ):
        stream.stop()
    core.read_namespaced_pod("p", "default")
    core.patch_namespaced_pod_status(
        "p", "default", body={"status": {"nominatedNodeName": "n1"}}, _content_type=STRATEGIC
    )
    core.create_namespaced_pod_binding("p", "default", binding("p", "n1"), _preload_content=False)
    client.EventsV1Api(api_client).create_namespaced_event(
        "default",
        {
            "metadata": {"generateName": "p."},
            "eventTime": datetime.now(UTC).isoformat(),
            "reason": "Scheduled",
        },
    )
    lease = leases.create_namespaced_lease(
        "kube-system", client.V1Lease(metadata=client.V1ObjectMeta(name="l"))
    )
    leases.replace_namespaced_lease("l", "kube-system", lease)
    core.delete_namespaced_pod("p", "default")
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(apiserver.url + "/api/v1/secrets", timeout=5)

    assert apiserver.access_used() == {
        ("", "pods", "list"),
        ("", "pods", "watch"),
        ("", "pods", "get"),
        ("", "pods", "delete"),
        ("", "pods/status", "patch"),
        ("", "pods/binding", "create"),
        ("events.k8s.io", "events", "create"),
        ("coordination.k8s.io", "leases", "create"),
        ("coordination.k8s.io", "leases", "update"),
    }
