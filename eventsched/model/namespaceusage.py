"""What the pods placed in each namespace request, kept as pods come and go.

CapacityScheduling compares a namespace's usage with its ElasticQuota on every
attempt; summing every placed pod each time would cost O(pods). The NodeTable keeps
these sums once a plugin asks for them (`NodeTable.namespace_usage`), and updates them
wherever it counts a pod on a node: binding, assuming, forgetting, preemption's
what-ifs (`changed_pods`), so a what-if without some victims sees their namespace's
usage without them, as upstream's PreFilter extension RemovePod makes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from eventsched.model.counted import counted
from eventsched.model.pod import Pod
from eventsched.model.resources import Resources


class NamespaceUsage:
    """Namespace -> the summed requests (`counted.counted`) of its placed pods."""

    __slots__ = ("_added", "_used")

    def __init__(self, pods: Iterable[Pod] = ()) -> None:
        self._used: dict[str, Resources] = {}
        #: Per namespace, how many times a pod of it was placed (never decreases).
        self._added: dict[str, int] = {}
        for pod in pods:
            self.add(pod, 1)

    def add(self, pod: Pod, sign: int) -> None:
        if sign > 0:
            self._added[pod.namespace] = self._added.get(pod.namespace, 0) + 1
        used = self._used.setdefault(pod.namespace, {})
        for name, amount in counted(pod.requests).items():
            used[name] = used.get(name, 0) + sign * amount

    def of(self, namespace: str) -> Mapping[str, int]:
        """The namespace's usage (empty when no pod of it is placed); do not modify."""
        return self._used.get(namespace, {})

    def added(self) -> Mapping[str, int]:
        """Namespace -> how many times a pod of it was placed since the usage was first
        asked for; a namespace appears once one of its pods was; do not modify."""
        return self._added
