"""A cluster the shadow cannot write to: reads pass, writes are refused and said.

The shadow binds, evicts and reports nothing; nothing in its wiring asks to. Should a
part ever ask (a bug), the write is refused here with an error line, never sent: the
cluster's scheduler is another's. Deployed, the shadow's role allows get, list and
watch only (deploy/shadow/), so the API server would refuse it as well.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from eventsched.model import Node, Pod
from eventsched.model.changes import BindOutcome, ClusterChange
from eventsched.model.volumes import CSINode, PersistentVolume, PersistentVolumeClaim
from eventsched.scheduler.ports import ApiError, Cluster

log = structlog.get_logger(__name__)

#: The HTTP status a refused write answers with, as the API server's authorizer would.
FORBIDDEN = 403


class ReadOnlyCluster:
    """Implements `Cluster` over another, forwarding its reads and refusing its writes."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        #: Writes refused (zero unless a part of the shadow has a bug).
        self.refused = 0

    def start(self, on_change: Callable[[ClusterChange], None]) -> None:
        self.cluster.start(on_change)

    def wait_synced(self, timeout: float | None = None) -> bool:
        return self.cluster.wait_synced(timeout)

    def relist(self) -> None:
        self.cluster.relist()

    def stop(self, abandon: bool = False) -> None:
        self.cluster.stop(abandon)

    def read_volume(self, name: str) -> PersistentVolume:
        return self.cluster.read_volume(name)

    def read_claim(self, namespace: str, name: str) -> PersistentVolumeClaim:
        return self.cluster.read_claim(namespace, name)

    def read_node(self, name: str) -> Node:
        return self.cluster.read_node(name)

    def read_csi_node(self, name: str) -> CSINode:
        return self.cluster.read_csi_node(name)

    def _refuse(self, write: str) -> str:
        self.refused += 1
        message = f"the shadow writes nothing to the cluster: {write} refused"
        log.error(message)
        return message

    def bind(self, pod: Pod, node_name: str) -> BindOutcome:
        reason = self._refuse(f"binding {pod.key} to {node_name}")
        return BindOutcome(False, FORBIDDEN, reason, final=True)

    def preempt(self, victim: Pod, preemptor: Pod) -> None:
        raise ApiError(FORBIDDEN, self._refuse(f"preempting {victim.key} for {preemptor.key}"))

    def emit_event(
        self,
        pod: Pod,
        event_type: str,
        reason: str,
        action: str,
        message: str,
        related: Pod | None = None,
    ) -> None:
        self._refuse(f"the {reason} Event on {pod.key}")

    def set_unschedulable(
        self,
        pod: Pod,
        message: str,
        nominated_node: str | None = None,
        reason: str = "Unschedulable",
    ) -> None:
        self._refuse(f"the PodScheduled condition of {pod.key}")

    def clear_nomination(self, pod: Pod) -> None:
        raise ApiError(FORBIDDEN, self._refuse(f"clearing the nomination of {pod.key}"))

    def bind_volume(self, volume: str, claim: PersistentVolumeClaim) -> None:
        raise ApiError(FORBIDDEN, self._refuse(f"binding volume {volume}"))

    def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        raise ApiError(
            FORBIDDEN,
            self._refuse(f"selecting node {node_name} for claim {claim.namespace}/{claim.name}"),
        )
