"""The simulated cluster's PersistentVolume requests, and the PV controller that answers them.

VolumeBinding's PreBind updates a PersistentVolume pre-bound to a claim
(`bind_volume`: `spec.claimRef` with the claim's UID) and reads the volume and
the claim until the claim is bound (`read_volume`, `read_claim`), as
kube-scheduler does through its clientset. In a real cluster the PV
controller of kube-controller-manager then binds the claim; here
`SimulatedVolumes` plays it (`pv_controller.go` `bind`): the volume's phase
becomes Bound, the claim gets `spec.volumeName`, the
`pv.kubernetes.io/bind-completed` annotation and phase Bound; each change is
delivered as the informers would deliver it (the volume, then the claim).
`set_pv_controller(False)` stops it, so a test can see PreBind wait, and
time out, for a controller that never comes.

A claim to provision is updated with its selected node (`select_node`, the
`volume.kubernetes.io/selected-node` annotation); `SimulatedVolumes` then
plays every external provisioner too: it creates the volume `pvc-<claim
uid>` (the claim's class, size, access modes and volume mode; node
affinity `kubernetes.io/hostname In [the selected node]`, as a node-local
provisioner gives; no volume source) pre-bound to the claim, and the PV
controller binds them. `set_provisioner(False)` stops it, so a claim waits
for its volume; `set_provisioner(True, fails=True)` makes it give up as a
provisioner does, removing the annotation.
"""

from __future__ import annotations

from dataclasses import replace
from uuid import uuid4

from eventsched.cluster.simstate import SimState
from eventsched.cluster.types import ChangeType
from eventsched.model.changes import ApiError
from eventsched.model.objects import ClusterObject
from eventsched.model.pvbinding import BOUND, bind_volume_to_claim, claim_ref
from eventsched.model.volumes import PV, PVC, PersistentVolume, PersistentVolumeClaim
from eventsched.model.volumetopology import HOSTNAME_LABEL


def conflict(resource: str, name: str) -> ApiError:
    """The API server's answer to an update of an object changed since it was read."""
    return ApiError(
        409,
        f'Operation cannot be fulfilled on {resource} "{name}": the object has been modified; '
        "please apply your changes to the latest version and try again",
    )


def with_claim_uid(obj: ClusterObject, previous: ClusterObject | None = None) -> ClusterObject:
    """A claim gets a uid as the API server gives one, and keeps it when updated: a
    volume's claimRef names it."""
    if not isinstance(obj, PersistentVolumeClaim) or obj.uid:
        return obj
    uid = previous.uid if isinstance(previous, PersistentVolumeClaim) else ""
    return replace(obj, uid=uid or str(uuid4()))


class SimulatedVolumes:
    """`SimulatedCluster`'s volume requests (the scheduler's `Cluster` protocol) and PV
    controller, over the cluster's state; the cluster delegates to it."""

    __slots__ = ("_state", "provisioner", "provisioning_fails", "pv_controller")

    def __init__(self, state: SimState) -> None:
        self._state = state
        #: Whether the PV controller binds claims to the volumes pre-bound to them.
        self.pv_controller = True
        #: Whether a claim with a selected node gets a volume provisioned.
        self.provisioner = True
        #: Whether the provisioner gives up (removes the selected node) instead.
        self.provisioning_fails = False

    def bind_volume(self, volume: str, claim: PersistentVolumeClaim) -> None:
        """Update the volume pre-bound to the claim; 409 when another claim holds it."""
        with self._state.lock:
            current = self._volume_locked(volume)
            if current.claim_ref is not None and not current.bound_to(claim):
                raise conflict("persistentvolumes", volume)
            updated = bind_volume_to_claim(current, claim)
            if updated is not None:
                self._state.objects[updated.key] = updated
                self._state.feed.enqueue("MODIFIED", updated)
            if self.pv_controller:
                self._sync_volume_locked(updated or current)
        self._state.feed.deliver()

    def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        """Update the claim with its selected node; the provisioner answers (see the module)."""
        with self._state.lock:
            current = self._claim_locked(claim.namespace, claim.name)
            if current.selected_node != node_name:
                current = replace(current, selected_node=node_name)
                self._put_locked(current)
            if self.provisioner:
                self._provision_locked(current)
        self._state.feed.deliver()

    def set_provisioner(self, running: bool, fails: bool = False) -> None:
        """Stop or start the provisioner; `fails`: it gives up on every claim."""
        with self._state.lock:
            self.provisioner = running
            self.provisioning_fails = fails
            if running:
                for obj in list(self._state.objects.values()):
                    if isinstance(obj, PersistentVolumeClaim) and obj.selected_node:
                        self._provision_locked(obj)
        self._state.feed.deliver()

    def read_volume(self, name: str) -> PersistentVolume:
        with self._state.lock:
            return self._volume_locked(name)

    def read_claim(self, namespace: str, name: str) -> PersistentVolumeClaim:
        with self._state.lock:
            return self._claim_locked(namespace, name)

    def _claim_locked(self, namespace: str, name: str) -> PersistentVolumeClaim:
        found = self._state.objects.get(f"{PVC}/{namespace}/{name}")
        if not isinstance(found, PersistentVolumeClaim):
            raise ApiError(404, f'persistentvolumeclaims "{name}" not found')
        return found

    def _put_locked(
        self, obj: PersistentVolume | PersistentVolumeClaim, change: ChangeType = "MODIFIED"
    ) -> None:
        self._state.objects[obj.key] = obj
        self._state.feed.enqueue(change, obj)

    def _provision_locked(self, claim: PersistentVolumeClaim) -> None:
        """The external provisioner: a volume for the claim, or the selected node removed."""
        if claim.is_bound:
            return
        if self.provisioning_fails:
            self._put_locked(replace(claim, selected_node=""))
            return
        name = f"pvc-{claim.uid}"
        if f"{PV}/{name}" not in self._state.objects:
            volume = PersistentVolume(
                name=name,
                storage=claim.storage,
                access_modes=claim.access_modes,
                storage_class=claim.storage_class,
                volume_mode=claim.volume_mode,
                claim_ref=claim_ref(claim),
                node_affinity=(
                    {
                        "matchExpressions": [
                            {
                                "key": HOSTNAME_LABEL,
                                "operator": "In",
                                "values": [claim.selected_node],
                            }
                        ]
                    },
                ),
            )
            self._put_locked(volume, "ADDED")
            if self.pv_controller:
                self._sync_volume_locked(volume)

    def set_pv_controller(self, running: bool) -> None:
        """Stop or start the PV controller; started, it binds what waits for it."""
        with self._state.lock:
            self.pv_controller = running
            if running:
                for obj in list(self._state.objects.values()):
                    if isinstance(obj, PersistentVolume) and obj.claim_ref is not None:
                        self._sync_volume_locked(obj)
        self._state.feed.deliver()

    def _volume_locked(self, name: str) -> PersistentVolume:
        found = self._state.objects.get(f"{PV}/{name}")
        if not isinstance(found, PersistentVolume):
            raise ApiError(404, f'persistentvolumes "{name}" not found')
        return found

    def _sync_volume_locked(self, volume: PersistentVolume) -> None:
        """The PV controller's `bind` of a volume pre-bound to a claim not bound yet."""
        ref = volume.claim_ref
        if ref is None:
            return
        claim = self._state.objects.get(f"{PVC}/{ref.namespace}/{ref.name}")
        if not isinstance(claim, PersistentVolumeClaim) or claim.deleting:
            return
        if (ref.uid and ref.uid != claim.uid) or claim.volume_name not in ("", volume.name):
            return  # another claim of that name, or the claim is bound elsewhere
        if claim.is_bound and claim.phase == BOUND and volume.phase == BOUND:
            return
        bound_volume = replace(volume, claim_ref=claim_ref(claim), phase=BOUND)
        bound_claim = replace(claim, volume_name=volume.name, bind_completed=True, phase=BOUND)
        for obj in (bound_volume, bound_claim):
            self._state.objects[obj.key] = obj
            self._state.feed.enqueue("MODIFIED", obj)
