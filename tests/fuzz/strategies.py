"""Inputs a user or a cluster can send, mostly right and a little wrong."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

#: Scalars of every JSON/YAML type, with the awkward ones: huge, negative, unicode, empty.
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["", "-1", "1e400", "100Gi", "-100m", "0.5", "1.5x", "Ki", "\u00e9", "\x00"])
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def _set(obj: dict[str, Any], path: tuple[str | int, ...], value: Any) -> None:
    """Put `value` at `path`, making the mappings on the way; DELETE removes the key."""
    target: Any = obj
    for key in path[:-1]:
        if isinstance(key, int):
            if not (isinstance(target, list) and len(target) > key):
                return
            target = target[key]
            continue
        if not isinstance(target, dict):
            return
        if not isinstance(target.get(key), dict | list):
            target[key] = {}
        target = target[key]
    last = path[-1]
    if not (isinstance(last, str) and isinstance(target, dict)):
        return
    if value is DELETE:
        target.pop(last, None)
    else:
        target[last] = value


DELETE = object()

POD_PATHS: list[tuple[str | int, ...]] = [
    ("metadata",),
    ("metadata", "name"),
    ("metadata", "namespace"),
    ("metadata", "uid"),
    ("metadata", "labels"),
    ("metadata", "annotations"),
    ("metadata", "annotations", "eventsched.io/importance"),
    ("metadata", "annotations", "eventsched.io/preferred-node"),
    ("metadata", "annotations", "eventsched.io/requires"),
    ("metadata", "annotations", "scheduling.x-k8s.io/min-available"),
    ("metadata", "annotations", "eventsched.io/identity"),
    ("metadata", "labels", "scheduling.x-k8s.io/pod-group"),
    ("metadata", "ownerReferences"),
    ("metadata", "creationTimestamp"),
    ("metadata", "deletionTimestamp"),
    ("spec",),
    ("spec", "containers"),
    ("spec", "containers", 0, "resources"),
    ("spec", "containers", 0, "resources", "requests"),
    ("spec", "containers", 0, "resources", "requests", "cpu"),
    ("spec", "containers", 0, "resources", "requests", "memory"),
    ("spec", "containers", 0, "resources", "limits", "cpu"),
    ("spec", "containers", 0, "ports"),
    ("spec", "initContainers"),
    ("spec", "overhead"),
    ("spec", "priority"),
    ("spec", "schedulerName"),
    ("spec", "nodeName"),
    ("spec", "nodeSelector"),
    ("spec", "tolerations"),
    ("spec", "affinity"),
    ("spec", "affinity", "nodeAffinity"),
    ("spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"),
    ("spec", "affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution"),
    ("spec", "schedulingGates"),
    ("spec", "topologySpreadConstraints"),
    ("status",),
    ("status", "phase"),
    ("status", "nominatedNodeName"),
]

#: What the accounting of v1.32+ reads besides: pod-level requests, a resized pod's status.
RESOURCE_PATHS: list[tuple[str | int, ...]] = [
    ("spec", "containers", 0, "resources", "requests", "cpu"),
    ("spec", "initContainers"),
    ("spec", "resources"),
    ("spec", "resources", "requests"),
    ("spec", "resources", "requests", "cpu"),
    ("status",),
    ("status", "containerStatuses"),
    ("status", "conditions"),
    ("status", "resources"),
    ("status", "resources", "requests"),
    ("status", "allocatedResources"),
    ("status", "resize"),
]

NODE_PATHS: list[tuple[str | int, ...]] = [
    ("metadata",),
    ("metadata", "name"),
    ("metadata", "labels"),
    ("metadata", "labels", "kubernetes.io/hostname"),
    ("spec",),
    ("spec", "taints"),
    ("spec", "unschedulable"),
    ("status",),
    ("status", "allocatable"),
    ("status", "allocatable", "cpu"),
    ("status", "allocatable", "memory"),
    ("status", "allocatable", "pods"),
]


#: A pod as the API server lists it, setting every field the model reads, and others.
RICH_POD: dict[str, Any] = {
    "metadata": {
        "name": "rich",
        "namespace": "team",
        "uid": "u-1",
        "resourceVersion": "7",
        "labels": {"app": "web"},
        "annotations": {"eventsched.io/importance": "7"},
        "ownerReferences": [{"kind": "ReplicaSet", "name": "web", "uid": "rs", "controller": True}],
        "creationTimestamp": "2026-11-25T10:00:00Z",
        "deletionTimestamp": "2026-11-25T11:00:00Z",
        "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
    },
    "spec": {
        "schedulerName": "eventsched",
        "nodeName": "a",
        "priority": 100,
        "preemptionPolicy": "Never",
        "nodeSelector": {"disk": "ssd"},
        "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}],
        "affinity": {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 5, "preference": {"matchExpressions": []}}
                ]
            },
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "web"}}}
                ]
            },
        },
        "schedulingGates": [{"name": "wait"}],
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
        ],
        "volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "model", "image": {"reference": "models/llm:1", "pullPolicy": "Always"}},
        ],
        "overhead": {"cpu": "10m"},
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2"}},
        "hostNetwork": True,
        "hostUsers": False,
        "initContainers": [
            {
                "name": "init",
                "image": "busybox",
                "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                "restartPolicyRules": [
                    {"action": "RestartAllContainers", "exitCodes": {"operator": "In"}}
                ],
            },
            {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "50m"}}},
        ],
        "ephemeralContainers": [
            {"name": "debug", "volumeMounts": [{"name": "data", "bindMountOptions": ["rro"]}]}
        ],
        "containers": [
            {
                "name": "c",
                "image": "nginx:1",
                "command": ["nginx"],
                "env": [{"name": "MODE", "value": "web"}],
                "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],
                "resources": {
                    "requests": {"cpu": "250m", "memory": "64Mi", "example.com/gpu": "1"},
                    "limits": {"cpu": "250m", "memory": "64Mi", "example.com/gpu": "1"},
                },
            }
        ],
    },
    "status": {
        "phase": "Running",
        "nominatedNodeName": "b",
        "startTime": "2026-11-25T10:00:05Z",
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None},
            {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"},
            {"type": "PodResizePending", "status": "True", "reason": "Deferred"},
        ],
        "containerStatuses": [
            {
                "name": "c",
                "ready": True,
                "restartCount": 0,
                "allocatedResources": {"cpu": "250m", "memory": "64Mi"},
                "resources": {"requests": {"cpu": "300m", "memory": "64Mi"}},
            }
        ],
        "initContainerStatuses": [
            {"name": "side", "allocatedResources": {"cpu": "50m"}, "resources": {}},
        ],
        "allocatedResources": {"cpu": "1", "memory": "1Gi"},
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
        "resize": "InProgress",
        "qosClass": "Guaranteed",
    },
}


#: A node as the API server lists it, setting every field the model reads, and others.
RICH_NODE: dict[str, Any] = {
    "metadata": {
        "name": "rich",
        "uid": "n-1",
        "resourceVersion": "42",
        "labels": {"kubernetes.io/hostname": "rich", "zone": "a"},
        "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        "managedFields": [{"manager": "kubelet", "fieldsV1": {"f:status": {}}}],
    },
    "spec": {
        "podCIDR": "10.0.0.0/24",
        "unschedulable": True,
        "taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}],
    },
    "status": {
        "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
        "allocatable": {"cpu": "7500m", "memory": "30Gi", "pods": "110"},
        "images": [{"names": ["nginx:1", "nginx@sha256:00"], "sizeBytes": 1000}],
        "declaredFeatures": ["RestartAllContainersOnContainerExits"],
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
        "nodeInfo": {"kubeletVersion": "v1.28.0"},
    },
}


def valid_pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "schedulerName": "eventsched",
            "containers": [
                {"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
            ],
        },
    }


def resized_pod(name: str) -> dict[str, Any]:
    """A running pod with pod-level requests and a status that reports its resources."""
    pod = valid_pod(name)
    pod["spec"]["resources"] = {"requests": {"cpu": "300m"}}
    pod["spec"]["initContainers"] = [{"name": "s", "restartPolicy": "Always"}]
    pod["status"] = {
        "phase": "Running",
        "containerStatuses": [
            {
                "name": "c",
                "allocatedResources": {"cpu": "200m"},
                "resources": {"requests": {"cpu": "150m"}},
            }
        ],
        "conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
        "allocatedResources": {"cpu": "250m"},
        "resources": {"requests": {"cpu": "250m"}},
    }
    return pod


def valid_node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


@st.composite
def mutated(
    draw: st.DrawFn, base: dict[str, Any], paths: list[tuple[str | int, ...]]
) -> dict[str, Any]:
    """A copy of `base` with a few of `paths` replaced by anything, or removed (each
    example starts from `base` as given, not from the examples before it)."""
    obj: dict[str, Any] = copy.deepcopy(base)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(paths))
        _set(obj, path, draw(st.just(DELETE) | values))
    return obj


@st.composite
def clusters(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A node and a pod that are fine, and a mutated node and pod."""
    return [
        valid_node("good-node"),
        draw(mutated(valid_node("odd-node"), NODE_PATHS)),
        valid_pod("good-pod"),
        draw(mutated(valid_pod("odd-pod"), POD_PATHS)),
    ]
