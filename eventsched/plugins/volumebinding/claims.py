"""The pod's claims as VolumeBinding's PreFilter sorts them (binder.go `GetPodVolumeClaims`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from eventsched.model import Pod
from eventsched.model.podvolumes import PVC_RESOURCE, not_found, not_owner_message, pod_claims
from eventsched.model.storage import StorageObjects
from eventsched.model.volumes import LOST, WAIT_FOR_FIRST_CONSUMER, PersistentVolumeClaim
from eventsched.model.volumetopology import local_node_names


@dataclass(frozen=True, slots=True)
class PodVolumeClaims:
    """The pod's claims: bound, unbound of a WaitForFirstConsumer class, unbound immediate."""

    bound: tuple[PersistentVolumeClaim, ...]
    delayed: tuple[PersistentVolumeClaim, ...]
    immediate: tuple[PersistentVolumeClaim, ...]


class ClaimRefusal(Exception):
    """`podHasPVCs`' error: the pod cannot be scheduled until a claim changes."""


def pod_volume_claims(pod: Pod, storage: StorageObjects) -> PodVolumeClaims | None:
    """`podHasPVCs` then `GetPodVolumeClaims`; None when the pod has no claim."""
    refs = pod_claims(pod)
    if not refs:
        return None
    found: list[PersistentVolumeClaim] = []
    for ref in refs:
        claim = storage.claim(pod.namespace, ref.claim)
        if claim is None:
            if ref.ephemeral:
                raise ClaimRefusal(
                    "waiting for ephemeral volume controller to create the persistentvolumeclaim "
                    f'"{ref.claim}"'
                )
            raise ClaimRefusal(not_found(PVC_RESOURCE, ref.claim))
        if claim.phase == LOST:
            raise ClaimRefusal(
                f'persistentvolumeclaim "{claim.name}" bound to non-existent persistentvolume '
                f'"{claim.volume_name}"'
            )
        if claim.deleting:
            raise ClaimRefusal(f'persistentvolumeclaim "{claim.name}" is being deleted')
        if ref.ephemeral:
            problem = not_owner_message(pod, claim)
            if problem is not None:
                raise ClaimRefusal(problem)
        found.append(claim)
    bound: list[PersistentVolumeClaim] = []
    delayed: list[PersistentVolumeClaim] = []
    immediate: list[PersistentVolumeClaim] = []
    for claim in found:
        if claim.is_bound:
            bound.append(claim)
        elif not claim.volume_name and _delayed(claim, storage):
            delayed.append(claim)
        else:
            immediate.append(claim)  # pre-bound claims wait for the PV controller too
    return PodVolumeClaims(tuple(bound), tuple(delayed), tuple(immediate))


def _delayed(claim: PersistentVolumeClaim, storage: StorageObjects) -> bool:
    """`IsDelayBindingMode`: the claim's class exists and waits for the first consumer."""
    storage_class = storage.classes.get(claim.storage_class) if claim.storage_class else None
    return storage_class is not None and storage_class.binding_mode == WAIT_FOR_FIRST_CONSUMER


def eligible_nodes(
    bound: Sequence[PersistentVolumeClaim], storage: StorageObjects
) -> frozenset[str] | None:
    """`GetEligibleNodes`: the nodes the bound claims' local volumes name (intersected), or
    None: no such volume, or one is missing. v1.28 takes the `kubernetes.io/hostname`
    values of the volume's node affinity for node names (from the PV assume cache)."""
    eligible: frozenset[str] | None = None
    for claim in bound:
        volume = storage.volume(claim.volume_name)
        if volume is None:
            return None
        names = local_node_names(volume.node_affinity)
        if names:
            eligible = names if eligible is None else eligible & names
    return eligible
