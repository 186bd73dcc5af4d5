"""Value classes: built as plain dataclasses, equal, hashed and replaced as frozen ones are,
and refused any field assignment by the type checker."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest
from mypy import api as mypy_api

from eventsched.model.accounting import Accounting
from eventsched.model.containers import ContainerRequests
from eventsched.model.pod import OwnerRef, Pod
from eventsched.model.taints import Toleration

ROOT = Path(__file__).resolve().parents[2]

#: A pod with every field away from its default, so that a field dropped or moved shows.
MANIFEST = {
    "metadata": {
        "name": "web-1",
        "namespace": "shop",
        "uid": "u-1",
        "labels": {"app": "web"},
        "annotations": {"a": "b"},
        "creationTimestamp": "2026-11-27T12:00:00Z",
        "ownerReferences": [
            {"kind": "ReplicaSet", "name": "web", "uid": "rs-1", "controller": True}
        ],
        "deletionTimestamp": "2026-11-27T13:00:00Z",
    },
    "spec": {
        "schedulerName": "eventsched",
        "nodeName": "node-a",
        "priority": 7,
        "preemptionPolicy": "Never",
        "nodeSelector": {"disk": "ssd"},
        "affinity": {"nodeAffinity": {}},
        "schedulingGates": [{"name": "wait"}],
        "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}],
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
        ],
        "containers": [
            {
                "name": "app",
                "image": "registry.example.com/web:1.0",
                "ports": [{"containerPort": 80, "hostPort": 8080}],
                "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}},
            }
        ],
        "initContainers": [
            {
                "name": "init",
                "image": "busybox",
                "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                "restartPolicyRules": [{"action": "RestartAllContainers"}],
            },
            {"name": "side", "restartPolicy": "Always"},
        ],
        "resources": {"requests": {"cpu": "2"}},
        "volumes": [{"name": "model", "image": {"reference": "models/llm:1"}}],
    },
    "status": {
        "phase": "Running",
        "nominatedNodeName": "node-b",
        "startTime": "2026-11-27T12:01:00Z",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/3 nodes are available: 3 Insufficient cpu.",
            }
        ],
    },
}


#: v1.34's: pod-level resources count (and NodeResourcesFit scores the containers').
V134 = Accounting(pod_level=True, non_missing=True, fit_score_skips_pod_level=True)


@pytest.fixture
def pod() -> Pod:
    return Pod.from_manifest(MANIFEST, accounting=V134)


def test_every_field_of_the_sample_pod_differs_from_its_default(pod: Pod) -> None:
    defaults = Pod(uid="", namespace="", name="")
    same = [
        f.name
        for f in dataclasses.fields(Pod)
        if f.name not in ("disruption_target", "qos", "terminal", "volumes", "uses")
        and getattr(pod, f.name) == getattr(defaults, f.name)
    ]
    assert same == []


def test_with_node_is_replace_of_the_node_name_only(pod: Pod) -> None:
    moved = pod.with_node("node-z")
    assert moved == dataclasses.replace(pod, node_name="node-z")
    assert moved.node_name == "node-z" and pod.node_name == "node-a"
    assert moved.requests is pod.requests  # values are shared, as replace shares them


def test_records_read_back_equal_and_equal_pods_are_interchangeable(pod: Pod) -> None:
    again = Pod.from_record(pod.to_record())
    assert again == Pod.from_record(again.to_record())
    assert again != again.with_node("elsewhere")


def test_hashing_follows_the_fields_as_for_a_frozen_dataclass() -> None:
    first = Toleration("k", "Equal", "v", "NoSchedule")
    assert {first, Toleration("k", "Equal", "v", "NoSchedule")} == {first}
    assert hash(OwnerRef("ReplicaSet", "web", "rs-1")) == hash(
        OwnerRef("ReplicaSet", "web", "rs-1")
    )
    with pytest.raises(TypeError, match="unhashable"):
        hash(ContainerRequests("app", {"cpu": 1}))  # a dict field, as before


def test_the_type_checker_refuses_assigning_a_field(tmp_path: Path) -> None:
    snippet = tmp_path / "assigns.py"
    snippet.write_text(
        textwrap.dedent(
            """
            from eventsched.model.pod import Pod
            from eventsched.model.taints import Toleration

            def move(pod: Pod, toleration: Toleration) -> None:
                pod.node_name = "elsewhere"
                toleration.key = "other"
            """
        )
    )
    out, _, status = mypy_api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--follow-imports=silent",
            str(snippet),
        ]
    )
    assert status == 1, out
    assert 'Property "node_name" defined in "Pod" is read-only' in out
    assert 'Property "key" defined in "Toleration" is read-only' in out
