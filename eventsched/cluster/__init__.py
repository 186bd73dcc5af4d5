"""Cluster adapters: where nodes and pods come from and where bindings go.

`sim` keeps a cluster in memory, read from ordinary manifests
(`load_manifests`) or generated (`generate_cluster`); `kube` talks to a real
API server. Both satisfy `eventsched.scheduler.ports.Cluster` structurally:
this package may import only `eventsched.model`. The names below are
imported on first use (`eventsched._lazy`), so `eventsched.cluster.kube`
does not bring in the simulator.
"""

from typing import TYPE_CHECKING

from eventsched._lazy import exports

if TYPE_CHECKING:
    from eventsched.cluster.generate import generate_cluster, generate_manifests
    from eventsched.cluster.manifests import load_manifests
    from eventsched.cluster.sim import SimulatedCluster
    from eventsched.cluster.types import (
        BindOutcome,
        ChangeType,
        ClusterChange,
        LoadedCluster,
        SimEvent,
    )

__getattr__ = exports(
    __name__,
    {
        "generate_cluster": "generate",
        "generate_manifests": "generate",
        "load_manifests": "manifests",
        "SimulatedCluster": "sim",
        "BindOutcome": "types",
        "ChangeType": "types",
        "ClusterChange": "types",
        "LoadedCluster": "types",
        "SimEvent": "types",
    },
)

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
