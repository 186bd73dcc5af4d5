"""Node declared features: what a pod's spec requires of its node, and what a node declares.

component-helpers' `nodedeclaredfeatures` (k8s.io/component-helpers v0.35 to v0.37): each
registered feature says whether a pod needs it to be scheduled (`InferForScheduling`);
a node lists the features its kubelet has in `status.declaredFeatures`. Three features
can be required at scheduling, each from fields of the pod's spec (the others only
matter to updates of a running pod):

- RestartAllContainersOnContainerExits: a container or init container has a
  `restartPolicyRules[]` entry whose action is RestartAllContainers (v0.35 on);
- UserNamespacesHostNetworkSupport: `hostNetwork: true` with `hostUsers: false` (v0.36 on);
- VolumeBindMountOptions: a container, init container or ephemeral container mounts a
  volume with `bindMountOptions` (v0.37 on).

`required_node_features` reads a spec for all three, whatever version is decided as; the
NodeDeclaredFeatures plugin keeps those its version registers (`REGISTERED`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

RESTART_ALL_CONTAINERS = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK = "UserNamespacesHostNetworkSupport"
VOLUME_BIND_MOUNT_OPTIONS = "VolumeBindMountOptions"

#: Each version's registry (`features.AllFeatures`) by name, sorted as `Framework` sorts it
#: (Go compares strings bytewise).
REGISTERED: dict[str, tuple[str, ...]] = {
    "1.35": (
        "GuaranteedQoSPodCPUResize",
        "InPlacePodLevelResourcesVerticalScaling",
        RESTART_ALL_CONTAINERS,
    ),
    "1.36": (
        "ExtendWebSocketsToKubelet",
        "InPlacePodLevelResourcesVerticalScaling",
        "InPlacePodVerticalScalingInitContainers",
        RESTART_ALL_CONTAINERS,
        USER_NAMESPACES_HOST_NETWORK,
    ),
    "1.37": (
        "DRANodeAllocatableResources",
        "DRAOptionalNodeOperations",
        "ExtendWebSocketsToKubelet",
        "InPlacePodLevelResourcesVerticalScaling",
        "InPlacePodVerticalScalingInitContainers",
        "InPlacePodVerticalScalingMemoryBackedVolumes",
        RESTART_ALL_CONTAINERS,
        USER_NAMESPACES_HOST_NETWORK,
        VOLUME_BIND_MOUNT_OPTIONS,
    ),
}


def required_node_features(spec: Mapping[str, Any]) -> tuple[str, ...]:
    """The features `spec` requires of a node at scheduling, by name, sorted."""
    containers = _objects(spec.get("containers"))
    init = _objects(spec.get("initContainers"))
    ephemeral = _objects(spec.get("ephemeralContainers"))
    required = []
    if _restarts_all(containers) or _restarts_all(init):
        required.append(RESTART_ALL_CONTAINERS)
    if spec.get("hostNetwork") is True and spec.get("hostUsers") is False:
        required.append(USER_NAMESPACES_HOST_NETWORK)
    if any(_bind_mount_options(c) for c in (*containers, *init, *ephemeral)):
        required.append(VOLUME_BIND_MOUNT_OPTIONS)
    return tuple(sorted(required))


def declared_set(declared: Sequence[str], registered: Sequence[str]) -> frozenset[str]:
    """`FeatureMapper.TryMap` (v0.36 on): the registered features `declared` names, found by
    walking both lists together as upstream does, so a list the kubelet did not sort may
    miss some; names not registered are dropped."""
    found = set()
    i = j = 0
    while i < len(declared) and j < len(registered):
        if declared[i] == registered[j]:
            found.add(registered[j])
            i += 1
            j += 1
        elif declared[i] < registered[j]:
            i += 1
        else:
            j += 1
    return frozenset(found)


def _objects(raw: Any) -> list[Mapping[str, Any]]:
    return [c for c in raw or () if isinstance(c, Mapping)]


def _restarts_all(containers: Iterable[Mapping[str, Any]]) -> bool:
    return any(
        isinstance(rule, Mapping) and rule.get("action") == "RestartAllContainers"
        for c in containers
        for rule in c.get("restartPolicyRules") or ()
    )


def _bind_mount_options(container: Mapping[str, Any]) -> bool:
    return any(
        isinstance(mount, Mapping) and bool(mount.get("bindMountOptions"))
        for mount in container.get("volumeMounts") or ()
    )
