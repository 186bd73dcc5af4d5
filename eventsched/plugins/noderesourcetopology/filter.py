"""NodeResourceTopologyMatch's Filter: the kubelet's `single-numa-node` admission, simulated
(v0.28.9 filter.go).

A node passes unless its NodeResourceTopology says the topology manager runs the
`single-numa-node` policy. Then, in `container` scope, each init container in turn
and then each app container must fit one NUMA cell (the lowest-numbered one that
fits is taken for an app container and its requests are subtracted from it, so the
next container sees what remains; init containers run before and take nothing);
in `pod` scope the pod's effective request must fit one cell.

A requested resource fits a cell when the cell's `available` amount is at least
the request; for a pod that is not Guaranteed, cpu, memory and hugepages fit any
cell that reports them (they are not pinned). A resource no cell reports passes
when it is a device (not native) or ephemeral-storage, and fails otherwise. A
resource the node's allocatable lacks fails at once. Zero requests are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from eventsched.framework import Code, Status
from eventsched.model.containers import ContainerRequests
from eventsched.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from eventsched.plugins.noderesourcetopology.explain import describe
from eventsched.plugins.noderesourcetopology.numa import (
    HIGHEST_NUMA_ID,
    NUMANode,
    has_numa_affinity_exemption,
    is_resource_set_suitable,
    is_scalar_resource_name,
)

ERR_INIT_CONTAINER = "cannot align init container"
ERR_CONTAINER = "cannot align container"
ERR_POD = "cannot align pod"
#: `bm.NewEmptyBitMask().Fill()`: all 64 cells possible.
_FULL_MASK = (1 << 64) - 1
#: What NodeInfo.Allocatable always has, whatever the node reports (`util.ResourceList`).
_ALWAYS_ALLOCATABLE = frozenset({CPU, MEMORY, PODS, EPHEMERAL_STORAGE})


@dataclass(frozen=True, slots=True)
class Alignment:
    """Where one container (or the pod) fits: the cells that can hold it, lowest first.

    `fitting` keeps, for each NUMA-bound request looked at (in order, up to the verdict),
    its name, amount and the mask of cells it fits; `missing` names a request the node
    itself lacks. They explain a rejection (explain.py), the verdict needs neither.
    """

    numa_ids: tuple[int, ...]
    fitting: tuple[tuple[str, int, int], ...] = ()
    missing: str = ""

    @property
    def fits(self) -> bool:
        return bool(self.numa_ids)

    @property
    def chosen(self) -> int:
        """The cell the kubelet would take (`bitmask.GetBits()[0]`), HIGHEST_NUMA_ID if none."""
        return self.numa_ids[0] if self.numa_ids else HIGHEST_NUMA_ID


def node_has_resource(allocatable: Mapping[str, int], name: str) -> bool:
    """Whether `util.ResourceList(nodeInfo.Allocatable)` has `name`: the base resources
    always, a scalar resource (extended, hugepages, ...) when the node reports it."""
    return name in _ALWAYS_ALLOCATABLE or (name in allocatable and is_scalar_resource_name(name))


def align(
    nodes: list[NUMANode], requests: Mapping[str, int], qos: str, allocatable: Mapping[str, int]
) -> Alignment:
    """`resourcesAvailableInAnyNUMANodes`: the cells every requested resource fits in."""
    mask = _FULL_MASK
    seen: list[tuple[str, int, int]] = []
    for name, amount in requests.items():
        if amount == 0:
            continue
        if not node_has_resource(allocatable, name):
            return Alignment((), tuple(seen), name)
        reported = False
        fitting = 0
        for node in nodes:
            if name not in node.resources:
                continue
            reported = True
            if is_resource_set_suitable(qos, name, amount, node.resources[name]):
                fitting |= 1 << node.numa_id
        if not reported and has_numa_affinity_exemption(name):
            continue
        seen.append((name, amount, fitting))
        mask &= fitting
        if mask == 0:
            return Alignment((), tuple(seen))
    return Alignment(tuple(i for i in range(64) if mask >> i & 1), tuple(seen))


def subtract_from_numa(nodes: list[NUMANode], numa_id: int, requests: Mapping[str, int]) -> None:
    """`subtractFromNUMA`: take a container's requests from the cell it was aligned to. A
    resource the cell does not report is added to it, negative (zero for a zero request),
    as upstream's map arithmetic does."""
    for node in nodes:
        if node.numa_id != numa_id:
            continue
        for name, amount in requests.items():
            node.resources[name] = node.resources.get(name, 0) - amount


def container_scope(
    nodes: list[NUMANode],
    init_containers: tuple[ContainerRequests, ...],
    containers: tuple[ContainerRequests, ...],
    qos: str,
    allocatable: Mapping[str, int],
) -> Status | None:
    """`singleNUMAContainerLevelHandler` (mutates `nodes`)."""
    for init in init_containers:
        alignment = align(nodes, init.requests, qos, allocatable)
        if not alignment.fits:
            why = describe(f"init container {init.name}", alignment, nodes)
            return _rejected(ERR_INIT_CONTAINER, why)
    for container in containers:
        alignment = align(nodes, container.requests, qos, allocatable)
        if not alignment.fits:
            return _rejected(
                ERR_CONTAINER, describe(f"container {container.name}", alignment, nodes)
            )
        subtract_from_numa(nodes, alignment.chosen, container.requests)
    return None


def _rejected(reason: str, detail: str) -> Status:
    """Upstream's status (Unschedulable, its reason) with the zone detail upstream logs."""
    return Status(Code.UNSCHEDULABLE, (reason,), detail=(detail,))


def pod_scope(
    nodes: list[NUMANode], requests: Mapping[str, int], qos: str, allocatable: Mapping[str, int]
) -> Status | None:
    """`singleNUMAPodLevelHandler`."""
    alignment = align(nodes, requests, qos, allocatable)
    if not alignment.fits:
        return _rejected(ERR_POD, describe("pod", alignment, nodes))
    return None


def effective_request(
    init_containers: tuple[ContainerRequests, ...], containers: tuple[ContainerRequests, ...]
) -> dict[str, int]:
    """`util.GetPodEffectiveRequest`: the app containers' sum, raised to the largest init
    container's request, resource by resource; no overhead, sidecars not apart. A resource
    requested at 0 is kept (at 0)."""
    init: dict[str, int] = {}
    for c in init_containers:
        for name, amount in c.requests.items():
            if name in init and amount <= init[name]:
                continue
            init[name] = amount
    total: dict[str, int] = {}
    for c in containers:
        for name, amount in c.requests.items():
            total[name] = total.get(name, 0) + amount
    for name, amount in init.items():
        if name in total and amount <= total[name]:
            continue
        total[name] = amount
    return total
