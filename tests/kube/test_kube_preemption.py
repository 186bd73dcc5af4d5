"""The Kubernetes adapter's preemption requests, where only the emulator can tell:
the exact requests sent (or not sent), injected failures, and that every request
is within the RBAC rules deploy/ grants. What every adapter does alike is
test_cluster_contract.py's; the grants under a real authorizer, test_rbac_real.py's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from eventsched.cluster.kube import REQUIRED_ACCESS, KubeCluster
from eventsched.model import Pod
from eventsched.model.changes import ApiError
from tests.kube.realserver import EmulatedApiServer
from tests.kube.test_kube_scheduler import node, pod

STATUS = "/api/v1/namespaces/default/pods/pending/status"


@pytest.fixture
def cluster(apiserver: EmulatedApiServer) -> Iterator[tuple[KubeCluster, dict[str, Pod]]]:
    apiserver.create(node("node-a"))
    apiserver.create(pod("pending"))
    apiserver.create(pod("running", node_name="node-a"))
    seen: dict[str, Pod] = {}
    api = apiserver.client()
    kube = KubeCluster(api, ["eventsched"])
    kube.start(lambda change: seen.__setitem__(change.obj.name, change.obj))
    try:
        assert kube.wait_synced(30)
        yield kube, seen
    finally:
        kube.stop()
        api.close()


def status_patches(apiserver: EmulatedApiServer) -> list[object]:
    return [r.body for r in apiserver.requests if r.method == "PATCH" and r.path == STATUS]


def test_clear_nomination_sends_one_patch_and_none_without_a_nomination(
    apiserver: EmulatedApiServer, cluster: tuple[KubeCluster, dict[str, Pod]]
) -> None:
    kube, seen = cluster
    kube.clear_nomination(seen["pending"])  # the scheduler's copy has none
    assert status_patches(apiserver) == []
    kube.clear_nomination(replace(seen["pending"], nominated_node_name="node-a"))
    assert status_patches(apiserver) == [{"status": {"nominatedNodeName": None}}]
    granted = {(a.api_group, a.resource, v) for a in REQUIRED_ACCESS for v in a.verbs}
    assert apiserver.access_used() <= granted


def test_set_unschedulable_writes_the_nomination_only_when_it_changes(
    apiserver: EmulatedApiServer, cluster: tuple[KubeCluster, dict[str, Pod]]
) -> None:
    """`updatePod`: the same condition with a nomination the pod already has is no patch."""
    kube, seen = cluster
    kube.set_unschedulable(seen["pending"], "m", "node-a")
    apiserver.wait_for(lambda: seen["pending"].nominated_node_name == "node-a")
    kube.set_unschedulable(seen["pending"], "m", "node-a")
    kube.set_unschedulable(seen["pending"], "m")
    kube.set_unschedulable(seen["pending"], "m2")  # a new message: one more patch, to wait for
    apiserver.wait_for(lambda: len(status_patches(apiserver)) == 2)
    first, second = status_patches(apiserver)
    assert isinstance(first, dict) and first["status"]["nominatedNodeName"] == "node-a"
    assert isinstance(second, dict) and "nominatedNodeName" not in second["status"]
    assert kube.recorder.failures == 0


@pytest.mark.parametrize("code", [403, 409])
def test_clear_nomination_and_preempt_raise_what_the_server_refused(
    apiserver: EmulatedApiServer, cluster: tuple[KubeCluster, dict[str, Pod]], code: int
) -> None:
    kube, seen = cluster
    nominated = replace(seen["pending"], nominated_node_name="node-a")
    apiserver.fail_next("PATCH", "/pods/pending/status$", code)
    with pytest.raises(ApiError) as refused:
        kube.clear_nomination(nominated)
    assert refused.value.code == code
    apiserver.fail_next("DELETE", "/pods/running$", code)
    with pytest.raises(ApiError) as refused:
        kube.preempt(seen["running"], seen["pending"])
    assert refused.value.code == code


def test_status_patches_answered_500_are_tried_four_times_as_patch_pod_status_does(
    apiserver: EmulatedApiServer, cluster: tuple[KubeCluster, dict[str, Pod]]
) -> None:
    """util.PatchPodStatus retries an InternalError with retry.DefaultBackoff (four
    attempts); a DELETE is sent once."""
    kube, seen = cluster
    nominated = replace(seen["pending"], nominated_node_name="node-a")
    apiserver.fail_next("PATCH", "/pods/pending/status$", 500, times=3)
    kube.clear_nomination(nominated)  # the fourth attempt is answered
    assert len(status_patches(apiserver)) == 4
    apiserver.fail_next("PATCH", "/pods/pending/status$", 500, times=4)
    with pytest.raises(ApiError) as refused:
        kube.clear_nomination(nominated)
    assert refused.value.code == 500 and len(status_patches(apiserver)) == 8
    apiserver.fail_next("PATCH", "/pods/pending/status$", 500)
    kube.set_unschedulable(seen["pending"], "0/2 nodes are available")
    apiserver.wait_for(lambda: "0/2 nodes" in str(apiserver.get("pods", "pending", "default")))
    assert len(status_patches(apiserver)) == 10 and kube.recorder.failures == 0
    apiserver.fail_next("DELETE", "/pods/running$", 500)
    with pytest.raises(ApiError) as refused:
        kube.preempt(seen["running"], seen["pending"])
    assert refused.value.code == 500
