"""`cluster.kube`: the cluster protocol on a real API server, with the official client."""

from eventsched.cluster.kube.access import REQUIRED_ACCESS, Access
from eventsched.cluster.kube.adapter import KubeCluster
from eventsched.cluster.kube.connection import ClientConnection, KubeConfigError, api_client
from eventsched.cluster.kube.election import LeaderElector, LeaseSettings

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
