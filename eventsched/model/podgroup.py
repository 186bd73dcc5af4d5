"""A gang (Coscheduling's pod group): the label that names it and the annotation with its
minimum, as the plugin and the log's readers (explain, the gang page) both read them.

A gang is the pods of one namespace carrying the same pod-group label; its
min-available count comes from their min-available annotation (or the plugin's
`defaultMinAvailable` arg).
"""

from __future__ import annotations

from collections.abc import Mapping

from eventsched.model.pod import Pod

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
MIN_AVAILABLE_ANNOTATION = "scheduling.x-k8s.io/min-available"


def group_of(pod: Pod) -> str | None:
    """`namespace/group` of a gang member, None for a pod outside any gang."""
    return group_in(pod.namespace, pod.labels)


def group_in(namespace: str, labels: Mapping[str, str]) -> str | None:
    """`namespace/group` named by a pod's labels, None when they name no group."""
    name = labels.get(POD_GROUP_LABEL, "")
    return f"{namespace}/{name}" if name else None
