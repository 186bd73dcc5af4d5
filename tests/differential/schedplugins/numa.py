"""Hand-written NodeResourceTopologyMatch scenarios under the chart's profile.

Every node carries a NodeResourceTopology named after it (the objects an NRT agent such
as the resource-topology-exporter would publish) with two or more NUMA zones. The nodes
of a case are equal at node level (allocatable and what runs there), so that every other
score plugin ties and NodeResourceTopologyMatch alone decides where a pod lands; each
case's pending pods are Guaranteed (requests equal limits) unless it says otherwise. The
reference's cache is the passthrough one (the chart sets no cacheResyncPeriodSeconds): it
reads the NRTs as published, and nothing here updates them after a binding, so a pod
placed earlier in a case changes no zone's `available`.

A case may give NodeResourceTopologyMatch's args (its scoring strategy); the recorder and
the comparison both run the chart's profile with them (profile.py).
"""

from __future__ import annotations

from typing import Any

from tests.differential.builders import pod
from tests.differential.preemption.builder import Case

Resources = dict[str, str]
PLUGIN = "NodeResourceTopologyMatch"


def _guaranteed(name: str, requests: Resources) -> dict[str, Any]:
    return {
        "name": name,
        "image": "registry.k8s.io/pause:3.9",
        "resources": {"requests": dict(requests), "limits": dict(requests)},
    }


def _zone(numa: int, available: Resources, allocatable: Resources) -> dict[str, Any]:
    return {
        "name": f"node-{numa}",
        "type": "Node",
        "resources": [
            {"name": k, "capacity": allocatable[k], "allocatable": allocatable[k], "available": v}
            for k, v in available.items()
        ],
    }


class NumaCase(Case):
    """A Case whose nodes have NRTs and whose pods name their containers' resources."""

    def __init__(self, slug: str, description: str, strategy: str | None = None) -> None:
        super().__init__(slug, description)
        self.topologies: list[dict[str, Any]] = []
        self.args: dict[str, Any] = {}
        if strategy is not None:
            self.args = {PLUGIN: {"scoringStrategy": {"type": strategy}}}

    def numa_node(
        self,
        name: str,
        *available: Resources,
        cell: Resources | None = None,
        scope: str = "container",
        policy: str = "single-numa-node",
        policies: list[str] | None = None,
    ) -> NumaCase:
        """A node of `len(available)` equal zones of `cell` (4 cpu, 8Gi by default), each
        with what is still `available` in it; allocatable is the zones' sum. `policies`
        gives the deprecated `topologyPolicies` instead of the attributes."""
        cell = cell or {"cpu": "4", "memory": "8Gi"}
        cpu = int(cell["cpu"]) * len(available)
        gib = int(cell["memory"].removesuffix("Gi")) * len(available)
        self.node(name, cpu=str(cpu), memory=f"{gib}Gi")
        topology: dict[str, Any] = {
            "apiVersion": "topology.node.k8s.io/v1alpha2",
            "kind": "NodeResourceTopology",
            "metadata": {"name": name},
            "zones": [_zone(i, a, cell) for i, a in enumerate(available)],
        }
        if policies is not None:
            topology["topologyPolicies"] = policies
        else:
            topology["attributes"] = [
                {"name": "topologyManagerPolicy", "value": policy},
                {"name": "topologyManagerScope", "value": scope},
            ]
        self.topologies.append(topology)
        return self

    def guaranteed(
        self, name: str, *containers: Resources, init: Resources | None = None
    ) -> NumaCase:
        """A pending Guaranteed pod with one container per `containers` (c0, c1, ...)."""
        spec: dict[str, Any] = {}
        if init is not None:
            spec["initContainers"] = [_guaranteed("init", init)]
        listed = [_guaranteed(f"c{i}", r) for i, r in enumerate(containers)]
        self.pending.append(pod(name, containers=listed, **spec))
        return self

    def build(self) -> dict[str, Any]:
        out = super().build()
        out["id"] = f"schedplugins/{self.slug}"
        out["objects"] = [*out["objects"], *self.topologies]
        if self.args:
            out["pluginArgs"] = self.args
        return out


def cpu(n: int | str, memory: str = "1Gi") -> Resources:
    return {"cpu": str(n), "memory": memory}


def numa_cases() -> list[NumaCase]:
    return [
        NumaCase(
            "numa-container-fits-one-zone",
            "3 cpu fits node-b's first zone (3 of 4 free); node-a has 4 free cpus, 2 per zone",
        )
        .numa_node("node-a", cpu(2, "8Gi"), cpu(2, "8Gi"))
        .numa_node("node-b", cpu(3, "8Gi"), cpu(1, "8Gi"))
        .guaranteed("three", cpu(3)),
        NumaCase(
            "numa-no-zone-fits",
            "no node has a zone with 3 free cpus though each has 4: cannot align container",
        )
        .numa_node("node-a", cpu(2, "8Gi"), cpu(2, "8Gi"))
        .numa_node("node-b", cpu(1, "8Gi"), cpu(2, "8Gi"))
        .guaranteed("three", cpu(3)),
        NumaCase(
            "numa-memory-alignment",
            "the cpus fit a zone of each node, the memory only node-b's zone that has the cpus",
        )
        .numa_node("node-a", cpu(4, "2Gi"), cpu(1, "8Gi"))
        .numa_node("node-b", cpu(1, "2Gi"), cpu(4, "8Gi"))
        .guaranteed("big", cpu(2, "4Gi")),
        NumaCase(
            "numa-containers-take-zones-in-turn",
            "container scope: c0 takes zone 0 (lowest that fits) and c1 must then fit what is"
            " left or another zone; node-a (3+3) holds 2+2, node-b (3+1) cannot",
        )
        .numa_node("node-a", cpu(3, "8Gi"), cpu(3, "8Gi"))
        .numa_node("node-b", cpu(3, "8Gi"), cpu(1, "8Gi"))
        .guaranteed("pair", cpu(2), cpu(2))
        .guaranteed("pair-b", cpu(2), cpu(2)),
        NumaCase(
            "numa-pod-scope",
            "pod scope needs the sum (4 cpu) in one zone: node-a (pod scope, 3+3) cannot,"
            " node-b (container scope, 3+3) can",
        )
        .numa_node("node-a", cpu(3, "8Gi"), cpu(3, "8Gi"), scope="pod")
        .numa_node("node-b", cpu(3, "8Gi"), cpu(3, "8Gi"))
        .guaranteed("pair", cpu(2), cpu(2)),
        NumaCase(
            "numa-pod-scope-nowhere",
            "both nodes pod scope, 3+3 free: a 2+2 pod is refused with cannot align pod",
        )
        .numa_node("node-a", cpu(3, "8Gi"), cpu(3, "8Gi"), scope="pod")
        .numa_node("node-b", cpu(3, "8Gi"), cpu(3, "8Gi"), scope="pod")
        .guaranteed("pair", cpu(2), cpu(2)),
        NumaCase(
            "numa-init-container",
            "the init container (3 cpu) fits no zone of either node: cannot align init container",
        )
        .numa_node("node-a", cpu(2, "8Gi"), cpu(2, "8Gi"))
        .numa_node("node-b", cpu(2, "8Gi"), cpu(1, "8Gi"))
        .guaranteed("init", cpu(1), init=cpu(3)),
        NumaCase(
            "numa-deprecated-policies",
            "topologyPolicies instead of attributes: SingleNUMANodePodLevel on node-a refuses"
            " 2+2 on 3+3, SingleNUMANodeContainerLevel on node-b takes it",
        )
        .numa_node("node-a", cpu(3, "8Gi"), cpu(3, "8Gi"), policies=["SingleNUMANodePodLevel"])
        .numa_node(
            "node-b", cpu(3, "8Gi"), cpu(3, "8Gi"), policies=["SingleNUMANodeContainerLevel"]
        )
        .guaranteed("pair", cpu(2), cpu(2)),
        NumaCase(
            "numa-best-effort-policy-passes",
            "the best-effort policy is not checked: 3 cpu with 2+2 free binds on node-a, not"
            " on node-b (single-numa-node)",
        )
        .numa_node("node-a", cpu(2, "8Gi"), cpu(2, "8Gi"), policy="best-effort")
        .numa_node("node-b", cpu(2, "8Gi"), cpu(2, "8Gi"))
        .guaranteed("three", cpu(3)),
        NumaCase(
            "numa-restricted-policy-passes",
            "the restricted policy is not checked either: 3 cpu with 2+2 free binds on node-b",
        )
        .numa_node("node-a", cpu(2, "8Gi"), cpu(2, "8Gi"))
        .numa_node("node-b", cpu(2, "8Gi"), cpu(2, "8Gi"), policy="restricted")
        .guaranteed("three", cpu(3)),
        NumaCase(
            "numa-burstable-and-best-effort-pass",
            "only Guaranteed pods are aligned: a 3-cpu Burstable pod binds on nodes with 2+2"
            " free (node-b, the less used), then a BestEffort pod",
        )
        .numa_node("node-a", cpu(2, "8Gi"), cpu(2, "8Gi"))
        .numa_node("node-b", cpu(2, "8Gi"), cpu(2, "8Gi"))
        .run("running", "node-a", None, "1")
        .pend("burstable", None, "3")
        .pend("best-effort", None, None),
        NumaCase(
            "numa-node-without-topology",
            "node-c publishes no NRT: it passes the Filter and scores 0; node-a has a zone",
        )
        .numa_node("node-a", cpu(4, "8Gi"), cpu(1, "8Gi"))
        .node("node-c", cpu="8", memory="16Gi")
        .guaranteed("two", cpu(2))
        .guaranteed("four", cpu(4, "6Gi")),
        *_score_cases(),
    ]


def _score_cases() -> list[NumaCase]:
    """Three nodes of two 8-cpu 16Gi zones that LeastAllocated, MostAllocated and
    BalancedAllocation each order differently for a pod of 2 cpu and 2Gi (which fits a zone
    of each; a node scores its zones' lowest non-zero score, upstream's
    scoreForEachNUMANode), and LeastNUMANodes on restricted nodes, where the 6-cpu pod
    needs two zones of node-a and one of node-b."""
    cell = {"cpu": "8", "memory": "16Gi"}
    cases = [
        NumaCase(
            f"numa-score-{strategy.lower()}",
            f"scoringStrategy {strategy}: where a 2-cpu 2Gi pod lands among three nodes"
            " whose zones are free in different amounts",
            strategy=strategy,
        )
        .numa_node("node-a", cpu(2, "15Gi"), cpu(2, "6Gi"), cell=cell)
        .numa_node("node-b", cpu(4, "13Gi"), cpu(3, "8Gi"), cell=cell)
        .numa_node("node-c", cpu(6, "6Gi"), cpu(3, "2Gi"), cell=cell)
        .guaranteed("pod", cpu(2, "2Gi"))
        for strategy in ("LeastAllocated", "MostAllocated", "BalancedAllocation")
    ]
    least_numa = (
        NumaCase(
            "numa-score-leastnumanodes",
            "scoringStrategy LeastNUMANodes, restricted policy: 6 cpu needs both zones of"
            " node-a (4+4 free) and one of node-b (7+1 free)",
            strategy="LeastNUMANodes",
        )
        .numa_node("node-a", cpu(4, "8Gi"), cpu(4, "8Gi"), cell=cell, policy="restricted")
        .numa_node("node-b", cpu(7, "8Gi"), cpu(1, "8Gi"), cell=cell, policy="restricted")
        .guaranteed("six", cpu(6))
    )
    return [*cases, least_numa]
