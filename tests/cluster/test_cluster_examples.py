"""examples/cluster loads and holds what examples/README.md says it does."""

from __future__ import annotations

from pathlib import Path

import pytest

from eventsched.cluster import LoadedCluster, load_manifests
from eventsched.model import Node, Pod, Taint

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "cluster"


@pytest.fixture(scope="module")
def example() -> LoadedCluster:
    return load_manifests([EXAMPLES])


def fits_resources(pod: Pod, node: Node) -> bool:
    return all(node.allocatable.get(name, 0) >= amount for name, amount in pod.requests.items())


def tolerates(pod: Pod, node: Node) -> bool:
    return all(
        any(t.tolerates(taint) for t in pod.tolerations)
        for taint in node.taints
        if taint.effect == "NoSchedule"
    )


def feasible(pod: Pod, nodes: list[Node]) -> list[str]:
    """A crude filter (resources, taints, cordon, nodeSelector), enough to check the README."""
    return [
        n.name
        for n in nodes
        if not n.unschedulable
        and tolerates(pod, n)
        and fits_resources(pod, n)
        and all(n.labels.get(k) == v for k, v in pod.node_selector.items())
    ]


def test_nodes(example: LoadedCluster) -> None:
    nodes = {n.name: n for n in example.nodes}
    assert len(nodes) == 6
    assert (
        Taint("node-role.kubernetes.io/control-plane", "", "NoSchedule")
        in nodes["control-plane-1"].taints
    )
    assert nodes["gpu-1"].taints == (Taint("nvidia.com/gpu", "present", "NoSchedule"),)
    assert nodes["gpu-1"].allocatable["nvidia.com/gpu"] == 2
    assert [n.name for n in example.nodes if n.unschedulable] == ["worker-4"]
    assert len({n.labels["topology.kubernetes.io/zone"] for n in example.nodes}) == 3
    assert len({n.labels["node.kubernetes.io/instance-type"] for n in example.nodes}) >= 3


def test_workloads(example: LoadedCluster) -> None:
    pods = example.pods
    assert len(pods) == 10
    assert {p.scheduler_name for p in pods} == {"eventsched"}
    assert {p.namespace for p in pods} == {"default", "shop"}
    web = [p for p in pods if p.labels.get("app") == "web"]
    assert len(web) == 4 and all(p.owner and p.owner.kind == "ReplicaSet" for p in web)
    assert sorted(p.key for p in pods if p.owner and p.owner.kind == "StatefulSet") == [
        "shop/db-0",
        "shop/db-1",
    ]
    by_key = {p.key: p for p in pods}
    assert by_key["shop/checkout"].priority == 1000
    assert by_key["default/gpu-train"].requests["nvidia.com/gpu"] == 1
    assert by_key["default/too-big"].requests["cpu"] == 64_000


def test_expected_outcome(example: LoadedCluster) -> None:
    """Only too-big fits nowhere; the GPU and zone-pinned pods have one node each."""
    places = {p.key: feasible(p, example.nodes) for p in example.pods}
    assert places.pop("default/too-big") == []
    assert places.pop("default/gpu-train") == ["gpu-1"]
    assert places.pop("default/nightly-report") == ["worker-2"]
    for key, nodes in places.items():
        assert nodes == ["worker-1", "worker-2", "worker-3"], key
    biggest = max(n.allocatable["cpu"] for n in example.nodes)
    assert biggest < 64_000
