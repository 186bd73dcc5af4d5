"""Cluster adapters: where nodes and pods come from and where bindings go.

`sim` keeps a cluster in memory, read from ordinary manifests
(`load_manifests`) or generated (`generate_cluster`); `kube` talks to a real
API server. Both satisfy `eventsched.scheduler.ports.Cluster` structurally:
this package may import only `eventsched.model`.
"""

from eventsched.cluster.generate import generate_cluster, generate_manifests
from eventsched.cluster.manifests import load_manifests
from eventsched.cluster.sim import SimulatedCluster
from eventsched.cluster.types import BindOutcome, ChangeType, ClusterChange, LoadedCluster, SimEvent

__all__ = [
    "BindOutcome",
    "ChangeType",
    "ClusterChange",
    "LoadedCluster",
    "SimEvent",
    "SimulatedCluster",
    "generate_cluster",
    "generate_manifests",
    "load_manifests",
]
