"""NUMA cells from a NodeResourceTopology, the topology manager's configuration, and the
resource rules NodeResourceTopologyMatch shares between Filter and Score (v0.28.9's
pluginhelpers.go, config.go, plugin.go and filter.go's `isResourceSetSuitable`).

Amounts are eventsched's integers (CPU in millicores). Where upstream compares
quantities (`Cmp`) the integers are compared; where it takes `Quantity.Value()`
(the scoring strategies) `go_value` rounds CPU up to whole cores as Go does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from eventsched.model import label_key_problem
from eventsched.model.containers import GUARANTEED
from eventsched.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY
from eventsched.plugins.noderesourcetopology.topology import (
    ATTRIBUTE_POLICY,
    ATTRIBUTE_SCOPE,
    NodeResourceTopology,
)

#: `maxNUMAId`: zone ids are 0..63 (a bitmask of 64 bits).
MAX_NUMA_ID = 64
#: `highestNUMAID`: the topology manager allows at most 8 NUMA nodes.
HIGHEST_NUMA_ID = 8
ZONE_TYPE_NODE = "Node"

# kubelet topology manager policies and scopes (kubeletconfig).
POLICY_NONE = "none"
POLICY_BEST_EFFORT = "best-effort"
POLICY_RESTRICTED = "restricted"
POLICY_SINGLE_NUMA_NODE = "single-numa-node"
SCOPE_CONTAINER = "container"
SCOPE_POD = "pod"
_POLICIES = (POLICY_NONE, POLICY_BEST_EFFORT, POLICY_RESTRICTED, POLICY_SINGLE_NUMA_NODE)
_SCOPES = (SCOPE_CONTAINER, SCOPE_POD)
#: The deprecated `topologyPolicies` words as (policy, scope).
_LEGACY_POLICIES = {
    "SingleNUMANodePodLevel": (POLICY_SINGLE_NUMA_NODE, SCOPE_POD),
    "SingleNUMANodeContainerLevel": (POLICY_SINGLE_NUMA_NODE, SCOPE_CONTAINER),
    "BestEffortPodLevel": (POLICY_BEST_EFFORT, SCOPE_POD),
    "BestEffortContainerLevel": (POLICY_BEST_EFFORT, SCOPE_CONTAINER),
    "RestrictedPodLevel": (POLICY_RESTRICTED, SCOPE_POD),
    "RestrictedContainerLevel": (POLICY_RESTRICTED, SCOPE_CONTAINER),
}


@dataclass(frozen=True, slots=True)
class TopologyManagerConfig:
    policy: str = POLICY_NONE
    scope: str = SCOPE_CONTAINER


def topology_manager_config(nrt: NodeResourceTopology) -> TopologyManagerConfig:
    """`topologyManagerConfigFromNodeResourceTopology`: defaults (none, container), then the
    first deprecated `topologyPolicies` word, then the attributes; invalid values are
    ignored and a later valid attribute wins over an earlier one."""
    policy, scope = POLICY_NONE, SCOPE_CONTAINER
    if nrt.topology_policies:
        policy, scope = _LEGACY_POLICIES.get(nrt.topology_policies[0], (policy, scope))
    for name, value in nrt.attributes:
        if name == ATTRIBUTE_SCOPE and value in _SCOPES:
            scope = value
        elif name == ATTRIBUTE_POLICY and value in _POLICIES:
            policy = value
    return TopologyManagerConfig(policy, scope)


@dataclass(slots=True)
class NUMANode:
    """One NUMA cell: its id, available amounts by resource, and distances by NUMA id."""

    numa_id: int
    resources: dict[str, int]
    costs: dict[int, int] = field(default_factory=dict)


def zone_id(name: str) -> int | None:
    """`getID`: `node-<n>` with 0 <= n < 64, else None (upstream logs an error)."""
    parts = name.split("-")
    if len(parts) != 2 or parts[0] != "node":
        return None
    number = _go_atoi(parts[1])
    if number is None or not 0 <= number < MAX_NUMA_ID:
        return None
    return number


def _go_atoi(text: str) -> int | None:
    """`strconv.Atoi`: an optional sign and ASCII decimal digits (no spaces, no `_`)."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not all("0" <= c <= "9" for c in digits):
        return None
    return int(text)


def numa_nodes(nrt: NodeResourceTopology) -> list[NUMANode]:
    """`createNUMANodeList`: the `Node` zones with a valid id, in the object's order, each
    with its `available` amounts (a later entry of a resource wins) and its costs. The costs
    come from the last zone with that id, as upstream's id-to-zone lookup has it."""
    nodes: list[NUMANode] = []
    costs_of: dict[int, int] = {}
    for index, zone in enumerate(nrt.zones):
        if zone.type != ZONE_TYPE_NODE:
            continue
        numa_id = zone_id(zone.name)
        if numa_id is None:
            continue
        costs_of[numa_id] = index
        nodes.append(NUMANode(numa_id, {r.name: r.available for r in zone.resources}))
    for node in nodes:
        costs: dict[int, int] = {}
        for name, value in nrt.zones[costs_of[node.numa_id]].costs:
            cost_id = zone_id(name)
            if cost_id is not None:
                costs[cost_id] = value
        node.costs = costs
    return nodes


@dataclass(frozen=True, slots=True)
class ParsedTopology:
    """What Filter and Score read of one NodeResourceTopology: its topology manager
    configuration and NUMA cells, parsed once per object."""

    config: TopologyManagerConfig
    cells: tuple[NUMANode, ...]

    def fresh_cells(self) -> list[NUMANode]:
        """Copies of the cells that a Filter may subtract from (costs are only read)."""
        return [NUMANode(c.numa_id, dict(c.resources), c.costs) for c in self.cells]


class TopologyCache:
    """The ParsedTopology of each node's current NodeResourceTopology. Objects are
    immutable (an update is a new object), so the one held for a node is reused while the
    table holds the same object, and replaced when it holds another."""

    def __init__(self) -> None:
        self._by_node: dict[str, tuple[NodeResourceTopology, ParsedTopology]] = {}

    def get(self, node: str, nrt: NodeResourceTopology) -> ParsedTopology:
        hit = self._by_node.get(node)
        if hit is not None and hit[0] is nrt:
            return hit[1]
        parsed = ParsedTopology(topology_manager_config(nrt), tuple(numa_nodes(nrt)))
        self._by_node[node] = (nrt, parsed)
        return parsed


def only_non_numa_resources(nodes: list[NUMANode], requests: Mapping[str, int]) -> bool:
    """`onlyNonNUMAResources`: no requested resource (zero or not) is in any cell."""
    return not any(name in node.resources for name in requests for node in nodes)


# -- resource names and the QoS rule ----------------------------------------------------


def is_native(name: str) -> bool:
    """`v1helper.IsNativeResource`: unprefixed, or in the kubernetes.io/ namespace."""
    return "/" not in name or "kubernetes.io/" in name


def is_scalar_resource_name(name: str) -> bool:
    """`schedutil.IsScalarResourceName`: the names NodeInfo keeps in ScalarResources
    (extended, hugepages-, kubernetes.io/ prefixed, attachable-volumes-)."""
    return (
        _is_extended(name)
        or is_hugepages(name)
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


def _is_extended(name: str) -> bool:
    """`v1helper.IsExtendedResourceName`: not native, not `requests.`-prefixed, and
    `requests.<name>` a qualified name."""
    if is_native(name) or name.startswith("requests."):
        return False
    return label_key_problem("requests." + name) is None


def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def has_numa_affinity_exemption(name: str) -> bool:
    """A resource no cell reports may still be satisfied at node level: non-native
    resources (devices) and ephemeral-storage."""
    return not is_native(name) or name == EPHEMERAL_STORAGE


def is_resource_set_suitable(qos: str, name: str, requested: int, available: int) -> bool:
    """`isResourceSetSuitable`: for a pod that is not Guaranteed, cpu, memory and hugepages
    fit any cell (the kubelet does not pin them); otherwise the cell must have enough."""
    if qos != GUARANTEED and (name in (CPU, MEMORY) or is_hugepages(name)):
        return True
    return available >= requested


def includes_non_native(requests: Iterable[Mapping[str, int]]) -> bool:
    """`resourcerequests.IncludeNonNative`: any container requests (even 0 of) a device."""
    return any(not is_native(name) for r in requests for name in r)


def go_value(name: str, amount: int) -> int:
    """`Quantity.Value()`: whole units, rounded away from zero (CPU is held in millicores)."""
    if name != CPU:
        return amount
    whole, rest = divmod(abs(amount), 1000)
    whole += 1 if rest else 0
    return whole if amount >= 0 else -whole
