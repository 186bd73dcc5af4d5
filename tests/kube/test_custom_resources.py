"""Custom resources (ElasticQuota, NodeResourceTopology) through the real client.

A cluster without the CRD: the adapter's informer for it counts as synced with nothing,
says once what to install, and the kind is reported absent (never a crash loop). With
deploy/crds/ applied (real kube-apiserver only; the emulator serves no CRDs), an
ElasticQuota and a NodeResourceTopology created through the API arrive as model objects.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from structlog.testing import capture_logs

from eventsched.cluster.kube import KubeCluster
from eventsched.model.changes import ClusterChange
from eventsched.plugins.capacityscheduling.elasticquota import ElasticQuota
from tests.conftest import KubeServer
from tests.kube.realserver import RealApiServer, real_binaries

CRDS = Path(__file__).resolve().parents[2] / "deploy" / "crds"
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


class Seen:
    """What the adapter delivered, waited for by predicate."""

    def __init__(self) -> None:
        self.changes: list[ClusterChange] = []
        self._cond = threading.Condition()

    def __call__(self, change: ClusterChange) -> None:
        with self._cond:
            self.changes.append(change)
            self._cond.notify_all()

    def wait(self, kind: str, timeout: float = 15.0) -> ClusterChange:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for change in self.changes:
                    if getattr(change.obj, "kind", None) == kind:
                        return change
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {kind} delivered in {timeout} s")
                self._cond.wait(left)


def _delete_crd(server: RealApiServer, name: str) -> None:
    server.request("DELETE", f"{CRD_PATH}/{name}")
    server.wait_for(lambda: server.request("GET", f"{CRD_PATH}/{name}")[0] == 404, 30.0)


def _apply_crd(server: RealApiServer, file: str) -> dict[str, Any]:
    crd = yaml.safe_load((CRDS / file).read_text())
    status, body = server.request("POST", CRD_PATH, crd)
    assert status in (201, 409), body

    def established() -> bool:
        got = server.call("GET", f"{CRD_PATH}/{crd['metadata']['name']}")
        conditions = (got.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

    server.wait_for(established, 30.0)
    return crd


def test_a_missing_crd_is_said_once_and_the_kind_reported_absent(
    kube_server: KubeServer, api_client: Any
) -> None:
    if isinstance(kube_server, RealApiServer):
        _delete_crd(kube_server, "elasticquotas.scheduling.x-k8s.io")
    cluster = KubeCluster(api_client, ["eventsched"], custom_kinds=["ElasticQuota"])
    with capture_logs() as logs:
        cluster.start(Seen())
        try:
            assert cluster.wait_synced(timeout=20.0)
            assert cluster.absent_kinds() == ["ElasticQuota"]
        finally:
            cluster.stop()
    said = [e for e in logs if "does not serve ElasticQuota" in e["event"]]
    assert len(said) == 1
    assert "kubectl apply -f deploy/crds/elasticquotas.yaml" in said[0]["event"]


@pytest.mark.skipif(
    real_binaries() is None, reason="needs kube-apiserver (EVENTSCHED_KUBE_BIN): CRDs"
)
def test_quota_and_topology_objects_arrive_once_the_crds_are_applied(
    real_apiserver: RealApiServer,
) -> None:
    server = real_apiserver
    server.reset()
    _apply_crd(server, "elasticquotas.yaml")
    _apply_crd(server, "noderesourcetopologies.yaml")
    server.ensure_namespace("team-a")
    quota = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "quota", "namespace": "team-a"},
        "spec": {"min": {"cpu": "2"}, "max": {"cpu": "4", "memory": "8Gi"}},
    }
    server.call("POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/team-a/elasticquotas", quota)
    topology = {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": "node-0"},
        "topologyPolicies": ["SingleNUMANodeContainerLevel"],
        "zones": [
            {
                "name": "node-0",
                "type": "Node",
                "resources": [
                    {"name": "cpu", "capacity": "4", "allocatable": "4", "available": "4"}
                ],
            }
        ],
    }
    server.call("POST", "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies", topology)
    api = server.client()
    seen = Seen()
    cluster = KubeCluster(api, ["eventsched"], custom_kinds=["ElasticQuota"])
    try:
        cluster.start(seen)
        assert cluster.wait_synced(timeout=20.0)
        change = seen.wait("ElasticQuota")
        assert cluster.absent_kinds() == []
    finally:
        cluster.stop()
        api.close()
        server.call(
            "DELETE", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/team-a/elasticquotas/quota"
        )
        server.call("DELETE", "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies/node-0")
    assert change.obj == ElasticQuota(
        "team-a", "quota", {"cpu": 2000}, {"cpu": 4000, "memory": 8 * 2**30}
    )
