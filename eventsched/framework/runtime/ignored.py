"""The pod fields a profile may not honour: each is honoured by one kube-scheduler plugin,
and a profile without that plugin places a pod as if the field were absent."""

from __future__ import annotations

from collections.abc import Container
from typing import NamedTuple

from eventsched.model import Pod
from eventsched.model.pod import HOST_PORTS, POD_AFFINITY, POD_ANTI_AFFINITY, TOPOLOGY_SPREAD

#: The kube-scheduler plugin that honours each field a pod may set (Pod.uses).
HONOURED_BY: dict[str, str] = {
    POD_AFFINITY: "InterPodAffinity",
    POD_ANTI_AFFINITY: "InterPodAffinity",
    TOPOLOGY_SPREAD: "PodTopologySpread",
    HOST_PORTS: "NodePorts",
}


class IgnoredField(NamedTuple):
    field: str
    #: The plugin that would honour it, not in the profile.
    plugin: str


def ignored_fields(pod: Pod, plugins: Container[str]) -> list[IgnoredField]:
    """The fields `pod` sets that no plugin named in `plugins` honours."""
    return [
        IgnoredField(field, HONOURED_BY[field])
        for field in pod.uses
        if field in HONOURED_BY and HONOURED_BY[field] not in plugins
    ]
