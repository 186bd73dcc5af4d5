"""NodeResourcesAllocatable (Score + NormalizeScore), as scheduler-plugins v0.28.9.

Upstream (`pkg/noderesources/allocatable.go`) ranks nodes by how much they can
hold, not by how full they are: the pod's requests play no part. For every
resource of the `resources` arg it reads the node's allocatable amount
(`NodeInfo.Allocatable`: cpu in millicores, memory and ephemeral-storage in
bytes, scalar resources - extended, `hugepages-*`, `*kubernetes.io/*`,
`attachable-volumes-*` - by `Quantity.Value()`; any other name, `pods`
included, counts as 0), and computes in int64

    raw = sum(sign * allocatable[r] * weight[r]) / sum(weight[r])

with `sign` -1 in mode `Least` (smaller nodes score higher) and +1 in `Most`.
The multiplications and sums wrap around as Go's int64 does, and the
division truncates toward zero (Go), not toward -inf (Python's `//`).
NormalizeScore rescales the raw scores min-max to 0..100, again in int64:
`(raw - lowest) * 100 / (highest - lowest)`; when every raw score is equal
every node gets 0. A wrapped product can push a score out of 0..100, which the
runtime then reports as an Error, as kube-scheduler's framework does.

Args (upstream `NodeResourcesAllocatableArgs`, defaults from `apis/config/v1`):
`mode` (`Least` or `Most`, default `Least`) and `resources` (a list of
`{name, weight}`, default cpu 1<<20 and memory 1: a millicore weighs as much
as a MiB). Every weight must be positive ("resource Weight of memory should
be a positive value, got 0"); a name given twice keeps its last weight and is
summed once, as upstream's map does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from eventsched.framework import (
    LEGACY_FEATURES,
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    CycleState,
    Features,
    Handle,
    PluginArgsError,
    check_args,
    resource_specs,
)
from eventsched.model import Indexes, IntArray, NodeTable, Pod, label_key_problem
from eventsched.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY

NAME = "NodeResourcesAllocatable"
LEAST = "Least"
MOST = "Most"
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
_ARGS = ("mode", "resources")


@dataclass(frozen=True, slots=True)
class ResourceWeight:
    """One entry of `resources`: kube-scheduler's `ResourceSpec`."""

    name: str
    weight: int


@dataclass(frozen=True, slots=True)
class AllocatableArgs:
    """The args after upstream's defaulting and validation."""

    mode: str
    resources: tuple[ResourceWeight, ...]

    @property
    def weights(self) -> dict[str, int]:
        """upstream's `resourceToWeightMap`: a repeated name keeps its last weight."""
        return {r.name: r.weight for r in self.resources}


DEFAULT_MODE = LEAST
DEFAULT_RESOURCES = (ResourceWeight(CPU, 1 << 20), ResourceWeight(MEMORY, 1))


class NodeResourcesAllocatable:
    """Favour nodes with the least (or most) weighted allocatable resources."""

    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args, _ARGS)
        self.args = parse_args(args)
        self.weights = self.args.weights
        self.weight_sum = wrap(sum(self.weights.values()))

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> IntArray:
        return raw_scores(self.args.mode, self.weights, self.weight_sum, table, rows)

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: IntArray, rows: Indexes
    ) -> IntArray:
        return normalize(scores)


# -- scoring ------------------------------------------------------------------------


def raw_scores(
    mode: str, weights: Mapping[str, int], weight_sum: int, table: NodeTable, rows: Indexes
) -> IntArray:
    """upstream `resourceScorer` on every row, in wrapping int64 arithmetic."""
    total = np.zeros(len(rows), dtype=np.int64)
    for name, weight in weights.items():
        allocatable = allocatable_of(name, table, rows)
        signed = np.negative(allocatable) if mode == LEAST else allocatable
        total = total + signed * np.int64(weight)
    return go_div(total, weight_sum)


def allocatable_of(name: str, table: NodeTable, rows: Indexes) -> IntArray:
    """What upstream's `calculateResourceAllocatableRequest` reads for `name` on each row.

    cpu, memory and ephemeral-storage, and scalar resources, come from the
    node's allocatable (0 where a node has none); any other name is 0 on every
    node, because NodeInfo keeps no such quantity (`pods` is AllowedPodNumber,
    which upstream's switch does not read).
    """
    col = table.column(name)
    if col is None or not (name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar(name)):
        return np.zeros(len(rows), dtype=np.int64)
    return table.allocatable[rows, col].astype(np.int64)


def normalize(scores: IntArray) -> IntArray:
    """upstream `Allocatable.NormalizeScore`: min-max to MinNodeScore..MaxNodeScore in int64."""
    if len(scores) == 0:
        return scores
    # Go starts from highest = -MaxInt64 and lowest = MaxInt64.
    highest = max(-INT64_MAX, int(scores.max()))
    lowest = min(INT64_MAX, int(scores.min()))
    old_range = wrap(highest - lowest)
    if old_range == 0:
        scores[:] = MIN_NODE_SCORE
        return scores
    new_range = np.int64(MAX_NODE_SCORE - MIN_NODE_SCORE)
    shifted = (scores.astype(np.int64) - np.int64(lowest)) * new_range
    scores[:] = go_div(shifted, old_range) + np.int64(MIN_NODE_SCORE)
    return scores


# -- Go int64 arithmetic ----------------------------------------------------------


def wrap(value: int) -> int:
    """A Python int as the int64 Go would hold after overflowing."""
    return (value - INT64_MIN) % 2**64 + INT64_MIN


def go_div(values: IntArray, divisor: int) -> IntArray:
    """Go's int64 `values / divisor`: truncated toward zero, MinInt64 / -1 == MinInt64.

    A zero divisor (weights whose sum wraps to 0) is Go's runtime panic; here it
    raises, and the runtime turns that into an Error status for the attempt.
    """
    if divisor == 0:
        raise ZeroDivisionError("runtime error: integer divide by zero")
    values = np.asarray(values, dtype=np.int64)
    if divisor == -1:
        return np.negative(values)  # wraps MinInt64 onto itself, as Go does
    d = np.int64(divisor)
    quotient = np.floor_divide(values, d)
    inexact = np.remainder(values, d) != 0
    # Floor and truncation differ only when the signs differ and the division is inexact.
    return quotient + (inexact & ((values < 0) != (divisor < 0))).astype(np.int64)


# -- resource names -----------------------------------------------------------------


def is_scalar(name: str) -> bool:
    """`schedutil.IsScalarResourceName`: the names NodeInfo keeps in ScalarResources."""
    return (
        _is_extended(name)
        or name.startswith("hugepages-")
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


def _is_extended(name: str) -> bool:
    """`v1helper.IsExtendedResourceName`: not native, not `requests.`, and
    `requests.<name>` a qualified name (label key syntax)."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return label_key_problem("requests." + name) is None


# -- args ---------------------------------------------------------------------------


def parse_args(args: Mapping[str, Any]) -> AllocatableArgs:
    """Defaults as `SetDefaults_NodeResourcesAllocatableArgs`, checks as `NewAllocatable`
    (mode first, then each weight in order), with upstream's messages."""
    mode = args.get("mode")
    mode = "" if mode is None else mode
    if not isinstance(mode, str):
        raise PluginArgsError("mode", f"must be {LEAST} or {MOST} (got {mode!r})")
    if mode == "":
        mode = DEFAULT_MODE
    if mode not in (LEAST, MOST):
        raise PluginArgsError("mode", f"invalid mode, got {mode}")
    return AllocatableArgs(mode, parse_resources(args.get("resources")))


def parse_resources(raw: Any) -> tuple[ResourceWeight, ...]:
    specs = resource_specs(raw)
    if specs is None:
        return DEFAULT_RESOURCES
    parsed: list[ResourceWeight] = []
    for spec in specs:
        name, weight, where = spec.name, spec.weight, spec.where
        if not INT64_MIN <= weight <= INT64_MAX:
            raise PluginArgsError(f"{where}.weight", f"must fit in int64 (got {weight})")
        if weight <= 0:
            raise PluginArgsError(
                f"{where}.weight",
                f"resource Weight of {name} should be a positive value, got {weight}",
            )
        parsed.append(ResourceWeight(name, weight))
    return tuple(parsed)
