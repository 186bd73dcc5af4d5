"""The RBAC rules deploy/ ships are enough for the scheduler, against a real authorizer.

Only collected when a real kube-apiserver is available (tests/kube/conftest.py):
the emulator records what a test used (`access_used`) but authorizes nothing.
The ClusterRole and the leader-election Role of deploy/base/rbac.yaml are
created as written, with their bindings pointing at the control plane's
user "eventsched-test" (a token without groups) instead of the
ServiceAccount, and the scheduler runs with that user's token: it must bind
a pod, write the Scheduled and FailedScheduling Events and the PodScheduled
condition, and take the Lease, having listed what plugins read (a
PodDisruptionBudget among them); pre-bind a PersistentVolume to its claim and read
both back, as VolumeBinding's PreBind does; and make DefaultPreemption's requests
(a victim's DisruptionTarget condition and deletion, a nomination set and cleared,
the Preempted Event naming the preemptor).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from eventsched.cluster.kube import KubeCluster
from eventsched.events import EventStore
from eventsched.model import Pod
from tests.kube.pvcontroller import PVController
from tests.kube.realserver import LEASE_NAMESPACE, RealApiServer
from tests.kube.test_kube_runner import Running, runner
from tests.kube.test_kube_scheduler import condition_of, events_about, node, node_of, pod
from tests.kube.test_kube_volume_binding import claim, local_class, local_volume

RBAC = Path(__file__).resolve().parents[2] / "deploy" / "base" / "rbac.yaml"
USER = "eventsched-test"
PATHS = {
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings",
}


def shipped_rbac_for(user: str) -> list[dict[str, Any]]:
    """deploy/base/rbac.yaml's objects, the bindings' subjects replaced by `user`."""
    objects = [copy.deepcopy(o) for o in yaml.safe_load_all(RBAC.read_text()) if o]
    assert sorted(o["kind"] for o in objects) == sorted(PATHS)
    for obj in objects:
        if obj["kind"].endswith("Binding"):
            assert [s["kind"] for s in obj["subjects"]] == ["ServiceAccount"]
            obj["subjects"] = [
                {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": user}
            ]
    return objects


def path_of(obj: dict[str, Any]) -> str:
    return PATHS[obj["kind"]].format(namespace=obj["metadata"].get("namespace", ""))


@pytest.fixture
def granted(real_apiserver: RealApiServer) -> Iterator[RealApiServer]:
    """The real server, emptied, with deploy/'s RBAC granted to USER; revoked afterwards."""
    server = real_apiserver
    server.reset()
    objects = shipped_rbac_for(USER)
    for obj in objects:
        assert obj["metadata"].get("namespace") in (None, LEASE_NAMESPACE), obj["metadata"]
        server.call("POST", path_of(obj), obj)
    try:
        yield server
    finally:
        for obj in objects:
            server.request("DELETE", f"{path_of(obj)}/{obj['metadata']['name']}")


def test_the_shipped_rbac_lets_the_scheduler_bind_write_events_and_lead(
    granted: RealApiServer, store: EventStore
) -> None:
    server = granted
    token = server.control_plane.user_tokens[USER]

    def may(method: str, path: str) -> int:
        return server.request(method, path, token=token)[0]

    # The user is known to the server and has nothing but what deploy/ grants it.
    server.wait_for(lambda: may("GET", "/api/v1/pods") == 200)  # the grant has propagated
    assert may("GET", "/api/v1/namespaces/default/secrets") == 403
    assert may("GET", "/api/v1/namespaces/default/events") == 403
    assert may("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/eventsched") == 403

    assert may("GET", "/apis/policy/v1/poddisruptionbudgets") == 200
    assert may("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets") == 403
    server.create(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        }
    )
    server.create(node("node-a", cpu="2"))
    server.create(pod("fits", cpu="1"))
    server.create(pod("too-big", cpu="4"))
    api = server.client(token=token)
    leader = Running(runner(store, api, "replica-rbac"))
    try:
        server.wait_for(lambda: leader.runner.state.role == "leading", timeout=15)
        server.wait_for(lambda: node_of(server, "fits") == "node-a", timeout=15)
        server.wait_for(lambda: condition_of(server, "too-big", "PodScheduled"), timeout=15)
        server.wait_for(
            lambda: (
                {e["reason"] for e in server.list("events")} >= {"Scheduled", "FailedScheduling"}
            ),
            timeout=15,
        )
        assert leader.runner.state.role == "leading"
        lease = server.get("leases", "eventsched", LEASE_NAMESPACE)
        assert lease is not None and lease["spec"]["holderIdentity"] == "replica-rbac"
    finally:
        status = leader.stop()
        api.close()
    assert status == 0

    released = server.get("leases", "eventsched", LEASE_NAMESPACE)
    assert released is not None and not released["spec"].get(
        "holderIdentity"
    )  # released on a graceful stop
    scheduled = condition_of(server, "too-big", "PodScheduled")
    assert scheduled is not None
    assert (scheduled["status"], scheduled["reason"]) == ("False", "Unschedulable")
    (event,) = [e for e in events_about(server, "fits") if e["reason"] == "Scheduled"]
    assert event["reportingController"] == "eventsched"
    assert {e["reason"] for e in events_about(server, "too-big")} == {"FailedScheduling"}
    assert [e.name for e in store.read(kinds=["bound"])] == ["fits"]
    assert not list(store.read(kinds=["bind_failed"]))
    budgets = [
        (e.data["namespace"], e.data["name"], e.data["disruptionsAllowed"])
        for e in store.read(kinds=["object_observed"])
        if e.data["kind"] == "PodDisruptionBudget"
    ]
    assert budgets == [("default", "web", 0)]  # listed; no disruption controller runs here


def test_the_shipped_rbac_lets_volume_binding_pre_bind_and_read(
    granted: RealApiServer,
) -> None:
    """VolumeBinding's PreBind with deploy/'s grants: read and update a PersistentVolume,
    read it and the claim again (the PV controller's part played by the admin), and
    update a claim to provision with its selected node."""
    server = granted
    token = server.control_plane.user_tokens[USER]
    server.wait_for(lambda: server.request("GET", "/api/v1/pods", token=token)[0] == 200)
    server.create(local_class())
    server.create(local_volume("pv-rbac", "node-a"))
    created = server.create(claim("data-rbac"))
    api = server.client(token=token)
    cluster = KubeCluster(api, ["eventsched"])
    try:
        pvc = cluster.read_claim("default", "data-rbac")
        assert pvc.uid == created["metadata"]["uid"]
        with PVController(server) as controller:
            cluster.bind_volume("pv-rbac", pvc)
            server.wait_for(lambda: cluster.read_claim("default", "data-rbac").is_bound)
        assert controller.bound == [("default/data-rbac", "pv-rbac")]
        volume = cluster.read_volume("pv-rbac")
        assert volume.claim_ref is not None and volume.claim_ref.uid == pvc.uid
        # A claim to provision: PreBind writes its selected node (an update of the claim).
        server.create(claim("scratch-rbac"))
        cluster.select_node(cluster.read_claim("default", "scratch-rbac"), "node-a")
        assert cluster.read_claim("default", "scratch-rbac").selected_node == "node-a"
    finally:
        cluster.stop()
        api.close()


def test_the_shipped_rbac_lets_preemption_mark_delete_nominate_and_clear(
    granted: RealApiServer,
) -> None:
    """DefaultPreemption's requests with deploy/'s grants: a victim's DisruptionTarget
    condition and its deletion, a nomination set and cleared (pods/status), the victim's
    Preempted Event naming its preemptor."""
    server = granted
    token = server.control_plane.user_tokens[USER]
    server.wait_for(lambda: server.request("GET", "/api/v1/pods", token=token)[0] == 200)
    assert server.request("DELETE", "/api/v1/namespaces/default/pods/x", token=token)[0] == 404
    server.create(node("node-a", cpu="2"))
    server.create(pod("victim", cpu="1", node_name="node-a"))
    server.create(pod("preemptor", cpu="2"))
    seen: dict[str, Pod] = {}
    api = server.client(token=token)
    cluster = KubeCluster(api, ["eventsched"])
    try:
        cluster.start(lambda change: seen.__setitem__(change.obj.name, change.obj))
        assert cluster.wait_synced(30)
        preemptor = seen["preemptor"]
        cluster.set_unschedulable(preemptor, "preempting", "node-a")
        server.wait_for(lambda: seen["preemptor"].nominated_node_name == "node-a")
        cluster.preempt(seen["victim"], preemptor)
        cluster.emit_event(
            seen["victim"], "Normal", "Preempted", "Preempting", "x", related=preemptor
        )
        server.wait_for(lambda: node_of(server, "victim") == "" or seen["victim"].deleting)
        assert seen["victim"].disruption_target == "PreemptionByScheduler"
        cluster.clear_nomination(seen["preemptor"])
        server.wait_for(lambda: seen["preemptor"].nominated_node_name == "")
        server.wait_for(lambda: events_about(server, "victim"), timeout=15)
    finally:
        cluster.stop()
        api.close()
    (event,) = events_about(server, "victim")
    assert (event["reason"], event["related"]["name"]) == ("Preempted", "preemptor")
    assert cluster.recorder.failures == 0
