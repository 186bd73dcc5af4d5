"""A pod's volumes as the volume plugins walk them: the claims they name, in-line sources.

`Pod.volumes` keeps the raw `spec.volumes` entries a scheduling plugin reads;
these helpers read them defensively (a malformed entry names no claim, it
never raises), so a plugin turns bad input into a status.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eventsched.model.pod import Pod
from eventsched.model.volumes import PersistentVolumeClaim

PVC_SOURCE = "persistentVolumeClaim"
EPHEMERAL_SOURCE = "ephemeral"


@dataclass(frozen=True, slots=True)
class PodClaim:
    """A volume of the pod backed by a claim: `persistentVolumeClaim`, or a generic
    ephemeral volume, whose claim is named `<pod>-<volume>` (`ephemeral.VolumeClaimName`)."""

    volume: str
    claim: str
    ephemeral: bool = False


def source(volume: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    """The volume's source of that kind (`gcePersistentDisk`, ...), None when it has another."""
    raw = volume.get(kind)
    if raw is None:
        return None
    return raw if isinstance(raw, Mapping) else {}


def volume_name(volume: Mapping[str, Any]) -> str:
    return str(volume.get("name") or "")


def claim_of(pod: Pod, volume: Mapping[str, Any]) -> PodClaim | None:
    """The claim a volume uses, None for an in-line source."""
    pvc = source(volume, PVC_SOURCE)
    if pvc is not None:
        return PodClaim(volume_name(volume), str(pvc.get("claimName") or ""))
    if source(volume, EPHEMERAL_SOURCE) is not None:
        return PodClaim(volume_name(volume), f"{pod.name}-{volume_name(volume)}", True)
    return None


def pod_claims(pod: Pod, *, ephemeral: bool = True) -> tuple[PodClaim, ...]:
    """The claims of the pod's volumes, in volume order (with generic ephemeral ones or not)."""
    found = (claim_of(pod, v) for v in pod.volumes)
    return tuple(c for c in found if c is not None and (ephemeral or not c.ephemeral))


def not_owner_message(pod: Pod, claim: PersistentVolumeClaim) -> str | None:
    """`ephemeral.VolumeIsForPod`: why an ephemeral volume's claim is not the pod's, or None."""
    if claim.namespace != pod.namespace or not claim.owner_uid or claim.owner_uid != pod.uid:
        return (
            f"PVC {claim.namespace}/{claim.name} was not created for pod "
            f"{pod.namespace}/{pod.name} (pod is not owner)"
        )
    return None


def not_found(resource: str, name: str) -> str:
    """An informer lister's NotFound error: `persistentvolumeclaim "data" not found`."""
    return f'{resource} "{name}" not found'


PVC_RESOURCE = "persistentvolumeclaim"
PV_RESOURCE = "persistentvolume"
STORAGE_CLASS_RESOURCE = "storageclass.storage.k8s.io"
