"""Builders for the NodeResourceTopologyMatch tests: NRT manifests, nodes, pods, a table."""

from __future__ import annotations

from typing import Any

import numpy as np

from eventsched.framework import CycleState, Handle, Status
from eventsched.framework.adapters import filter_rows, score_rows
from eventsched.model import Node, NodeTable, Pod
from eventsched.plugins.noderesourcetopology import NodeResourceTopologyMatch
from eventsched.plugins.noderesourcetopology.topology import NodeResourceTopology

NIC = "vendor.com/nic"
GPU = "vendor.com/gpu"
HUGEPAGES_2MI = "hugepages-2Mi"


def zone(
    numa: int | str, available: dict[str, Any], costs: dict[int, int] | None = None
) -> dict[str, Any]:
    """A `Node` zone `node-<numa>` (or the name given) with these available amounts."""
    resources = [
        {"name": k, "capacity": v, "allocatable": v, "available": v} for k, v in available.items()
    ]
    obj: dict[str, Any] = {
        "name": numa if isinstance(numa, str) else f"node-{numa}",
        "type": "Node",
        "resources": resources,
    }
    if costs:
        obj["costs"] = [{"name": f"node-{i}", "value": v} for i, v in costs.items()]
    return obj


def nrt(
    node: str,
    *zones: dict[str, Any],
    policy: str | None = "single-numa-node",
    scope: str | None = "container",
    policies: list[str] | None = None,
) -> NodeResourceTopology:
    attributes = []
    if policy is not None:
        attributes.append({"name": "topologyManagerPolicy", "value": policy})
    if scope is not None:
        attributes.append({"name": "topologyManagerScope", "value": scope})
    obj: dict[str, Any] = {
        "kind": "NodeResourceTopology",
        "metadata": {"name": node},
        "zones": list(zones),
        "attributes": attributes,
    }
    if policies is not None:
        obj["topologyPolicies"] = policies
    return NodeResourceTopology.from_manifest(obj)


def node_for(topology: NodeResourceTopology, extra: dict[str, Any] | None = None) -> Node:
    """A node whose allocatable sums its zones' (upstream's makeResourceListFromZones)."""
    total: dict[str, int] = {}
    for z in topology.zones:
        for r in z.resources:
            total[r.name] = total.get(r.name, 0) + r.allocatable
    allocatable: dict[str, Any] = {k: (f"{v}m" if k == "cpu" else v) for k, v in total.items()}
    allocatable.update(extra or {})
    return Node.from_manifest(
        {"metadata": {"name": topology.name}, "status": {"allocatable": allocatable}}
    )


def table(*pairs: tuple[Node, NodeResourceTopology | None]) -> NodeTable:
    t = NodeTable([n for n, _ in pairs])
    for _, topology in pairs:
        if topology is not None:
            t.objects.upsert(topology)
    return t


def pod(
    *containers: dict[str, Any],
    init: tuple[dict[str, Any], ...] = (),
    limits: list[dict[str, Any]] | None = None,
    guaranteed: bool = True,
) -> Pod:
    """One container per request map; guaranteed: limits equal to requests (upstream's
    makePodByResourceList), else requests only unless `limits` are given."""

    def spec(i: int, requests: dict[str, Any], prefix: str, lim: dict[str, Any] | None) -> Any:
        resources: dict[str, Any] = {"requests": requests}
        if guaranteed:
            resources["limits"] = requests
        elif lim is not None:
            resources["limits"] = lim
        return {"name": f"{prefix}{i}", "resources": resources}

    body: dict[str, Any] = {
        "containers": [
            spec(i, c, "c", limits[i] if limits else None) for i, c in enumerate(containers)
        ],
        "initContainers": [spec(i, c, "i", None) for i, c in enumerate(init)],
    }
    return Pod.from_manifest({"metadata": {"name": "p", "uid": "u"}, "spec": body})


def make(
    args: dict[str, Any] | None = None, t: NodeTable | None = None
) -> NodeResourceTopologyMatch:
    return NodeResourceTopologyMatch(args or {}, Handle(t))


def filter_all(t: NodeTable, p: Pod, args: dict[str, Any] | None = None) -> list[Status | None]:
    result = filter_rows(make(args, t), CycleState(), p, t, np.arange(len(t)))
    return [None if v < 0 else result.statuses[v] for v in result.verdict]


def score_all(t: NodeTable, p: Pod, args: dict[str, Any] | None = None) -> list[int]:
    return [int(s) for s in score_rows(make(args, t), CycleState(), p, t, np.arange(len(t)))]
