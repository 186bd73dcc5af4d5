"""The QoS class and per-container requests pods keep (v1qos.GetPodQOS, k8s v1.28), which
NodeResourceTopologyMatch reads."""

from __future__ import annotations

from typing import Any

import pytest

from eventsched.model import Pod
from eventsched.model.containers import BEST_EFFORT, BURSTABLE, GUARANTEED, ContainerRequests


def container(
    name: str, requests: dict[str, str], limits: dict[str, str] | None = None
) -> dict[str, Any]:
    return {"name": name, "resources": {"requests": requests, "limits": limits or {}}}


def pod(*containers: dict[str, Any], init: tuple[dict[str, Any], ...] = ()) -> Pod:
    spec: dict[str, Any] = {"containers": list(containers), "initContainers": list(init)}
    return Pod.from_manifest({"metadata": {"name": "p", "uid": "u"}, "spec": spec})


@pytest.mark.parametrize(
    ("containers", "init", "qos"),
    [
        # every container with cpu and memory limits equal to its requests
        ((container("a", {}, {"cpu": "2", "memory": "1Gi"}),), (), GUARANTEED),
        (
            (container("a", {"cpu": "2", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"}),),
            (container("i", {}, {"cpu": "1", "memory": "1Gi", "example.com/dev": "1"}),),
            GUARANTEED,
        ),
        # an init container without a memory limit: Burstable
        (
            (container("a", {}, {"cpu": "2", "memory": "1Gi"}),),
            (container("i", {"cpu": "1"}, {"cpu": "1"}),),
            BURSTABLE,
        ),
        ((container("a", {"cpu": "1"}, {"cpu": "2", "memory": "1Gi"}),), (), BURSTABLE),
        ((container("a", {"memory": "1Gi"}),), (), BURSTABLE),
        # devices and zero amounts do not count
        ((container("a", {"example.com/dev": "1", "cpu": "0"}),), (), BEST_EFFORT),
        ((container("a", {}),), (), BEST_EFFORT),
    ],
)
def test_a_pod_keeps_its_qos_class(
    containers: tuple[dict[str, Any], ...], init: tuple[dict[str, Any], ...], qos: str
) -> None:
    assert pod(*containers, init=init).qos == qos


def test_a_pod_keeps_each_containers_requests_and_logs_them() -> None:
    found = pod(
        container("a", {"cpu": "500m"}, {"cpu": "1", "memory": "1Gi"}),
        container("b", {"example.com/dev": "0"}),
        init=(container("i", {"cpu": "2"}),),
    )
    assert found.containers == (
        ContainerRequests("a", {"cpu": 500, "memory": 2**30}),
        ContainerRequests("b", {"example.com/dev": 0}),
    )
    assert found.init_containers == (ContainerRequests("i", {"cpu": 2000}),)
    record = found.to_record()
    assert record["qos"] == BURSTABLE
    assert Pod.from_record(record) == found
    # A BestEffort pod's record leaves the class out; it reads back as BestEffort.
    plain = pod(container("a", {}))
    assert "qos" not in plain.to_record() and Pod.from_record(plain.to_record()) == plain
