"""Turn workload objects into the pods their controllers would create.

The scheduler only ever sees pods, but people describe clusters with
Deployments and StatefulSets. Expanding them here, with the names, labels
and owner references the real controllers give their pods, lets the same
manifests drive both a real cluster and the simulation, and lets plugins
that look at owners (spreading, first placements per workload) behave as
they would in production.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from eventsched.cluster.naming import check_name, stable_token, template_hash
from eventsched.cluster.priorities import PriorityClasses
from eventsched.model import ManifestError

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet")

#: Makes a uid from a description of the object ("ReplicaSet/shop/web-x"); random when
#: loading manifests, a pure function of it (and the seed) when generating a cluster.
UidFactory = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class Expansion:
    """The pods one workload object stands for. `where` names the object in errors."""

    where: str
    pods: list[dict[str, Any]]
    #: The controller that owns the pods (the object itself, or the ReplicaSet a
    #: Deployment makes) with the selector it selects them by.
    controller: dict[str, Any]


@dataclass(frozen=True, slots=True)
class _Workload:
    kind: str
    namespace: str
    name: str
    uid: str
    replicas: int
    template: Mapping[str, Any]
    where: str
    #: spec.selector, or the template's labels where a hand-written manifest has none.
    selector: Mapping[str, Any]


def expand_workload(
    obj: Mapping[str, Any], new_uid: UidFactory, priorities: PriorityClasses | None = None
) -> Expansion:
    """Pod manifests for a Deployment, ReplicaSet or StatefulSet (without uid or timestamp)."""
    workload = _read_workload(obj, new_uid, priorities or PriorityClasses())
    if workload.kind == "Deployment":
        pods = _deployment_pods(workload, new_uid)
    elif workload.kind == "ReplicaSet":
        pods = _replicaset_pods(workload)
    else:
        pods = _statefulset_pods(workload)
    return Expansion(workload.where, pods, _controller(workload, pods))


def _controller(workload: _Workload, pods: list[dict[str, Any]]) -> dict[str, Any]:
    """The owning controller as the API would hold it: its kind, name and selector.

    A Deployment's ReplicaSet selects by the Deployment's selector plus
    `pod-template-hash`, as the deployment controller makes it.
    """
    selector = dict(workload.selector)
    if workload.kind == "Deployment":
        owner = pods[0]["metadata"]["ownerReferences"][0] if pods else None
        pod_hash = template_hash(workload.template)
        name = owner["name"] if owner else f"{workload.name}-{pod_hash}"
        labels = {**(selector.get("matchLabels") or {}), "pod-template-hash": pod_hash}
        selector = {**selector, "matchLabels": labels}
        kind = "ReplicaSet"
    else:
        name, kind = workload.name, workload.kind
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": workload.namespace},
        "spec": {"selector": selector},
    }


def _read_workload(
    obj: Mapping[str, Any], new_uid: UidFactory, priorities: PriorityClasses
) -> _Workload:
    kind = str(obj.get("kind"))
    meta = obj.get("metadata") or {}
    if not isinstance(meta, Mapping):
        raise ManifestError(kind, "metadata", "must be a mapping")
    name = check_name(kind, "metadata.name", meta.get("name"))
    namespace = check_name(
        f"{kind} {name}", "metadata.namespace", meta.get("namespace") or "default", label=True
    )
    where = f"{kind} {namespace}/{name}"
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        raise ManifestError(where, "spec", "is required (a mapping with replicas and template)")
    replicas = spec.get("replicas")
    if replicas is None:
        replicas = 1
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise ManifestError(where, "spec.replicas", f"must be an integer >= 0 (got {replicas!r})")
    template = spec.get("template")
    if not isinstance(template, Mapping) or not isinstance(template.get("spec"), Mapping):
        raise ManifestError(
            where, "spec.template", "is required (a pod template with metadata and spec)"
        )
    template_meta = template.get("metadata") or {}
    if not isinstance(template_meta, Mapping):
        raise ManifestError(where, "spec.template.metadata", "must be a mapping")
    labels = template_meta.get("labels") or {}
    if not isinstance(labels, Mapping):
        raise ManifestError(where, "spec.template.metadata.labels", "must be a mapping")
    _check_selector(spec, labels, where)
    resolved = priorities.resolve(template["spec"], where, prefix="spec.template.")
    return _Workload(
        kind=kind,
        namespace=namespace,
        name=name,
        uid=str(meta.get("uid") or new_uid(f"{kind}/{namespace}/{name}")),
        replicas=replicas,
        template={**template, "spec": resolved},
        where=where,
        selector=_selector(spec, labels),
    )


def _selector(spec: Mapping[str, Any], labels: Mapping[str, Any]) -> Mapping[str, Any]:
    selector = spec.get("selector")
    if isinstance(selector, Mapping):
        return selector
    return {"matchLabels": {str(k): str(v) for k, v in labels.items()}}


def _check_selector(spec: Mapping[str, Any], labels: Mapping[str, Any], where: str) -> None:
    """The API server rejects a workload whose selector would not select its own pods."""
    selector = spec.get("selector")
    if selector is None:
        return
    match_labels = selector.get("matchLabels") if isinstance(selector, Mapping) else None
    if not isinstance(match_labels, Mapping):
        return
    for key, value in match_labels.items():
        if str(labels.get(key)) != str(value):
            raise ManifestError(
                where,
                "spec.selector.matchLabels",
                f"{key}={value} does not match spec.template.metadata.labels "
                "(the selector must select the template's pods)",
            )


def _deployment_pods(workload: _Workload, new_uid: UidFactory) -> list[dict[str, Any]]:
    """Deployment -> ReplicaSet `NAME-<hash>` -> pods `NAME-<hash>-<suffix>`."""
    pod_hash = template_hash(workload.template)
    replicaset = f"{workload.name}-{pod_hash}"
    owner = _owner(
        "ReplicaSet", replicaset, new_uid(f"ReplicaSet/{workload.namespace}/{replicaset}")
    )
    names = _suffixed_names(workload.namespace, replicaset, workload.replicas)
    return [_pod(workload, name, owner, {"pod-template-hash": pod_hash}) for name in names]


def _replicaset_pods(workload: _Workload) -> list[dict[str, Any]]:
    owner = _owner("ReplicaSet", workload.name, workload.uid)
    names = _suffixed_names(workload.namespace, workload.name, workload.replicas)
    return [_pod(workload, name, owner, {}) for name in names]


def _statefulset_pods(workload: _Workload) -> list[dict[str, Any]]:
    """Ordinal names `NAME-0..N-1` and the labels the StatefulSet controller adds."""
    owner = _owner("StatefulSet", workload.name, workload.uid)
    revision = f"{workload.name}-{template_hash(workload.template)}"
    pods = []
    for index in range(workload.replicas):
        name = f"{workload.name}-{index}"
        extra = {
            "controller-revision-hash": revision,
            "statefulset.kubernetes.io/pod-name": name,
            "apps.kubernetes.io/pod-index": str(index),
        }
        pods.append(_pod(workload, name, owner, extra))
    return pods


def _suffixed_names(namespace: str, prefix: str, count: int) -> list[str]:
    """`prefix-<5 chars>`, distinct: a clash is retried, as the controller retries a taken name."""
    names: list[str] = []
    taken: set[str] = set()
    for index in range(count):
        attempt = 0
        while True:
            name = f"{prefix}-{stable_token(namespace, prefix, str(index), str(attempt))}"
            if name not in taken:
                break
            attempt += 1
        taken.add(name)
        names.append(name)
    return names


def _owner(kind: str, name: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _pod(
    workload: _Workload, name: str, owner: dict[str, Any], extra_labels: Mapping[str, str]
) -> dict[str, Any]:
    meta = workload.template.get("metadata") or {}
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": workload.namespace,
        "labels": {**(meta.get("labels") or {}), **extra_labels},
        "ownerReferences": [owner],
    }
    if meta.get("annotations"):
        metadata["annotations"] = dict(meta["annotations"])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": workload.template["spec"],
    }
