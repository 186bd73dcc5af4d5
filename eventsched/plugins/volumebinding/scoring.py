"""VolumeBinding's scoring under StorageCapacityScoring (1.33 alpha, 1.37 beta and on by default).

`shape` args (`SetDefaults_VolumeBindingArgs`, `ValidateVolumeBindingArgsWithOptions`): with
the gate on, unset or empty means `[{utilization: 0, score: 10}, {utilization: 100, score:
0}]` (the inverse of VolumeCapacityPriority's), scores scaled x10; with it off a shape is
refused.

Score (`volume_binding.go` Score, `scorer.go`): per node, the claims Filter matched with
static volumes, grouped by the volume's class (requested: the claims' sizes, capacity:
the volumes'); where there are none, the claims to provision grouped by class, each
class's capacity that of the CSIStorageCapacity its last claim's check found (assigned,
not summed) and its requested the claims' sizes, a claim whose check needed no capacity
left out. Each class scores `shape(requested * 100 / capacity)` (`shape(100)` for no
capacity or more requested than there is), the node the rounded mean; 0 with no class.
So a node whose volumes or pools keep the most room free scores highest.

The CSIStorageCapacity a claim's check finds is the first of its informer's list that
is of the class, holds the claim and is seen by the node: Go's cache lists in no set
order, eventsched lists in the order it observed them, which differs only where
several such objects hold the claim on one node. A matching capacity with
`maximumVolumeSize` but no `capacity` (where upstream would dereference nil) counts as
no capacity.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eventsched.framework import MAX_NODE_SCORE, PluginArgsError
from eventsched.model import Node
from eventsched.model.csicapacity import CSIStorageCapacity
from eventsched.model.storage import StorageObjects
from eventsched.model.volumes import PersistentVolumeClaim
from eventsched.plugins.volumebinding.binder import PodVolumes

MAX_UTILIZATION = 100
#: Shape scores are given 0..10 (`MaxCustomPriorityScore`) and scaled to 0..100.
MAX_CUSTOM_PRIORITY_SCORE = 10
DEFAULT_SHAPE: tuple[tuple[int, int], ...] = ((0, MAX_CUSTOM_PRIORITY_SCORE), (100, 0))


@dataclass(slots=True)
class ClassResource:
    """`StorageResource` of one class on one node."""

    requested: int = 0
    capacity: int = 0


def parse_shape(raw: Any, *, sorted_reason: str) -> tuple[tuple[int, int], ...]:
    """`shape` with the gate on: defaulted when unset or empty, else `validateFunctionShape`'s
    checks (utilization 0..100 increasing, score 0..10); `sorted_reason` is the version's
    wording of the order check."""
    if raw is None or raw == []:
        return DEFAULT_SHAPE
    if not isinstance(raw, list):
        raise PluginArgsError("shape", "must be a list of {utilization, score}")
    points: list[tuple[int, int]] = []
    for i, point in enumerate(raw):
        if not isinstance(point, Mapping) or set(point) - {"utilization", "score"}:
            raise PluginArgsError(f"shape[{i}]", "must be a map of utilization and score")
        values = []
        for key, top in (("utilization", MAX_UTILIZATION), ("score", MAX_CUSTOM_PRIORITY_SCORE)):
            value = point.get(key, 0)
            if isinstance(value, bool) or not isinstance(value, int):
                raise PluginArgsError(f"shape[{i}].{key}", f"must be an integer (got {value!r})")
            if not 0 <= value <= top:
                raise PluginArgsError(
                    f"shape[{i}].{key}", f"Invalid value: {value}: not in valid range [0, {top}]"
                )
            values.append(value)
        if points and values[0] <= points[-1][0]:
            raise PluginArgsError(
                f"shape[{i}].utilization", f"Invalid value: {values[0]}: {sorted_reason}"
            )
        points.append((values[0], values[1]))
    return tuple(points)


def broken_linear(shape: Sequence[tuple[int, int]], p: int) -> int:
    """`helper.BuildBrokenLinearFunction` on scaled points, Go's truncating division."""
    for i, (utilization, score) in enumerate(shape):
        if p <= utilization:
            if i == 0:
                return score
            prev_u, prev_s = shape[i - 1]
            return prev_s + _go_div((score - prev_s) * (p - prev_u), utilization - prev_u)
    return shape[-1][1]


def scaled(shape: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    return tuple((u, s * factor) for u, s in shape)


def node_score(
    shape: Sequence[tuple[int, int]], volumes: PodVolumes, node: Node, storage: StorageObjects
) -> int:
    """The node's score from what Filter found for it (`podVolumesByNode`)."""
    classes: dict[str, ClassResource] = {}
    if volumes.static_bindings:
        for binding in volumes.static_bindings:
            resource = classes.setdefault(binding.volume.storage_class, ClassResource())
            resource.requested += binding.claim.storage
            resource.capacity += binding.volume.storage
    else:
        for claim in volumes.dynamic_provisions:
            found = _node_capacity(claim, node, storage)
            if found is None:
                continue
            resource = classes.setdefault(claim.storage_class, ClassResource())
            resource.capacity = found.capacity or 0
            resource.requested += claim.storage
    if not classes:
        return 0
    total = sum(_class_score(shape, r) for r in classes.values())
    return math.floor(total / len(classes) + 0.5)  # Go's math.Round of a value >= 0


def _class_score(shape: Sequence[tuple[int, int]], resource: ClassResource) -> int:
    if resource.capacity == 0 or resource.requested > resource.capacity:
        return broken_linear(shape, MAX_UTILIZATION)
    return broken_linear(shape, resource.requested * MAX_UTILIZATION // resource.capacity)


def _node_capacity(
    claim: PersistentVolumeClaim, node: Node, storage: StorageObjects
) -> CSIStorageCapacity | None:
    """`hasEnoughCapacity`'s CSIStorageCapacity for the claim on the node: None where the
    claim needs no capacity check (no size, no CSIDriver asking for it)."""
    storage_class = storage.classes.get(claim.storage_class)
    if not claim.storage or storage_class is None:
        return None
    driver = storage.csi_drivers.get(storage_class.provisioner)
    if driver is None or not driver.storage_capacity:
        return None
    for capacity in storage.capacities.values():
        topology = capacity.node_topology
        if (
            capacity.storage_class == storage_class.name
            and topology is not None
            and capacity.holds(claim.storage)
            and topology.matches(node.labels)
        ):
            return capacity
    return None


def _go_div(a: int, b: int) -> int:
    """Go's integer division: truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q
