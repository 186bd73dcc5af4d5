"""generate_cluster: the same cluster for the same arguments, with a realistic mix."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from eventsched.cluster import (
    LoadedCluster,
    generate_cluster,
    generate_manifests,
    load_manifests,
)
from eventsched.model import Taint

GPU = "nvidia.com/gpu"


@pytest.fixture(scope="module")
def cluster() -> LoadedCluster:
    return generate_cluster(nodes=200, pods=2000, seed=7)


def test_same_arguments_same_cluster(cluster: LoadedCluster) -> None:
    again = generate_cluster(nodes=200, pods=2000, seed=7)
    assert again.nodes == cluster.nodes
    assert again.pods == cluster.pods


def test_another_seed_another_cluster(cluster: LoadedCluster) -> None:
    other = generate_cluster(nodes=200, pods=2000, seed=8)
    assert [p.name for p in other.pods] != [p.name for p in cluster.pods]
    assert [p.uid for p in other.pods] != [p.uid for p in cluster.pods]


def test_counts_and_unique_names(cluster: LoadedCluster) -> None:
    assert len(cluster.nodes) == 200
    assert len(cluster.pods) == 2000
    assert len({n.name for n in cluster.nodes}) == 200
    assert len({p.key for p in cluster.pods}) == 2000
    assert len({p.uid for p in cluster.pods} | {n.uid for n in cluster.nodes}) == 2200


def test_node_mix(cluster: LoadedCluster) -> None:
    nodes = cluster.nodes
    for node in nodes:
        assert node.labels["kubernetes.io/hostname"] == node.name
        assert node.labels["topology.kubernetes.io/zone"].startswith("us-east-1")
        assert node.labels["node.kubernetes.io/instance-type"]
        assert node.allocatable["pods"] == 110
        assert 3_000 <= node.allocatable["cpu"] <= 48_000
    assert len({n.labels["topology.kubernetes.io/zone"] for n in nodes}) == 3
    assert len({n.allocatable["cpu"] for n in nodes}) >= 4
    gpu_nodes = [n for n in nodes if n.allocatable.get(GPU)]
    assert len(gpu_nodes) == 10  # 5%
    for node in gpu_nodes:
        assert Taint("dedicated", "gpu", "NoSchedule") in node.taints
    cordoned = [n for n in nodes if n.unschedulable]
    assert len(cordoned) == 4  # 2%
    assert not {n.name for n in cordoned} & {n.name for n in gpu_nodes}


def test_pod_mix(cluster: LoadedCluster) -> None:
    pods = cluster.pods
    assert {p.scheduler_name for p in pods} == {"eventsched"}
    assert all(not p.node_name for p in pods)
    cpus = {p.requests["cpu"] for p in pods}
    memory = {p.requests["memory"] for p in pods}
    assert min(cpus) >= 100 and max(cpus) <= 2000 and len(cpus) >= 4
    assert min(memory) >= 128 * 2**20 and max(memory) <= 4 * 2**30 and len(memory) >= 4
    priorities = Counter(p.priority for p in pods)
    assert set(priorities) == {0, 1000}
    assert 0.05 < priorities[1000] / len(pods) < 0.3
    with_gpu = [p for p in pods if p.requests.get(GPU)]
    tolerating = [p for p in pods if p.tolerations]
    assert 0 < len(with_gpu) < len(tolerating) < len(pods) * 0.1
    assert all(p.tolerations for p in with_gpu)
    for pod in pods:
        assert pod.owner is not None and pod.owner.kind == "ReplicaSet"
        assert pod.name.startswith(pod.owner.name + "-")
        assert pod.labels["pod-template-hash"] == pod.owner.name.rsplit("-", 1)[1]
    assert len({p.namespace for p in pods}) >= 3
    assert len({p.created for p in pods}) == len(pods)  # creation order is total


def test_scheduler_name_is_configurable() -> None:
    cluster = generate_cluster(nodes=5, pods=20, seed=1, scheduler_name="other")
    assert {p.scheduler_name for p in cluster.pods} == {"other"}


def test_small_and_empty_clusters() -> None:
    assert generate_cluster(nodes=0, pods=0).nodes == []
    tiny = generate_cluster(nodes=2, pods=3)
    assert len(tiny.nodes) == 2 and len(tiny.pods) == 3
    assert not any(n.taints or n.unschedulable for n in tiny.nodes)
    with pytest.raises(ValueError, match="must be >= 0"):
        generate_cluster(nodes=-1, pods=0)


def test_manifests_round_trip_through_yaml(tmp_path: Path) -> None:
    """A generated cluster saved as YAML loads back as the same nodes and pods."""
    manifests = generate_manifests(nodes=30, pods=150, seed=3)
    path = tmp_path / "generated.yaml"
    path.write_text(yaml.safe_dump_all(manifests))
    loaded = load_manifests([path])
    expected = generate_cluster(nodes=30, pods=150, seed=3)
    assert loaded.nodes == expected.nodes
    assert loaded.pods == expected.pods
