"""Values that pass between the runtime and plugins."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eventsched.framework.status import Status
from eventsched.model import IntArray, Node, NodeTable, Pod


@dataclass(slots=True)
class QueuedPodInfo:
    """A pod as the queue holds it: what QueueSort compares and backoff counts."""

    pod: Pod
    #: When it last entered the queue (monotonic seconds, for ordering and backoff).
    timestamp: float
    #: Arrival order, a stable tie-break for equal timestamps.
    sequence: int = 0
    attempts: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    #: Set when the pod failed for a scheduler error rather than a plugin's verdict.
    errored: bool = False


class NodeInfo:
    """One row of the NodeTable seen as a node, for plugins written per node."""

    __slots__ = ("row", "table")

    def __init__(self, table: NodeTable, row: int) -> None:
        self.table = table
        self.row = row

    @property
    def node(self) -> Node:
        return self.table.nodes[self.row]

    @property
    def name(self) -> str:
        return self.table.names[self.row]

    @property
    def pods(self) -> Mapping[str, Pod]:
        return self.table.pods[self.row]

    def allocatable(self, resource: str) -> int:
        col = self.table.column(resource)
        return 0 if col is None else int(self.table.allocatable[self.row, col])

    def requested(self, resource: str) -> int:
        col = self.table.column(resource)
        return 0 if col is None else int(self.table.requested[self.row, col])


@dataclass(slots=True)
class BatchFilterResult:
    """One verdict per candidate row: -1 passes, k >= 0 fails with `statuses[k]`.

    Failing rows share a handful of distinct statuses ("Insufficient cpu",
    one per distinct taint, ...), so a rejection costs an int, not an object.
    """

    verdict: IntArray
    statuses: list[Status] = field(default_factory=list)
    #: Made by `passing`: every row passed, the runtime need not look at `verdict`.
    all_passed: bool = False

    @classmethod
    def passing(cls, count: int) -> BatchFilterResult:
        return cls(np.full(count, -1, dtype=np.int64), [], True)

    @classmethod
    def from_mask(cls, passed: np.ndarray, status: Status) -> BatchFilterResult:
        verdict = np.where(passed, -1, 0).astype(np.int64)
        return cls(verdict, [status])

    @property
    def passed(self) -> np.ndarray:
        return self.verdict < 0


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Nodes a PreFilter plugin already knows are the only candidates (None: all nodes)."""

    node_names: frozenset[str] | None = None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """A PostFilter plugin's result: the pod's nomination (upstream's ModeOverride: ""
    clears it; no result at all leaves it), and, when the plugin preempts, what the
    scheduler must do once the decision is durable."""

    nominated_node_name: str = ""
    #: Pods to evict from the nominated node so the pod fits there (preemption's victims).
    victims: tuple[Pod, ...] = ()
    #: Lower-priority pods nominated to that node: their nomination is cleared.
    lower_nominated: tuple[Pod, ...] = ()
    #: The decision as the log keeps it (`preempted`'s data); empty: nothing decided.
    record: Mapping[str, Any] = field(default_factory=dict)
    #: The nodes whose candidacy was as good on every criterion (the choice fell to the
    #: first found): what the shadow calls a tie.
    tied: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """A kind of change that may make a rejected pod schedulable (EnqueueExtensions)."""

    resource: str  # "Node", "Pod", "AssignedPod", a storage kind (model/volumes.py), "*"
    action: str  # "Add", "Update", "Delete", "*"

    def matches(self, other: ClusterEvent) -> bool:
        return self.resource in ("*", other.resource) and self.action in ("*", other.action)


NODE_ADD = ClusterEvent("Node", "Add")
NODE_UPDATE = ClusterEvent("Node", "Update")
NODE_DELETE = ClusterEvent("Node", "Delete")
ASSIGNED_POD_ADD = ClusterEvent("AssignedPod", "Add")
ASSIGNED_POD_UPDATE = ClusterEvent("AssignedPod", "Update")
ASSIGNED_POD_DELETE = ClusterEvent("AssignedPod", "Delete")
WILDCARD_EVENT = ClusterEvent("*", "*")
# Storage objects (model/volumes.py): the resources are their kinds, as the scheduler's
# event handlers name them (`ClusterEvent(obj.kind, action)`).
PVC_ADD = ClusterEvent("PersistentVolumeClaim", "Add")
PVC_UPDATE = ClusterEvent("PersistentVolumeClaim", "Update")
PV_ADD = ClusterEvent("PersistentVolume", "Add")
PV_UPDATE = ClusterEvent("PersistentVolume", "Update")
STORAGE_CLASS_ADD = ClusterEvent("StorageClass", "Add")
STORAGE_CLASS_UPDATE = ClusterEvent("StorageClass", "Update")
CSI_NODE_ADD = ClusterEvent("CSINode", "Add")
CSI_NODE_UPDATE = ClusterEvent("CSINode", "Update")
CSI_DRIVER_ADD = ClusterEvent("CSIDriver", "Add")
CSI_DRIVER_UPDATE = ClusterEvent("CSIDriver", "Update")
CSI_STORAGE_CAPACITY_ADD = ClusterEvent("CSIStorageCapacity", "Add")
CSI_STORAGE_CAPACITY_UPDATE = ClusterEvent("CSIStorageCapacity", "Update")
