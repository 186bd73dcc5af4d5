"""NodeResourcesBalancedAllocation: favour nodes whose resources are used evenly (v1.28).

For each scored resource the fraction requested/allocatable (the pod's own
request included, capped at 1) is taken; the score is
`int64((1 - std) * MaxNodeScore)` with std the standard deviation of the
fractions: `|f1 - f2| / 2` for two, the population formula for more, 0 for
fewer. Upstream's `resourceAllocationScorer` with `useRequested: true`:
plain requests (`resourcehelper.PodRequests` and `NodeInfo.Requested`), not
the non-zero defaults NodeResourcesFit scores with. A resource a node has
none of (allocatable 0) drops out of that node's fractions; an extended
resource the pod does not request drops out of every node's.

Everything runs over the candidate rows at once; the float operations are
upstream's, in upstream's order, so the truncated scores match bit for bit.

By version (`balanced_allocation.go`):
- v1.28 has no PreScore Skip; from 1.33 (kubernetes#130260; v1.32.0 has none) PreScore
  Skips a pod that requests none of the scored resources (`isBestEffortPod`), so the
  plugin is not in its score table, and Score without PreScore gives it 0 everywhere.
- From 1.36 (kubernetes#135573; v1.35.0 has v1.28's formula) the score is how much the
  pod improves the node's balance: with `b` the formula above, `50 + (50 + b(node's
  requests + pod's) - b(node's requests)) / 2` (Go's integer division), 75 for no change,
  between 50 and 100.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from eventsched.framework import (
    LEGACY_FEATURES,
    MAX_NODE_SCORE,
    SKIP,
    CycleState,
    Features,
    Handle,
    PluginArgsError,
    Status,
    check_args,
    resource_specs,
)
from eventsched.model import BoolArray, Indexes, IntArray, NodeTable, Pod
from eventsched.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource_name

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME
DEFAULT_RESOURCES = (CPU, MEMORY)

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class PodRequests:
    """PreScore's state: the pod's request of each scored resource, in the args' order."""

    amounts: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Fractions:
    """Per scored resource, each row's capped fraction and whether it counts on that row."""

    values: list[FloatArray]
    counted: list[BoolArray]
    #: Every resource counts on every row (no node lacks one): the usual case.
    all_counted: bool = False


class NodeResourcesBalancedAllocation:
    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args, ("resources",))
        self.resources = parse_resources(args.get("resources"))
        self.skips_best_effort = features.since("1.33")
        self.scores_improvement = features.since("1.36")

    def pod_requests(self, pod: Pod) -> PodRequests:
        return PodRequests(tuple(pod.requests.get(name, 0) for name in self.resources))

    def pre_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> Status | None:
        requests = self.pod_requests(pod)
        if self.best_effort(requests):
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, requests)
        return None

    def best_effort(self, requests: PodRequests) -> bool:
        """`isBestEffortPod` (1.33 on): the pod requests none of the scored resources."""
        return self.skips_best_effort and not any(requests.amounts)

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> IntArray:
        requests = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(requests, PodRequests):
            requests = self.pod_requests(pod)  # PreScore disabled: upstream computes it here
            if self.best_effort(requests):
                return np.zeros(len(rows), dtype=np.int64)
        with_pod = balanced_score(self.fractions(requests, table, rows), len(rows))
        if not self.scores_improvement:
            return with_pod
        without = balanced_score(self.fractions(requests, table, rows, False), len(rows))
        half = MAX_NODE_SCORE // 2
        # (50 + with - without) is 0..100: Go's truncating division is floor division.
        return half + (half + with_pod - without) // 2

    def fractions(
        self, requests: PodRequests, table: NodeTable, rows: Indexes, with_pod: bool = True
    ) -> Fractions:
        """Per resource, each row's capped fraction of the node's requests, the pod's added
        when `with_pod` (without it: 1.36's `allocated`, on the same resources)."""
        values: list[FloatArray] = []
        counted: list[BoolArray] = []
        everywhere = True
        for name, pod_request in zip(self.resources, requests.amounts, strict=True):
            col = _node_column(name, pod_request, table)
            if col is None:
                continue
            allocatable = table.allocatable[rows, col]
            requested = table.requested[rows, col] + (pod_request if with_pod else 0)
            here = allocatable != 0
            if here.all():
                safe = allocatable.astype(np.float64)
            else:
                everywhere = False
                safe = np.where(here, allocatable, 1).astype(np.float64)
            values.append(np.minimum(requested.astype(np.float64) / safe, 1.0))
            counted.append(here)
        return Fractions(values, counted, everywhere)


def _node_column(name: str, pod_request: int, table: NodeTable) -> int | None:
    """The NodeTable column upstream's `calculateResourceAllocatableRequest` reads, or None.

    None means (0, 0): the resource is left out on every node. That is the
    case for a scalar resource the pod does not request, a scalar resource no
    node has, and a name that is neither a base nor a scalar resource (such as
    `pods`, which NodeInfo keeps outside ScalarResources).
    """
    scalar = is_scalar_resource_name(name)
    if pod_request == 0 and scalar:
        return None
    if name in (CPU, MEMORY, EPHEMERAL_STORAGE) or scalar:
        return table.column(name)
    return None


def balanced_score(fractions: Fractions, count: int) -> IntArray:
    """upstream `balancedResourceScorer` on every row: `int64((1 - std) * MaxNodeScore)`."""
    if len(fractions.values) == 2 and fractions.all_counted:
        # Two resources on every row (cpu and memory, the default): the same operations
        # as the general path below takes for such a row, without its masks.
        first, second = fractions.values
        return ((1 - np.abs((first - second) / 2)) * float(MAX_NODE_SCORE)).astype(np.int64)
    n = np.zeros(count, dtype=np.int64)
    total = np.zeros(count, dtype=np.float64)
    first = np.zeros(count, dtype=np.float64)
    second = np.zeros(count, dtype=np.float64)
    for value, here in zip(fractions.values, fractions.counted, strict=True):
        first = np.where(here & (n == 0), value, first)
        second = np.where(here & (n == 1), value, second)
        total = total + np.where(here, value, 0.0)
        n = n + here
    std = np.zeros(count, dtype=np.float64)
    two = n == 2
    std[two] = np.abs((first[two] - second[two]) / 2)
    many = n > 2
    if many.any():
        mean = total[many] / n[many].astype(np.float64)
        squares = np.zeros(int(many.sum()), dtype=np.float64)
        for value, here in zip(fractions.values, fractions.counted, strict=True):
            deviation = value[many] - mean
            squares = squares + np.where(here[many], deviation * deviation, 0.0)
        std[many] = np.sqrt(squares / n[many].astype(np.float64))
    return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)


# -- args -----------------------------------------------------------------------------


def parse_resources(raw: Any) -> tuple[str, ...]:
    """`resources` as v1.28 defaults and validates it.

    Unset or empty: cpu and memory. A weight left out or 0 defaults to 1, and
    any other weight than 1 is refused (upstream: "must be 1"); a name may
    appear once.
    """
    specs = resource_specs(raw)
    if specs is None:
        return DEFAULT_RESOURCES
    names: list[str] = []
    for spec in specs:
        if spec.name in names:
            raise PluginArgsError(f"{spec.where}.name", f'Duplicate value: "{spec.name}"')
        if spec.weight != 0 and spec.weight != 1:
            raise PluginArgsError(
                f"{spec.where}.weight", f"Invalid value: {spec.weight}: must be 1"
            )
        names.append(spec.name)
    return tuple(names)
