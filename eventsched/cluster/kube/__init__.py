"""`cluster.kube`: the cluster protocol on a real API server, with the official client.

The names below are imported on first use (`eventsched._lazy`), so that
`prefetch` can ask for the first lists before the adapter and the model are
imported.
"""

from typing import TYPE_CHECKING

from eventsched._lazy import exports

if TYPE_CHECKING:
    from eventsched.cluster.kube.access import REQUIRED_ACCESS, Access
    from eventsched.cluster.kube.adapter import KubeCluster
    from eventsched.cluster.kube.connection import ClientConnection, KubeConfigError, api_client
    from eventsched.cluster.kube.election import LeaderElector, LeaseSettings

__getattr__ = exports(
    __name__,
    {
        "REQUIRED_ACCESS": "access",
        "Access": "access",
        "KubeCluster": "adapter",
        "ClientConnection": "connection",
        "KubeConfigError": "connection",
        "api_client": "connection",
        "LeaderElector": "election",
        "LeaseSettings": "election",
    },
)

__all__ = [
    "REQUIRED_ACCESS",
    "Access",
    "ClientConnection",
    "KubeCluster",
    "KubeConfigError",
    "LeaderElector",
    "LeaseSettings",
    "api_client",
]
