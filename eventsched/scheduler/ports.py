"""What the scheduler needs from a cluster, as a protocol.

`eventsched.cluster.kube` and `eventsched.cluster.sim` implement it
structurally; the scheduler never imports them (the layer contracts in
pyproject.toml, checked by lint-imports), the CLI wires one in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from eventsched.model import Pod
from eventsched.model.changes import ApiError, BindOutcome, ChangeType, ClusterChange
from eventsched.model.volumes import PersistentVolume, PersistentVolumeClaim

__all__ = ["ApiError", "BindOutcome", "ChangeType", "Cluster", "ClusterChange"]


class Cluster(Protocol):
    def start(self, on_change: Callable[[ClusterChange], None]) -> None:
        """Begin list+watch; deliver every current object as ADDED, then changes, from any thread."""

    def wait_synced(self, timeout: float | None = None) -> bool:
        """True once the initial list of nodes and pods has been delivered."""

    def bind(self, pod: Pod, node_name: str) -> BindOutcome:
        """POST the pods/binding subresource (or its simulation). Must be thread-safe."""

    def preempt(self, victim: Pod, preemptor: Pod) -> None:
        """kube-scheduler's `PreemptPod`: the victim's DisruptionTarget condition, then its
        deletion (model/preemption.py). A victim already gone is no error; ApiError otherwise."""

    def emit_event(self, pod: Pod, event_type: str, reason: str, action: str, message: str) -> None:
        """Write a core Event about the pod (Scheduled, FailedScheduling) as kube-scheduler does."""

    def set_unschedulable(
        self, pod: Pod, message: str, nominated_node: str = "", reason: str = "Unschedulable"
    ) -> None:
        """Set PodScheduled=False with the reason (Unschedulable, or SchedulerError) and message."""

    def bind_volume(self, volume: str, claim: PersistentVolumeClaim) -> None:
        """Update the PersistentVolume pre-bound to the claim (VolumeBinding's PreBind:
        `spec.claimRef` and `pv.kubernetes.io/bound-by-controller`); the PV controller
        completes the binding. Raises ApiError. Must be thread-safe."""

    def read_volume(self, name: str) -> PersistentVolume:
        """GET the PersistentVolume. Raises ApiError (404 included). Must be thread-safe."""

    def read_claim(self, namespace: str, name: str) -> PersistentVolumeClaim:
        """GET the PersistentVolumeClaim. Raises ApiError (404 included). Must be thread-safe."""

    def stop(self) -> None: ...
