"""Per-container requests and the pod's QoS class, for the NUMA-aware plugins.

Most plugins read a pod's effective requests only (`Pod.requests`).
NodeResourceTopologyMatch follows the kubelet's topology manager, which admits
container by container (init containers first), and it treats Guaranteed pods
apart; so a pod also keeps each container's requests, in spec order, and its
QoS class as `v1qos.GetPodQOS` (k8s v1.28) computes it from the spec.

Requests are the API server's: a request left out defaults to its limit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from eventsched.model.resources import CPU, MEMORY, Resources
from eventsched.model.valueclass import value_class

GUARANTEED = "Guaranteed"
BURSTABLE = "Burstable"
BEST_EFFORT = "BestEffort"
_QOS_RESOURCES = (CPU, MEMORY)


@value_class
class ContainerRequests:
    """One container's name and requests (CPU millicores, other resources base units)."""

    name: str
    requests: Mapping[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "requests": dict(self.requests)}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> ContainerRequests:
        return cls(
            str(raw.get("name", "")),
            {str(k): int(v) for k, v in (raw.get("requests") or {}).items()},
        )


def pod_qos(containers: Sequence[tuple[Resources, Resources]]) -> str:
    """`v1qos.GetPodQOS` over (requests, limits) of every container, app and init.

    Only cpu and memory count, and only positive amounts. Guaranteed: every
    container has a cpu and a memory limit, and the summed requests equal the
    summed limits resource by resource; BestEffort: no request and no limit.
    """
    requests: Resources = {}
    limits: Resources = {}
    guaranteed = True
    for container_requests, container_limits in containers:
        for name, amount in container_requests.items():
            if name in _QOS_RESOURCES and amount > 0:
                requests[name] = requests.get(name, 0) + amount
        found = set()
        for name, amount in container_limits.items():
            if name in _QOS_RESOURCES and amount > 0:
                found.add(name)
                limits[name] = limits.get(name, 0) + amount
        if not found.issuperset(_QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return BEST_EFFORT
    if guaranteed and any(limits.get(name) != amount for name, amount in requests.items()):
        guaranteed = False
    if guaranteed and len(requests) == len(limits):
        return GUARANTEED
    return BURSTABLE
