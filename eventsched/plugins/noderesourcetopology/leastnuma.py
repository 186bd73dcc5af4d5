"""NodeResourceTopologyMatch's LeastNUMANodes scoring strategy (v0.28.9 least_numa.go).

For the pod (pod scope) or each container, init first (container scope), find the
fewest NUMA cells whose summed `available` amounts hold the request, preferring
among equally many the combination with the lowest average distance (`costs`);
the node scores `100 - cells * 12`, plus 6 when that combination has the lowest
average distance of all combinations of that size. In container scope the cells a
container takes are reduced before the next container (by NUMA id used as a list
index, as upstream does), the worst container decides, and a container requesting
only resources no cell reports is skipped. Unlike the other strategies this one
scores whatever the topology manager policy is. Distances are float32, as upstream's.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

import numpy as np

from eventsched.framework import MAX_NODE_SCORE, MIN_NODE_SCORE
from eventsched.model.containers import ContainerRequests
from eventsched.plugins.noderesourcetopology.numa import (
    HIGHEST_NUMA_ID,
    NUMANode,
    is_resource_set_suitable,
    only_non_numa_resources,
)

#: ACPI SLIT's "unknown" distance, taken for a missing cost.
MAX_DISTANCE = 255
_NO_DISTANCE = np.float32(256)


def container_scope_score(
    nodes: list[NUMANode],
    init_containers: tuple[ContainerRequests, ...],
    containers: tuple[ContainerRequests, ...],
    qos: str,
) -> int:
    """`leastNUMAContainerScopeScore` (mutates `nodes`)."""
    most = 0
    all_min_distance = True
    for container in (*init_containers, *containers):
        requests = container.requests
        if only_non_numa_resources(nodes, requests):
            continue
        required = numa_nodes_required(qos, nodes, requests)
        if required is None:
            return MIN_NODE_SCORE
        ids, min_distance = required
        if not min_distance:
            all_min_distance = False
        most = max(most, len(ids))
        subtract_from_numas(requests, nodes, ids)
    if most == 0:
        return MAX_NODE_SCORE
    return normalize_score(most, all_min_distance)


def pod_scope_score(nodes: list[NUMANode], requests: Mapping[str, int], qos: str) -> int:
    """`leastNUMAPodScopeScore`."""
    if only_non_numa_resources(nodes, requests):
        return MAX_NODE_SCORE
    required = numa_nodes_required(qos, nodes, requests)
    if required is None:
        return MIN_NODE_SCORE
    ids, min_distance = required
    return normalize_score(len(ids), min_distance)


def normalize_score(count: int, min_distance: bool) -> int:
    """`normalizeScore`: 100 - count * (100 / 8), plus half a step for the best distance."""
    step = MAX_NODE_SCORE // HIGHEST_NUMA_ID
    score = MAX_NODE_SCORE - count * step
    return score + step // 2 if min_distance else score


def average_distance(nodes: list[NUMANode], indexes: tuple[int, ...]) -> np.float32:
    """`nodesAvgDistance` over cell positions: the mean of all pairwise costs (a cell to
    itself included), 255 for a cost the cell does not list."""
    if not indexes:
        return np.float32(MAX_DISTANCE)
    total = 0
    for a in indexes:
        for b in indexes:
            total += nodes[a].costs.get(nodes[b].numa_id, MAX_DISTANCE)
    return np.float32(total) / np.float32(len(indexes) * len(indexes))


def numa_nodes_required(
    qos: str, nodes: list[NUMANode], requests: Mapping[str, int]
) -> tuple[tuple[int, ...], bool] | None:
    """`numaNodesRequired`: the NUMA ids (ascending) of the smallest suitable combination and
    whether it has the minimal average distance; None when no combination holds it."""
    for size in range(1, len(nodes) + 1):
        found = _suitable_combination(
            qos, nodes, requests, list(combinations(range(len(nodes)), size))
        )
        if found is not None:
            indexes, min_distance = found
            return tuple(sorted({nodes[i].numa_id for i in indexes})), min_distance
    return None


def _suitable_combination(
    qos: str,
    nodes: list[NUMANode],
    requests: Mapping[str, int],
    candidates: list[tuple[int, ...]],
) -> tuple[tuple[int, ...], bool] | None:
    """`findSuitableCombination`: the first fitting combination with the minimal average
    distance of all candidates, else the first fitting one with the lowest distance."""
    minimal = np.float32(MAX_DISTANCE)
    for combination in candidates:
        distance = average_distance(nodes, combination)
        if distance < minimal:
            minimal = distance
    best: tuple[int, ...] | None = None
    best_distance = _NO_DISTANCE
    for combination in candidates:
        if not all(name in nodes[i].resources for i in combination for name in requests):
            continue
        if not _fits(qos, requests, _combined(nodes, combination)):
            continue
        distance = average_distance(nodes, combination)
        if distance == minimal:
            return combination, True
        if distance < best_distance:
            best_distance = distance
            best = combination
    return None if best is None else (best, False)


def _combined(nodes: list[NUMANode], combination: tuple[int, ...]) -> dict[str, int]:
    """`combineResources`: the cells' amounts summed by resource."""
    total: dict[str, int] = {}
    for i in combination:
        for name, amount in nodes[i].resources.items():
            total[name] = total.get(name, 0) + amount
    return total


def _fits(qos: str, requests: Mapping[str, int], available: Mapping[str, int]) -> bool:
    """`checkResourcesFit`: every non-zero request suitable for the summed cells."""
    return all(
        amount == 0 or is_resource_set_suitable(qos, name, amount, available.get(name, 0))
        for name, amount in requests.items()
    )


def subtract_from_numas(
    requests: Mapping[str, int], nodes: list[NUMANode], ids: tuple[int, ...]
) -> None:
    """`subtractFromNUMAs`: take each request from the cells in turn, a cell going no lower
    than 0. The NUMA ids index the cell list, as upstream's; an id past its end panics
    upstream and raises here."""
    for name, wanted in requests.items():
        for numa_id in ids:
            if wanted == 0:
                break
            if numa_id >= len(nodes):
                raise IndexError(
                    f"index out of range [{numa_id}] with length {len(nodes)}: NUMA zone ids "
                    f"must be 0..{len(nodes) - 1} (upstream panics)"
                )
            cell = nodes[numa_id].resources
            if name not in cell:
                continue
            available = cell[name]
            if wanted >= available:
                wanted -= available
                cell[name] = 0
            else:
                cell[name] = available - wanted
                wanted = 0
