"""What a plugin may reach beyond its arguments: the snapshot, waiting pods, the clock, the log."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from eventsched.framework.sink import DecisionSink, record_input
from eventsched.framework.status import Status
from eventsched.framework.waiting import WaitingPods
from eventsched.model import Node, NodeTable, Pod
from eventsched.model.volumes import CSINode, PersistentVolume, PersistentVolumeClaim

#: CycleState key under which a plugin (StickyNode) names the pod's identity;
#: the binding cycle writes it into `bound`, and first placements are keyed by it.
IDENTITY_KEY = "eventsched.io/identity"
#: CycleState key under which a Reserve plugin (VolumeBinding) names the volumes it
#: assumed pre-bound (model/pvbinding.py's VolumeAssumption); `reserved` records them,
#: and the view's fold of it is the assumption (kube-scheduler's PV assume cache).
ASSUMED_VOLUMES_KEY = "eventsched.io/assumed-volumes"


class VolumeApi(Protocol):
    """The API calls of VolumeBinding's PreBind (kube-scheduler's binder has the clientset).

    Each raises `eventsched.model.changes.ApiError` when the API refuses or does not
    answer; each is called from a binder thread.
    """

    def bind_volume(self, volume: str, claim: PersistentVolumeClaim) -> None:
        """Write the volume's pre-binding to the claim (`GetBindVolumeToClaim`, then an
        update of the PersistentVolume)."""

    def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        """Write the claim's `volume.kubernetes.io/selected-node` annotation (an update of
        the PersistentVolumeClaim): its volume is to be provisioned for that node."""

    def read_volume(self, name: str) -> PersistentVolume:
        """The PersistentVolume as the API has it now."""

    def read_claim(self, namespace: str, name: str) -> PersistentVolumeClaim:
        """The PersistentVolumeClaim as the API has it now."""

    def read_node(self, name: str) -> Node:
        """The Node as the API has it now (its labels: the volumes' node affinity)."""

    def read_csi_node(self, name: str) -> CSINode:
        """The node's CSINode as the API has it now (the in-tree plugins migrated there)."""


def _no_placement(identity: str) -> str | None:
    return None


def _no_event(pod: Pod, event_type: str, reason: str, action: str, note: str) -> None:
    return None


class Handle:
    """kube-scheduler's `framework.Handle`, trimmed to what our plugins use.

    Plugins never import the store or the cluster (pyproject.toml's layers);
    the scheduler wires these callables to them instead:

    - `recorded_input`: while replaying, `replay_inputs` holds the values
      plugins recorded (`CycleState.record_input`: a Prometheus sample, a
      gang's count) and this returns the latest one instead of reading again.
    - `record_input`: the same record for a PreEnqueue plugin, which runs
      before any attempt (no CycleState); `Framework.run_pre_enqueue` points
      it at the pod being enqueued, on the loop thread.
    - `first_placement`: the node an identity was first bound to, from the
      log's projection, so sticky placement survives restarts.
    - `emit_event`: a Kubernetes Event on the pod (kube-scheduler's recorder).
    - `volumes`: the PersistentVolume and claim requests of VolumeBinding's PreBind.
    - `shutting_down`: set when the scheduler stops, so a binding cycle that waits
      (PreBind polling the API) gives up, as kube-scheduler's cancelled context does.
    """

    def __init__(
        self,
        table: NodeTable | None = None,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.table = table if table is not None else NodeTable()
        self.waiting_pods = WaitingPods()
        self.clock = clock
        self.monotonic = monotonic
        #: Where `record_input` writes while a PreEnqueue plugin runs; None otherwise.
        self.enqueue_sink: DecisionSink | None = None
        #: Posts a Binding; set by the scheduler to its cluster adapter, used by DefaultBinder.
        self.bind: Callable[[Pod, str], Status] | None = None
        self.first_placement: Callable[[str], str | None] = _no_placement
        self.emit_event: Callable[[Pod, str, str, str, str], None] = _no_event
        #: Set by the scheduler to its cluster adapter; None: no API to bind volumes through.
        self.volumes: VolumeApi | None = None
        self.shutting_down = threading.Event()
        #: (plugin, key) -> the value recorded; set only while replaying the log.
        self.replay_inputs: dict[tuple[str, str], Mapping[str, Any]] | None = None

    @property
    def replaying(self) -> bool:
        return self.replay_inputs is not None

    def record_input(self, plugin: str, key: str, value: Mapping[str, Any]) -> None:
        """PreEnqueue only: what the plugin read of the pod being enqueued, into the log."""
        if self.enqueue_sink is not None:
            record_input(self.enqueue_sink, plugin, key, value)

    def recorded_input(self, plugin: str, key: str) -> Mapping[str, Any] | None:
        """While replaying: the latest value `plugin` recorded under `key` up to this point.

        "Up to this point" includes earlier in the same attempt: a plugin that
        fetches in PreScore records there, and its Score reads that value.
        """
        if self.replay_inputs is None:
            return None
        return self.replay_inputs.get((plugin, key))
