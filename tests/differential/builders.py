"""Small Kubernetes manifests for differential scenarios, written as a user would write them.

Every manifest here is what the recorder sends to kube-apiserver and what the eventsched
side reads (after `admitted`, which adds what the API server's admission adds), so the
generator writes only fields that round-trip unchanged: canonical quantities, explicit
protocols, no fields that v1.28 drops behind a disabled feature gate (sidecar init
containers' `restartPolicy`).
"""

from __future__ import annotations

from typing import Any

Manifest = dict[str, Any]

IMAGE = "registry.k8s.io/pause:3.9"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
#: What DefaultTolerationSeconds (an admission plugin enabled by default) adds to every pod
#: that does not already tolerate these NoExecute taints.
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300


def node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    zone: str | None = None,
    region: str | None = None,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
    images: list[dict[str, Any]] | None = None,
    extra: dict[str, str] | None = None,
) -> Manifest:
    """A Node: hostname label, optional zone/region, allocatable, taints, images."""
    all_labels = {HOSTNAME: name}
    if zone is not None:
        all_labels[ZONE] = zone
    if region is not None:
        all_labels[REGION] = region
    all_labels.update(labels or {})
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    allocatable = {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})}
    status: dict[str, Any] = {"allocatable": allocatable, "capacity": dict(allocatable)}
    if images:
        status["images"] = images
    manifest: Manifest = {"metadata": {"name": name, "labels": all_labels}, "status": status}
    if spec:
        manifest["spec"] = spec
    return manifest


def container(
    name: str = "c",
    *,
    cpu: str | None = None,
    memory: str | None = None,
    extra: dict[str, str] | None = None,
    image: str = IMAGE,
    ports: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A container with requests (extended resources get limits equal to requests, as the
    API requires for resources that cannot be overcommitted)."""
    requests: dict[str, str] = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    requests.update(extra or {})
    out: dict[str, Any] = {"name": name, "image": image}
    if requests:
        resources: dict[str, Any] = {"requests": requests}
        overcommit_free = {k: v for k, v in (extra or {}).items() if "/" in k}
        if overcommit_free:
            resources["limits"] = overcommit_free
        out["resources"] = resources
    if ports:
        out["ports"] = ports
    return out


def pod(
    name: str,
    *,
    namespace: str = "default",
    node_name: str | None = None,
    cpu: str | None = None,
    memory: str | None = None,
    extra: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    containers: list[dict[str, Any]] | None = None,
    **spec_fields: Any,
) -> Manifest:
    """A Pod; `spec_fields` are spec keys in camelCase given as snake_case or verbatim
    (`nodeSelector`, `tolerations`, `affinity`, `topologySpreadConstraints`, ...)."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    owner = spec_fields.pop("owner", None)
    if owner is not None:
        meta["ownerReferences"] = [owner]
    spec: dict[str, Any] = {}
    if node_name is not None:
        spec["nodeName"] = node_name
    spec["containers"] = containers or [container(cpu=cpu, memory=memory, extra=extra)]
    for key, value in spec_fields.items():
        if value is not None and value != [] and value != {}:
            spec[key] = value
    return {"metadata": meta, "spec": spec}


def taint(key: str, effect: str, value: str | None = None) -> dict[str, str]:
    out = {"key": key, "effect": effect}
    if value is not None:
        out["value"] = value
    return out


def owner_ref(kind: str, name: str, api_version: str = "apps/v1") -> dict[str, Any]:
    """A controller reference; kube-scheduler looks the controller up by name, so the uid
    (required by the API) is a fixed placeholder."""
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": "00000000-0000-0000-0000-000000000001",
        "controller": True,
    }


def namespace(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"name": name, "labels": labels or {}}


def service(name: str, selector: dict[str, str], namespace: str = "default") -> Manifest:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": selector, "ports": [{"port": 80, "protocol": "TCP"}]},
    }


def replica_set(name: str, labels: dict[str, str], namespace: str = "default") -> Manifest:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": IMAGE}]},
            },
        },
    }


def priority_class(name: str, value: int) -> Manifest:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "preemptionPolicy": "Never",
    }


def runtime_class(name: str, overhead: dict[str, str]) -> Manifest:
    return {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": name},
        "handler": "runc",
        "overhead": {"podFixed": overhead},
    }


def admitted(manifest: Manifest) -> Manifest:
    """The pod as kube-apiserver stores it, in the fields a scheduler reads: admission's
    DefaultTolerationSeconds adds NoExecute tolerations of not-ready and unreachable (300 s)
    unless the pod tolerates them already (`plugin/pkg/admission/defaulttolerationseconds`)."""
    spec = dict(manifest.get("spec") or {})
    tolerations = list(spec.get("tolerations") or [])
    for key in (NOT_READY, UNREACHABLE):
        if not any(_tolerates_no_execute(t, key) for t in tolerations):
            tolerations.append(
                {
                    "key": key,
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
                }
            )
    spec["tolerations"] = tolerations
    return {**manifest, "spec": spec}


def _tolerates_no_execute(toleration: dict[str, Any], key: str) -> bool:
    key_ok = toleration.get("key", "") in (key, "")
    effect_ok = toleration.get("effect", "") in ("NoExecute", "")
    return key_ok and effect_ok
