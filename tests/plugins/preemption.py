"""Helpers for the DefaultPreemption tests: upstream's test pods and a resource-only fit.

Sizes and priorities are those of default_preemption_test.go (v1.28): smallRes
100m/100, mediumRes 200m/200, largeRes 300m/300, veryLargeRes 500m/500; nodes made
with `st.MakeNode().Capacity(...)` also allow 32 pods. `ResourceFit` stands in for
NodeResourcesFit's Filter: the preemptor fits a node when its allocatable minus the
requests of the pods left on it covers the preemptor's requests and one more pod.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eventsched.framework import Status
from eventsched.model import Node, Pod
from eventsched.model.disruption import PodDisruptionBudget
from eventsched.model.selectors import LabelRequirement, LabelSelector
from eventsched.plugins.defaultpreemption import FitsWithout

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}


def epoch(ns: int) -> str:
    """`metav1.NewTime(time.Unix(0, ns))` as RFC 3339 with nanoseconds."""
    return f"1970-01-01T00:00:00.{ns:09d}Z"


def pod(
    name: str,
    priority: int = 0,
    req: Mapping[str, str] | None = None,
    node: str = "",
    start: str = "",
    labels: Mapping[str, str] | None = None,
    **extra: Any,
) -> Pod:
    """`st.MakePod().Name(name).UID(name).Priority(..).Req(..).Node(..).StartTime(..)`."""
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": name}
    if labels:
        meta["labels"] = dict(labels)
    if extra.pop("terminating", False):
        meta["deletionTimestamp"] = "2023-01-01T00:00:00Z"
    status: dict[str, Any] = extra.pop("status", {})
    if start:
        status["startTime"] = start
    spec = {
        "containers": [{"name": "c", "resources": {"requests": dict(req or {})}}],
        "priority": priority,
        **({"nodeName": node} if node else {}),
        **extra,
    }
    return Pod.from_manifest({"metadata": meta, "spec": spec, "status": status})


def node(name: str, capacity: Mapping[str, str] = VERY_LARGE) -> Node:
    """`st.MakeNode().Name(name).Capacity(capacity)` (32 pods unless capacity says)."""
    allocatable = {"pods": "32", **capacity}
    return Node.from_manifest({"metadata": {"name": name}, "status": {"allocatable": allocatable}})


def pdb(
    match: Mapping[str, str], allowed: int, disrupted: Sequence[str] = (), name: str = "pdb"
) -> PodDisruptionBudget:
    """A budget selecting `match` labels in "default", with its status fields."""
    selector = LabelSelector(
        tuple(LabelRequirement(k, "In", frozenset({v})) for k, v in match.items())
    )
    return PodDisruptionBudget("default", name, selector, allowed, frozenset(disrupted))


@dataclass
class ResourceFit:
    """NodeResourcesFit's Filter over cpu, memory and pods, counting its calls."""

    nodes: Mapping[str, Node]
    pods: Mapping[str, Sequence[Pod]]
    preemptor: Pod
    calls: int = 0

    def fits_on(self, name: str) -> FitsWithout:
        def fits(removed: Sequence[Pod]) -> Status:
            self.calls += 1
            return self.status(name, removed)

        return fits

    def status(self, name: str, removed: Sequence[Pod]) -> Status:
        gone = {id(p) for p in removed}
        left = [p for p in self.pods.get(name, ()) if id(p) not in gone]
        allocatable = self.nodes[name].allocatable
        reasons = []
        if len(left) + 1 > allocatable.get("pods", 0):
            reasons.append("Too many pods")
        for resource in ("cpu", "memory"):
            want = self.preemptor.requests.get(resource, 0)
            used = sum(p.requests.get(resource, 0) for p in left)
            if want and used + want > allocatable.get(resource, 0):
                reasons.append(f"Insufficient {resource}")
        return Status.unschedulable(*reasons) if reasons else Status()


def by_node(pods: Sequence[Pod]) -> dict[str, list[Pod]]:
    grouped: dict[str, list[Pod]] = {}
    for p in pods:
        grouped.setdefault(p.node_name, []).append(p)
    return grouped
