"""The NodeResourceTopologyMatch plugin (kubernetes-sigs/scheduler-plugins v0.28.9).

Filter: the kubelet's `single-numa-node` topology-manager admission, simulated on the
node's NodeResourceTopology (filter.py). Score: one of four strategies over the NUMA
cells (score.py, leastnuma.py); there is no NormalizeScore (upstream's
ScoreExtensions is nil).

The NodeResourceTopology of a node is read from the snapshot's cluster objects
(`table.objects.custom`, by its kind `NODE_RESOURCE_TOPOLOGIES`): this is upstream's default passthrough cache
(`cacheResyncPeriodSeconds: 0`), which reads the object as the API has it at each
Filter and Score. The overreserve and discard-reserved caches (and their Reserve,
Unreserve and PostBind points) are not implemented; args.py refuses them.

Filter passes a node without a NodeResourceTopology, a node whose policy is not
`single-numa-node`, and a BestEffort pod requesting no device. Score gives 100 to a
pod that is not Guaranteed, 0 on a node without a NodeResourceTopology, and (except
for LeastNUMANodes) 0 on a node whose policy is not `single-numa-node`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eventsched.framework import (
    ASSIGNED_POD_DELETE,
    LEGACY_FEATURES,
    MAX_NODE_SCORE,
    NODE_ADD,
    NODE_UPDATE,
    ClusterEvent,
    CycleState,
    Features,
    Handle,
    NodeInfo,
    Status,
)
from eventsched.model import Pod
from eventsched.model.containers import BEST_EFFORT, GUARANTEED
from eventsched.plugins.noderesourcetopology import filter as numafilter
from eventsched.plugins.noderesourcetopology import leastnuma, score
from eventsched.plugins.noderesourcetopology.args import (
    BALANCED_ALLOCATION,
    LEAST_ALLOCATED,
    LEAST_NUMA_NODES,
    MOST_ALLOCATED,
    NAME,
    parse_args,
)
from eventsched.plugins.noderesourcetopology.numa import (
    POLICY_SINGLE_NUMA_NODE,
    SCOPE_POD,
    ParsedTopology,
    TopologyCache,
    includes_non_native,
)
from eventsched.plugins.noderesourcetopology.topology import (
    NODE_RESOURCE_TOPOLOGIES,
    NodeResourceTopology,
)

_STRATEGIES: Mapping[str, score.ScoreStrategy] = {
    LEAST_ALLOCATED: score.least_allocated,
    MOST_ALLOCATED: score.most_allocated,
    BALANCED_ALLOCATION: score.balanced_allocation,
}
NRT_ADD = ClusterEvent(NODE_RESOURCE_TOPOLOGIES.kind, "Add")
NRT_UPDATE = ClusterEvent(NODE_RESOURCE_TOPOLOGIES.kind, "Update")


class NodeResourceTopologyMatch:
    name = NAME
    #: The custom kinds it reads, by name: the cluster adapter watches NodeResourceTopologies
    #: when a profile enables the plugin.
    custom_kinds = (NODE_RESOURCE_TOPOLOGIES.kind,)

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        self.args = parse_args(args)
        self.strategy = self.args.strategy
        self.weights = self.args.weights
        self._parsed = TopologyCache()

    def events_to_register(self) -> Sequence[ClusterEvent]:
        """Upstream: pod deleted, node added or its allocatable updated, NRT added or updated."""
        return (ASSIGNED_POD_DELETE, NODE_ADD, NODE_UPDATE, NRT_ADD, NRT_UPDATE)

    def topology(self, node: NodeInfo) -> NodeResourceTopology | None:
        return node.table.objects.custom.named(NODE_RESOURCE_TOPOLOGIES, node.name)

    def parsed(self, node: NodeInfo) -> ParsedTopology | None:
        """The node's NodeResourceTopology as Filter and Score read it (None: it has none)."""
        nrt = self.topology(node)
        return None if nrt is None else self._parsed.get(node.name, nrt)

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        if pod.qos == BEST_EFFORT and not includes_non_native(
            [c.requests for c in (*pod.init_containers, *pod.containers)]
        ):
            return None
        parsed = self.parsed(node)
        if parsed is None:
            return None
        config = parsed.config
        if config.policy != POLICY_SINGLE_NUMA_NODE:
            return None
        allocatable = node.node.allocatable
        cells = parsed.fresh_cells()
        if config.scope == SCOPE_POD:
            requests = numafilter.effective_request(pod.init_containers, pod.containers)
            return numafilter.pod_scope(cells, requests, pod.qos, allocatable)
        return numafilter.container_scope(
            cells, pod.init_containers, pod.containers, pod.qos, allocatable
        )

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        if pod.qos != GUARANTEED:
            return MAX_NODE_SCORE
        parsed = self.parsed(node)
        if parsed is None:
            return 0
        config = parsed.config
        cells = parsed.fresh_cells()
        pod_scope = config.scope == SCOPE_POD
        if self.strategy == LEAST_NUMA_NODES:
            if pod_scope:
                requests = numafilter.effective_request(pod.init_containers, pod.containers)
                return leastnuma.pod_scope_score(cells, requests, pod.qos)
            return leastnuma.container_scope_score(
                cells, pod.init_containers, pod.containers, pod.qos
            )
        if config.policy != POLICY_SINGLE_NUMA_NODE:
            return 0
        strategy = _STRATEGIES[self.strategy]
        if pod_scope:
            requests = numafilter.effective_request(pod.init_containers, pod.containers)
            return score.score_cells(requests, cells, strategy, self.weights)
        return score.container_mean(
            [
                score.score_cells(c.requests, cells, strategy, self.weights)
                for c in (*pod.init_containers, *pod.containers)
            ]
        )
