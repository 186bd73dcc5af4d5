"""`eventsched simulate` counts a pod's resources as the Kubernetes version it is told.

The measured bug: a pod whose `spec.resources.requests.cpu` is 6 (its one container asks
for 1) was bound to a node of 4 cpu at every version, as v1.28 (which had no pod-level
resources) would. From v1.34 (PodLevelResources beta) kube-scheduler counts the pod's 6
cpu and refuses the node, with NodeResourcesFit's "Insufficient cpu", and, 6 being more
than the node's allocatable, UnschedulableAndUnresolvable (fit.go, v1.34 on). The
FailedScheduling message's framing (`0/1 nodes are available: ...`, the preemption
suffix) is the framework's, so only its reason is pinned here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import eventsched

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: small}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: default}
spec:
  schedulerName: eventsched
  resources: {requests: {cpu: "6"}}
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {requests: {cpu: "1"}}
"""


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    return tmp_path


@pytest.mark.parametrize("version", ["1.34", "1.37"])
def test_a_pod_level_request_beyond_the_node_is_refused(
    manifests: Path, db_url: str, version: str
) -> None:
    done = eventsched("simulate", str(manifests), "--kubernetes-version", version, db=db_url)
    assert done.returncode == 0, done.stderr
    assert "0 of 1 pending pods bound, 1 unschedulable, on 1 nodes" in done.stdout
    (line,) = [x for x in done.stdout.splitlines() if x.strip().startswith("default/big:")]
    assert line.strip().startswith("default/big: 0/1 nodes are available: 1 Insufficient cpu.")
    explained = json.loads(eventsched("explain", "default/big", "--json", db=db_url).stdout)
    (attempt,) = explained["attempts"]
    assert attempt["outcome"] == "unschedulable" and explained["final_node"] is None
    (rejection,) = attempt["rejections"]
    assert (rejection["plugin"], rejection["code"], rejection["reasons"]) == (
        "NodeResourcesFit",
        "UnschedulableAndUnresolvable",
        ["Insufficient cpu"],
    )


def test_at_v1_28_the_pod_asks_for_its_containers_cpu(manifests: Path, db_url: str) -> None:
    """v1.28 has no `spec.resources` (its API server drops the field): the pod asks for 1."""
    done = eventsched("simulate", str(manifests), "--kubernetes-version", "1.28", db=db_url)
    assert done.returncode == 0, done.stderr
    assert "1 of 1 pending pods bound, 0 unschedulable, on 1 nodes" in done.stdout
    explained = json.loads(eventsched("explain", "default/big", "--json", db=db_url).stdout)
    assert explained["final_node"] == "small"
