"""A WaitForFirstConsumer claim bound to an available PersistentVolume: what the scheduler writes.

kube-scheduler's VolumeBinding binds such a claim in two steps (binder.go):
Reserve assumes the volume pre-bound to the claim in its PV assume cache
(`AssumePodVolumes`), so later pods do not pick it; PreBind writes that
pre-binding to the API (`bindAPIUpdate`) and the PV controller of
kube-controller-manager completes it. The pre-binding is
`pvutil.GetBindVolumeToClaim` (component-helpers storage/volume): the
volume's `spec.claimRef` names the claim (with its UID) and, unless the
volume was already bound to the claim, the annotation
`pv.kubernetes.io/bound-by-controller: "yes"` is set.

`VolumeAssumption` is one assumed pre-binding as the `reserved` event
records it and the view folds it (model/storage.py keeps it until the
volume is observed again or the reservation is undone).

A claim no available volume matches is provisioned instead: Reserve assumes
it with the `volume.kubernetes.io/selected-node` annotation naming the node
(`ClaimAssumption`, the PVC assume cache's `Assume(claimClone)`), PreBind
writes that annotation, and the external provisioner and the PV controller
create and bind its volume. Both kinds go into `reserved`'s `volumes` list;
`assumption_from_record` tells them apart (a volume's has `name`, a claim's
`selectedNode`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from eventsched.model.volumes import ClaimRef, PersistentVolume, PersistentVolumeClaim

BOUND_BY_CONTROLLER_ANNOTATION = "pv.kubernetes.io/bound-by-controller"
#: A claim's and a volume's `status.phase` once the PV controller bound them.
BOUND = "Bound"


def claim_ref(claim: PersistentVolumeClaim) -> ClaimRef:
    """`reference.GetReference(claim)`, as far as the model keeps a claimRef."""
    return ClaimRef(claim.namespace, claim.name, claim.uid)


def bind_volume_to_claim(
    volume: PersistentVolume, claim: PersistentVolumeClaim
) -> PersistentVolume | None:
    """`GetBindVolumeToClaim`: the volume pre-bound to the claim, or None when its claimRef
    already names the claim with its UID (the model keeps no annotations, so the
    bound-by-controller annotation alone never makes it differ)."""
    ref = claim_ref(claim)
    if volume.claim_ref == ref:
        return None
    return replace(volume, claim_ref=ref)


@dataclass(frozen=True, slots=True)
class VolumeAssumption:
    """A volume assumed pre-bound to a claim (the assume cache's `Assume(newPV)`)."""

    volume: str
    claim: ClaimRef

    def to_record(self) -> dict[str, Any]:
        return {"name": self.volume, "claimRef": self.claim.to_dict()}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> VolumeAssumption:
        return cls(str(record["name"]), _claim_ref(record))


def _claim_ref(record: Mapping[str, Any]) -> ClaimRef:
    ref = record.get("claimRef") or {}
    return ClaimRef(
        str(ref.get("namespace", "")), str(ref.get("name", "")), str(ref.get("uid", ""))
    )


@dataclass(frozen=True, slots=True)
class ClaimAssumption:
    """A claim assumed with the selected-node annotation naming the node its volume is to be
    provisioned for (`AssumePodVolumes`' dynamic provisions)."""

    claim: ClaimRef
    selected_node: str

    def to_record(self) -> dict[str, Any]:
        return {"claimRef": self.claim.to_dict(), "selectedNode": self.selected_node}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ClaimAssumption:
        return cls(_claim_ref(record), str(record["selectedNode"]))


#: What a reservation assumes: a volume pre-bound to a claim, or a claim to provision.
Assumption: TypeAlias = VolumeAssumption | ClaimAssumption


def assumption_from_record(record: Mapping[str, Any]) -> Assumption:
    """A `reserved` event's `volumes` item: a claim's has `selectedNode`, a volume's `name`."""
    if "selectedNode" in record:
        return ClaimAssumption.from_record(record)
    return VolumeAssumption.from_record(record)
