"""NodeResourceTopologyMatch's scoring strategies LeastAllocated, MostAllocated and
BalancedAllocation (v0.28.9 score.go, least_allocated.go, most_allocated.go,
balanced_allocation.go).

Each strategy scores one NUMA cell from the requested amounts and the cell's
`available` amounts; a node's score is the lowest non-zero cell score (0 when all
are 0). In `pod` scope the pod's effective request is scored; in `container` scope
every container (init first) is scored against the unchanged cells and the node
gets the truncated mean. Integer arithmetic is Go's int64 (truncating division);
the balanced strategy's variance is gonum's `stat.Variance` (the unbiased, n-1
sample variance with the corrected two-pass sum), so a single requested resource
gives NaN and Go's amd64 conversion of NaN to int64 (the smallest int64), which the
framework then reports as an invalid score, as upstream's does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from eventsched.framework import MAX_NODE_SCORE
from eventsched.plugins.noderesourcetopology.numa import NUMANode, go_value

#: `resourceToWeightMap`: resource name to weight.
Weights = Mapping[str, int]
ScoreStrategy = Callable[[Mapping[str, int], Mapping[str, int], Weights], int]
_DEFAULT_WEIGHT = 1
_MIN_INT64 = -(2**63)


def weight(weights: Weights, name: str) -> int:
    """`resourceToWeightMap.weight`: the configured weight, 1 when unset or below 1."""
    w = weights.get(name)
    return _DEFAULT_WEIGHT if w is None or w < 1 else w


def go_div(a: int, b: int) -> int:
    """Go's int64 division: truncation toward zero; dividing by zero panics."""
    if b == 0:
        raise ZeroDivisionError("integer divide by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def go_int64(x: float) -> int:
    """`int64(x)` on amd64: truncation toward zero; NaN and out-of-range give the smallest
    int64 (CVTTSD2SI's "integer indefinite")."""
    if math.isnan(x) or not -(2.0**63) <= x < 2.0**63:
        return _MIN_INT64
    return int(x)


def least_allocated(requested: Mapping[str, int], available: Mapping[str, int], w: Weights) -> int:
    """`leastAllocatedScoreStrategy`: weighted mean of (capacity - request) * 100 / capacity."""
    total = weights_sum = 0
    for name, amount in requested.items():
        score = _least_allocated_score(name, amount, available.get(name, 0))
        total += score * weight(w, name)
        weights_sum += weight(w, name)
    return go_div(total, weights_sum)


def _least_allocated_score(name: str, requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    cap = go_value(name, capacity)
    return go_div((cap - go_value(name, requested)) * MAX_NODE_SCORE, cap)


def most_allocated(requested: Mapping[str, int], available: Mapping[str, int], w: Weights) -> int:
    """`mostAllocatedScoreStrategy`: weighted mean of request * 100 / capacity."""
    total = weights_sum = 0
    for name, amount in requested.items():
        score = _most_allocated_score(name, amount, available.get(name, 0))
        total += score * weight(w, name)
        weights_sum += weight(w, name)
    return go_div(total, weights_sum)


def _most_allocated_score(name: str, requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return go_div(go_value(name, requested) * MAX_NODE_SCORE, go_value(name, capacity))


def balanced_allocation(
    requested: Mapping[str, int], available: Mapping[str, int], w: Weights
) -> int:
    """`balancedAllocationScoreStrategy`: int64((1 - variance of the fractions) * 100), 0 as
    soon as one request exceeds the cell (weights are not used)."""
    fractions: list[float] = []
    for name, amount in requested.items():
        capacity = go_value(name, available.get(name, 0))
        fraction = 1.0 if capacity == 0 else float(go_value(name, amount)) / float(capacity)
        if fraction > 1:
            return 0
        fractions.append(fraction)
    return go_int64((1 - gonum_variance(fractions)) * float(MAX_NODE_SCORE))


def gonum_sum(values: list[float]) -> float:
    """gonum's `floats.Sum` (internal/asm/f64 Sum, amd64) on a 16-byte aligned slice: four
    two-lane accumulators over blocks of 16, then 8, folded, then 4, 2, a horizontal add
    and the last odd element. Its order of additions decides the last bit."""
    n = len(values)
    if n == 0:
        return 0.0
    lanes = [[0.0, 0.0] for _ in range(4)]
    i = 0

    def add(acc: list[float], at: int) -> None:
        acc[0] += values[at]
        acc[1] += values[at + 1]

    for _ in range(n // 16):
        for k in range(8):
            add(lanes[k % 4], i + 2 * k)
        i += 16
    if n & 8:
        for k in range(4):
            add(lanes[k], i + 2 * k)
        i += 8
    s, s1, s2, s3 = lanes
    s[0] += s3[0]
    s[1] += s3[1]
    s1[0] += s2[0]
    s1[1] += s2[1]
    if n & 4:
        add(s, i)
        add(s1, i + 2)
        i += 4
    s[0] += s1[0]
    s[1] += s1[1]
    if n & 2:
        add(s, i)
        i += 2
    total = s[0] + s[1]
    if n & 1:
        total += values[i]
    return total


def _divide(a: float, b: float) -> float:
    """IEEE division as Go does it (x/0 is ±Inf, 0/0 NaN) rather than raising."""
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def gonum_variance(values: list[float]) -> float:
    """`stat.Variance(x, nil)`: corrected two-pass sum of squares over n - 1."""
    n = float(len(values))
    mean = _divide(gonum_sum(values), n)
    squares = compensation = 0.0
    for v in values:
        d = v - mean
        squares += d * d
        compensation += d
    unnormalised = squares - _divide(compensation * compensation, n)
    return _divide(unnormalised, n - 1)


def score_cells(
    requested: Mapping[str, int], nodes: list[NUMANode], strategy: ScoreStrategy, w: Weights
) -> int:
    """`scoreForEachNUMANode`: the lowest non-zero cell score, 0 when every cell scores 0.

    Upstream also stores each score at index NUMA id of a slice as long as the cell list,
    which panics (index out of range) when an id is not below the number of cells (cells
    node-0 and node-2 only, say); that is raised here as an error.
    """
    lowest = 0
    for node in nodes:
        score = strategy(requested, node.resources, w)
        if lowest == 0 or (score != 0 and score < lowest):
            lowest = score
        if node.numa_id >= len(nodes):
            raise IndexError(
                f"index out of range [{node.numa_id}] with length {len(nodes)}: NUMA zone "
                f"ids must be 0..{len(nodes) - 1} for scoring (upstream panics)"
            )
    return lowest


def container_mean(scores: list[int]) -> int:
    """`int64(stat.Mean(contScore, nil))` over the containers' scores."""
    as_floats = [float(s) for s in scores]
    return go_int64(_divide(gonum_sum(as_floats), float(len(as_floats))))
