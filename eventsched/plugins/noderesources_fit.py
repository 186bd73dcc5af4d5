"""NodeResourcesFit: does the node have room for the pod's requests, and how full is it?

Filter compares the pod's requests with each node's free room as one array
operation per resource; a node short of several resources carries all the
reasons, in upstream's order (pods, cpu, memory, ephemeral-storage, extended).
Score implements the three upstream strategies on the same arrays.

By version: from v1.34 (kubernetes#131345) a node whose allocatable is less than
the pod asks for of a resource rejects it UnschedulableAndUnresolvable (preemption
cannot help there); while the SidecarContainers gate is off a pod with a sidecar is
refused, in Filter up to v1.29 and in PreFilter from v1.30; and from v1.33 the pod
is scored as its containers ask, pod-level requests left out (`Pod.score_requests`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eventsched.framework import (
    ASSIGNED_POD_DELETE,
    LEGACY_FEATURES,
    NODE_ADD,
    NODE_UPDATE,
    BatchFilterResult,
    ClusterEvent,
    CycleState,
    Features,
    Handle,
    PluginArgsError,
    Status,
)
from eventsched.model import Indexes, IntArray, NodeTable, Pod
from eventsched.model.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    is_scalar_resource_name,
)

NAME = "NodeResourcesFit"
SIDECARS_DISABLED = (
    "Pod has a restartable init container and the SidecarContainers feature is disabled"
)
_STATE_KEY = "PreFilterNodeResourcesFit"
STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
MAX_UTILIZATION = 100
#: Shape scores are given 0..10 and scaled to the node score range, as upstream.
MAX_CUSTOM_PRIORITY_SCORE = 10


@dataclass(frozen=True, slots=True)
class ScoringResource:
    name: str
    weight: int


@dataclass(frozen=True, slots=True)
class PodRequest:
    requests: Mapping[str, int]
    #: Resources checked by Filter, in upstream's order.
    checked: tuple[str, ...]


class NodeResourcesFit:
    name = NAME
    #: Its Filter reads the node and the requested/allocatable columns only (RequestedOnlyFilter).
    filter_reads_requested_only = True

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        known = {"ignoredResources", "ignoredResourceGroups", "scoringStrategy"}
        unknown = set(args) - known
        if unknown:
            raise PluginArgsError(
                sorted(unknown)[0],
                f"unknown field; NodeResourcesFit takes {', '.join(sorted(known))}",
            )
        self.ignored = frozenset(_strings(args, "ignoredResources"))
        self.ignored_groups = frozenset(_strings(args, "ignoredResourceGroups"))
        strategy = args.get("scoringStrategy") or {}
        if not isinstance(strategy, Mapping):
            raise PluginArgsError("scoringStrategy", "must be a map with type and resources")
        self.strategy = str(strategy.get("type", "LeastAllocated"))
        if self.strategy not in STRATEGIES:
            raise PluginArgsError(
                "scoringStrategy.type",
                f"must be one of {', '.join(STRATEGIES)} (got {self.strategy!r})",
            )
        self.resources = _scoring_resources(strategy.get("resources"))
        self.shape: list[tuple[int, int]] = []
        if self.strategy == "RequestedToCapacityRatio":
            self.shape = _shape(strategy.get("requestedToCapacityRatio") or {})
        #: A request beyond a node's allocatable is UnschedulableAndUnresolvable (v1.34).
        self.unresolvable = features.since("1.34")
        #: Sidecars refused (SidecarContainers off), in PreFilter from v1.30, else in Filter.
        self.refuse_sidecars = not features.sidecar_containers
        self.refuse_sidecars_in_pre_filter = features.since("1.30")

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (NODE_ADD, NODE_UPDATE, ASSIGNED_POD_DELETE)

    # -- filter -----------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[None, Status | None]:
        if self.refuse_sidecars and self.refuse_sidecars_in_pre_filter and pod.restartable_init:
            return None, Status.unresolvable(SIDECARS_DISABLED)
        requests = {r: v for r, v in pod.requests.items() if v > 0}
        extended = sorted(
            r
            for r in requests
            if r not in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) and not self._ignored(r)
        )
        base = [r for r in (CPU, MEMORY, EPHEMERAL_STORAGE) if r in requests]
        state.write(_STATE_KEY, PodRequest(requests, (*base, *extended)))
        return None, None

    def _ignored(self, resource: str) -> bool:
        group = resource.split("/", 1)[0] if "/" in resource else ""
        return resource in self.ignored or (bool(group) and group in self.ignored_groups)

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        if self.refuse_sidecars and not self.refuse_sidecars_in_pre_filter and pod.restartable_init:
            # v1.28 Filter: before reading PreFilter's state, on every node.
            failed = np.zeros(len(rows), dtype=np.int64)
            return BatchFilterResult(failed, [Status.unresolvable(SIDECARS_DISABLED)])
        request: PodRequest = state.get(_STATE_KEY) or PodRequest({}, ())
        allocatable = table.allocatable[rows]
        requested = table.requested[rows]
        pods_col = table.column(PODS)
        assert pods_col is not None
        reasons = ["Too many pods"]
        mask = (requested[:, pods_col] + 1 > allocatable[:, pods_col]).astype(np.int64)
        # Bit 0 of `key` is "some resource is beyond the node's allocatable" (v1.34).
        unresolvable = np.zeros(len(rows), dtype=bool)
        for bit, resource in enumerate(request.checked, start=1):
            reasons.append(f"Insufficient {resource}")
            col = table.column(resource)
            amount = request.requests[resource]
            if col is None:
                short = np.ones(len(rows), dtype=bool)
                beyond = short
            else:
                short = allocatable[:, col] - requested[:, col] < amount
                beyond = short & (allocatable[:, col] < amount)
            mask |= short.astype(np.int64) << bit
            if self.unresolvable:
                unresolvable |= beyond
        if not mask.any():
            return BatchFilterResult.passing(len(rows))
        key = mask << 1 | unresolvable.astype(np.int64)
        verdict = np.full(len(rows), -1, dtype=np.int64)
        statuses: list[Status] = []
        for value in np.unique(key[mask != 0]):
            bits = int(value) >> 1
            which = tuple(reasons[b] for b in range(len(reasons)) if bits >> b & 1)
            verdict[key == value] = len(statuses)
            make = Status.unresolvable if int(value) & 1 else Status.unschedulable
            statuses.append(make(*which))
        return BatchFilterResult(verdict, statuses)

    # -- score ------------------------------------------------------------------

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> IntArray:
        requested_cols: list[IntArray] = []
        allocatable_cols: list[IntArray] = []
        weights: list[int] = []
        for resource in self.resources:
            alloc, req = self._scoring_columns(resource.name, pod, table, rows)
            allocatable_cols.append(alloc)
            requested_cols.append(req)
            weights.append(resource.weight)
        if not weights:
            return np.zeros(len(rows), dtype=np.int64)
        if self.strategy == "LeastAllocated" and all(a.all() for a in allocatable_cols):
            return _least_allocated_everywhere(allocatable_cols, requested_cols, weights)
        allocatable = np.stack(allocatable_cols)
        requested = np.stack(requested_cols)
        w = np.asarray(weights, dtype=np.int64)[:, None]
        counted = allocatable > 0
        safe = np.where(counted, allocatable, 1)
        if self.strategy == "LeastAllocated":
            per = np.where(requested > allocatable, 0, (allocatable - requested) * 100 // safe)
        elif self.strategy == "MostAllocated":
            per = np.minimum(requested, allocatable) * 100 // safe
        else:
            utilization = np.where(
                requested > allocatable, MAX_UTILIZATION, requested * MAX_UTILIZATION // safe
            )
            per = self._broken_linear(utilization)
            counted = counted & (per > 0)
            total = (np.where(counted, per, 0) * w).sum(axis=0)
            weight_sum = (np.where(counted, 1, 0) * w).sum(axis=0)
            # Go's math.Round: halves away from zero (numpy's round goes to even).
            rounded = np.floor(total / np.maximum(weight_sum, 1) + 0.5)
            return np.where(weight_sum > 0, rounded, 0).astype(np.int64)
        total = (np.where(counted, per, 0) * w).sum(axis=0)
        weight_sum = (np.where(counted, 1, 0) * w).sum(axis=0)
        return np.where(weight_sum > 0, total // np.maximum(weight_sum, 1), 0).astype(np.int64)

    def _scoring_columns(
        self, resource: str, pod: Pod, table: NodeTable, rows: Indexes
    ) -> tuple[IntArray, IntArray]:
        """Allocatable and requested-with-this-pod; cpu and memory count non-zero defaults."""
        if pod.score_requests is not None:
            return self._containers_scoring_columns(resource, pod.score_requests, table, rows)
        col = table.column(resource)
        if col is None or (
            pod.requests.get(resource, 0) == 0 and is_scalar_resource_name(resource)
        ):
            # upstream's calculateResourceAllocatableRequest: (0, 0), left out of the score,
            # for a scalar resource (extended, hugepages, ...) the pod does not request.
            zeros = np.zeros(len(rows), dtype=np.int64)
            return zeros, zeros
        allocatable = table.allocatable[rows, col]
        if resource == CPU:
            return allocatable, table.non_zero_requested[rows, 0] + pod.non_zero[0]
        if resource == MEMORY:
            return allocatable, table.non_zero_requested[rows, 1] + pod.non_zero[1]
        return allocatable, table.requested[rows, col] + pod.requests.get(resource, 0)

    def _containers_scoring_columns(
        self, resource: str, asked: Mapping[str, int], table: NodeTable, rows: Indexes
    ) -> tuple[IntArray, IntArray]:
        """As `_scoring_columns`, the pod counted by `Pod.score_requests` (the node by
        its non-zero and plain requests as ever)."""
        col = table.column(resource)
        amount = asked.get(resource, 0)
        if col is None or (amount == 0 and is_scalar_resource_name(resource)):
            zeros = np.zeros(len(rows), dtype=np.int64)
            return zeros, zeros
        allocatable = table.allocatable[rows, col]
        if resource == CPU:
            return allocatable, table.non_zero_requested[rows, 0] + amount
        if resource == MEMORY:
            return allocatable, table.non_zero_requested[rows, 1] + amount
        return allocatable, table.requested[rows, col] + amount

    def _broken_linear(self, utilization: IntArray) -> IntArray:
        shape = self.shape
        out = np.full(utilization.shape, shape[-1][1], dtype=np.int64)
        assigned = np.zeros(utilization.shape, dtype=bool)
        for i, (point, score) in enumerate(shape):
            here = ~assigned & (utilization <= point)
            if i == 0:
                out[here] = score
            else:
                prev_point, prev_score = shape[i - 1]
                # Go's integer division truncates towards zero (a falling shape's
                # numerator is negative, where Python's // would floor).
                rise = (score - prev_score) * (utilization[here] - prev_point)
                out[here] = prev_score + np.sign(rise) * (np.abs(rise) // (point - prev_point))
            assigned |= here
        return out


def _least_allocated_everywhere(
    allocatable: list[IntArray], requested: list[IntArray], weights: list[int]
) -> IntArray:
    """LeastAllocated where every row has some of every scored resource (the usual case):
    the general path's integer arithmetic without its masks, since every weight counts."""
    total: IntArray | int = 0
    for alloc, req, weight in zip(allocatable, requested, weights, strict=True):
        per = np.where(req > alloc, 0, (alloc - req) * 100 // alloc)
        total = total + per * weight if weight != 1 else total + per
    return np.asarray(total // sum(weights), dtype=np.int64)


def _strings(args: Mapping[str, Any], key: str) -> list[str]:
    value = args.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PluginArgsError(key, "must be a list of resource names")
    return value


def _scoring_resources(raw: Any) -> tuple[ScoringResource, ...]:
    if raw is None:
        return (ScoringResource(CPU, 1), ScoringResource(MEMORY, 1))
    if not isinstance(raw, list):
        raise PluginArgsError("scoringStrategy.resources", "must be a list of {name, weight}")
    out = []
    for i, item in enumerate(raw):
        name = item.get("name") if isinstance(item, Mapping) else None
        weight = item.get("weight", 1) if isinstance(item, Mapping) else None
        if not name:
            raise PluginArgsError(f"scoringStrategy.resources[{i}].name", "is required")
        if not isinstance(weight, int) or not 1 <= weight <= 100:
            raise PluginArgsError(
                f"scoringStrategy.resources[{i}].weight",
                f"must be an integer from 1 to 100 (got {weight!r})",
            )
        out.append(ScoringResource(str(name), weight))
    return tuple(out)


def _shape(raw: Mapping[str, Any]) -> list[tuple[int, int]]:
    points = raw.get("shape")
    if not isinstance(points, list) or not points:
        raise PluginArgsError(
            "scoringStrategy.requestedToCapacityRatio.shape",
            "must list at least one {utilization, score}",
        )
    shape: list[tuple[int, int]] = []
    for i, point in enumerate(points):
        where = f"scoringStrategy.requestedToCapacityRatio.shape[{i}]"
        utilization, score = point.get("utilization"), point.get("score")
        if not isinstance(utilization, int) or not 0 <= utilization <= MAX_UTILIZATION:
            raise PluginArgsError(f"{where}.utilization", "must be an integer from 0 to 100")
        if not isinstance(score, int) or not 0 <= score <= MAX_CUSTOM_PRIORITY_SCORE:
            raise PluginArgsError(f"{where}.score", "must be an integer from 0 to 10")
        if shape and utilization <= shape[-1][0]:
            raise PluginArgsError(
                f"{where}.utilization", "must be greater than the previous point's"
            )
        shape.append((utilization, score * (100 // MAX_CUSTOM_PRIORITY_SCORE)))
    return shape
