"""The values the cluster adapters hand to the scheduler and to their callers.

`ClusterChange` and `BindOutcome` come from `eventsched.model`, shared with
the scheduler's `Cluster` protocol, which `cluster` may not import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from eventsched.model import Node, Pod
from eventsched.model.changes import BindOutcome, ChangeType, ClusterChange
from eventsched.model.objects import ClusterObject

__all__ = ["BindOutcome", "ChangeType", "ClusterChange", "LoadedCluster", "SimEvent"]


@dataclass(frozen=True, slots=True)
class SimEvent:
    """A core Event as the simulated cluster stored it, for tests and the CLI summary."""

    type: str
    reason: str
    action: str
    message: str
    pod_key: str
    pod_uid: str = ""
    reporting_controller: str = "eventsched"
    time: datetime = field(default_factory=lambda: datetime.now(UTC))
    #: The Event's related object (a victim's Preempted Event names its preemptor), if any.
    related_key: str = ""
    related_uid: str = ""


@dataclass(slots=True)
class LoadedCluster:
    """Nodes and pods read from manifests or generated, ready for `SimulatedCluster`."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    #: Namespaces, Services, the controllers of expanded workloads (selectors), and
    #: PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes, and
    #: PodDisruptionBudgets.
    objects: list[ClusterObject] = field(default_factory=list)
    #: Documents that look like mistakes, each as "where: why" (simulate warns of each).
    skipped: list[str] = field(default_factory=list)
    #: Kinds the simulation has no use for (Namespace, Service, ...), with their counts.
    unused: dict[str, int] = field(default_factory=dict)
