"""What the scheduler needs from a cluster, as a protocol.

`eventsched.cluster.kube` and `eventsched.cluster.sim` implement it
structurally; the scheduler never imports them (the layer contracts in
pyproject.toml, checked by lint-imports), the CLI wires one in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from eventsched.model import Node, Pod
from eventsched.model.changes import ApiError, BindOutcome, ChangeType, ClusterChange
from eventsched.model.volumes import CSINode, PersistentVolume, PersistentVolumeClaim

__all__ = ["ApiError", "BindOutcome", "ChangeType", "Cluster", "ClusterChange"]


class Cluster(Protocol):
    def start(self, on_change: Callable[[ClusterChange], None]) -> None:
        """Begin list+watch; deliver every current object as ADDED, then changes, from any thread."""

    def wait_synced(self, timeout: float | None = None) -> bool:
        """True once the initial list of nodes and pods has been delivered."""

    def relist(self) -> None:
        """List everything again, delivering each current object (as ADDED or MODIFIED, and
        DELETED for what is gone) before changes that follow; `wait_synced` is False until
        the new lists are delivered. The scheduler resynchronises so after its log lost
        its tail (a database failover)."""

    def bind(self, pod: Pod, node_name: str) -> BindOutcome:
        """POST the pods/binding subresource (or its simulation). Must be thread-safe."""

    def preempt(self, victim: Pod, preemptor: Pod) -> None:
        """kube-scheduler's `PreemptPod`: the victim's DisruptionTarget condition, then its
        deletion (model/preemptionwrites.py). A victim already gone is no error; ApiError otherwise."""

    def emit_event(
        self,
        pod: Pod,
        event_type: str,
        reason: str,
        action: str,
        message: str,
        related: Pod | None = None,
    ) -> None:
        """Write a core Event about the pod (Scheduled, FailedScheduling) as kube-scheduler does.

        `related`: the Event's related object, the pod being scheduled when the Event is about
        another (a victim's Preempted Event names its preemptor); the Event is then reported
        by the related pod's scheduler, whose profile's recorder wrote it upstream."""

    def set_unschedulable(
        self,
        pod: Pod,
        message: str,
        nominated_node: str | None = None,
        reason: str = "Unschedulable",
    ) -> None:
        """Set PodScheduled=False with the reason (Unschedulable, or SchedulerError) and message,
        as kube-scheduler v1.28's `updatePod`, in one status patch.

        `nominated_node`: None leaves status.nominatedNodeName alone; a name sets it and ""
        clears it (NominatingInfo's ModeOverride), written only when it differs from
        `pod.nominated_node_name`."""

    def clear_nomination(self, pod: Pod) -> None:
        """kube-scheduler's `util.ClearNominatedNodeName` for one pod: a status patch emptying
        status.nominatedNodeName, skipped when `pod.nominated_node_name` is empty (nothing is
        written either when the cluster's pod has none). A pod gone is no error; ApiError
        otherwise."""

    def bind_volume(self, volume: str, claim: PersistentVolumeClaim) -> None:
        """Update the PersistentVolume pre-bound to the claim (VolumeBinding's PreBind:
        `spec.claimRef` and `pv.kubernetes.io/bound-by-controller`); the PV controller
        completes the binding. Raises ApiError. Must be thread-safe."""

    def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        """Update the PersistentVolumeClaim with the `volume.kubernetes.io/selected-node`
        annotation (VolumeBinding's PreBind of a claim to provision); the external
        provisioner and the PV controller do the rest. Raises ApiError. Must be
        thread-safe."""

    def read_volume(self, name: str) -> PersistentVolume:
        """GET the PersistentVolume. Raises ApiError (404 included). Must be thread-safe."""

    def read_claim(self, namespace: str, name: str) -> PersistentVolumeClaim:
        """GET the PersistentVolumeClaim. Raises ApiError (404 included). Must be thread-safe."""

    def read_node(self, name: str) -> Node:
        """GET the Node (VolumeBinding's PreBind checks its volumes' node affinity against
        its labels). Raises ApiError (404 included). Must be thread-safe."""

    def read_csi_node(self, name: str) -> CSINode:
        """GET the node's CSINode (its migrated in-tree plugins). Raises ApiError (404
        included). Must be thread-safe."""

    def stop(self, abandon: bool = False) -> None:
        """Stop watching; `abandon`: drop queued writes instead of finishing them."""
