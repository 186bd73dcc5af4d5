"""PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes, as the volume plugins read them
(CSIDrivers and CSIStorageCapacities: model/csicapacity.py).

Only the fields VolumeRestrictions, VolumeZone, NodeVolumeLimits and
VolumeBinding read are kept, already normalized the way their upstream
helpers read them (a claim's class is `GetPersistentVolumeClaimClass`: the
beta annotation before `spec.storageClassName`; a StorageClass without
`volumeBindingMode` is `Immediate`, as the API server defaults it), so an
observation is small and two spellings of the same object log the same.

An in-tree PersistentVolume source (GCE PD, AWS EBS, Azure Disk, Cinder)
keeps the volume handle CSI migration translates it to, which is what
NodeVolumeLimits counts it by, and its own volume ID, which the in-tree
volume limits (EBSLimits, GCEPDLimits, AzureDiskLimits, CinderLimits) count.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eventsched.model.csicapacity import (
    CSI_DRIVER,
    CSI_STORAGE_CAPACITY,
    CSIDriver,
    CSIStorageCapacity,
)
from eventsched.model.csimigration import (
    AWS_EBS,
    AZURE_DISK,
    CINDER,
    CSI,
    GCE_PD,
    in_tree_volume_id,
    pv_handle,
)
from eventsched.model.errors import ManifestError
from eventsched.model.quantity import QuantityError, parse_quantity
from eventsched.model.selectors import LabelSelector
from eventsched.model.volumeclass import (
    CSI_NODE,
    IMMEDIATE,
    STORAGE_CLASS,
    WAIT_FOR_FIRST_CONSUMER,
    CSIDriverLimit,
    CSINode,
    StorageClass,
    TopologyRequirement,
)

PVC = "PersistentVolumeClaim"
PV = "PersistentVolume"
#: The kinds of this module, in the order the adapters list them.
VOLUME_KINDS = (PVC, PV, STORAGE_CLASS, CSI_NODE, CSI_DRIVER, CSI_STORAGE_CAPACITY)

FILESYSTEM = "Filesystem"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
PENDING = "Pending"
AVAILABLE = "Available"
LOST = "Lost"

BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
SELECTED_NODE_ANNOTATION = "volume.kubernetes.io/selected-node"
BIND_COMPLETED_ANNOTATION = "pv.kubernetes.io/bind-completed"

_PV_SOURCES = (
    CSI,
    GCE_PD,
    AWS_EBS,
    AZURE_DISK,
    CINDER,
    "local",
    "hostPath",
    "nfs",
    "iscsi",
    "rbd",
    "fc",
    "azureFile",
    "vsphereVolume",
    "portworxVolume",
    "cephfs",
    "glusterfs",
    "flexVolume",
)


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim:
    namespace: str
    name: str
    uid: str = ""
    volume_name: str = ""
    #: `GetPersistentVolumeClaimClass`: the beta annotation, else spec.storageClassName; "" none.
    storage_class: str = ""
    access_modes: tuple[str, ...] = ()
    #: spec.resources.requests.storage in bytes (0 when not requested).
    storage: int = 0
    volume_mode: str = FILESYSTEM
    #: spec.selector; None when the claim selects any volume.
    selector: LabelSelector | None = None
    phase: str = PENDING
    #: The `volume.kubernetes.io/selected-node` annotation ("" when absent).
    selected_node: str = ""
    #: The `pv.kubernetes.io/bind-completed` annotation is present.
    bind_completed: bool = False
    deleting: bool = False
    #: The UID of the controlling owner (a generic ephemeral volume's pod).
    owner_uid: str = ""
    kind: str = PVC
    #: spec.volumeAttributesClassName ("" unset): VolumeBinding matches it from 1.29.
    volume_attributes_class: str = ""

    @property
    def key(self) -> str:
        return f"{PVC}/{self.namespace}/{self.name}"

    @property
    def is_bound(self) -> bool:
        """volumebinding's `isPVCFullyBound`: a volume name and the bind-completed annotation."""
        return bool(self.volume_name) and self.bind_completed

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"kind": PVC, "namespace": self.namespace, "name": self.name}
        optional: dict[str, Any] = {
            "uid": self.uid,
            "volumeName": self.volume_name,
            "storageClassName": self.storage_class,
            "accessModes": list(self.access_modes),
            "storage": self.storage,
            "selector": None if self.selector is None else self.selector.to_dict(),
            "selectedNode": self.selected_node,
            "bindCompleted": self.bind_completed,
            "deleting": self.deleting,
            "ownerUid": self.owner_uid,
            "volumeAttributesClassName": self.volume_attributes_class,
        }
        record.update({k: v for k, v in optional.items() if v})
        record["volumeMode"] = self.volume_mode
        record["phase"] = self.phase
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> PersistentVolumeClaim:
        namespace, name = str(record["namespace"]), str(record["name"])
        selector = record.get("selector")
        return cls(
            namespace=namespace,
            name=name,
            uid=str(record.get("uid", "")),
            volume_name=str(record.get("volumeName", "")),
            storage_class=str(record.get("storageClassName", "")),
            access_modes=tuple(record.get("accessModes", ())),
            storage=int(record.get("storage", 0)),
            volume_mode=str(record.get("volumeMode", FILESYSTEM)),
            selector=None
            if selector is None
            else LabelSelector.parse(selector, f"{PVC} {namespace}/{name}", "selector"),
            phase=str(record.get("phase", PENDING)),
            selected_node=str(record.get("selectedNode", "")),
            bind_completed=bool(record.get("bindCompleted", False)),
            deleting=bool(record.get("deleting", False)),
            owner_uid=str(record.get("ownerUid", "")),
            volume_attributes_class=str(record.get("volumeAttributesClassName", "")),
        )

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> PersistentVolumeClaim:
        meta = _mapping(obj.get("metadata"))
        namespace = str(meta.get("namespace") or "default")
        name = str(meta.get("name") or "")
        where = f"{PVC} {namespace}/{name}"
        spec = _mapping(obj.get("spec"))
        annotations = _mapping(meta.get("annotations"))
        requests = _mapping(_mapping(spec.get("resources")).get("requests"))
        raw_selector = spec.get("selector")
        return cls(
            namespace=namespace,
            name=name,
            uid=str(meta.get("uid") or ""),
            volume_name=str(spec.get("volumeName") or ""),
            storage_class=_class_of(annotations, spec),
            access_modes=_strings(spec.get("accessModes"), where, "spec.accessModes"),
            storage=_storage(requests.get("storage"), where, "spec.resources.requests.storage"),
            volume_mode=str(spec.get("volumeMode") or FILESYSTEM),
            selector=None
            if raw_selector is None
            else LabelSelector.parse(raw_selector, where, "spec.selector"),
            phase=str(_mapping(obj.get("status")).get("phase") or PENDING),
            selected_node=str(annotations.get(SELECTED_NODE_ANNOTATION) or ""),
            bind_completed=BIND_COMPLETED_ANNOTATION in annotations,
            deleting=bool(meta.get("deletionTimestamp")),
            owner_uid=_controller_uid(meta.get("ownerReferences")),
            volume_attributes_class=str(spec.get("volumeAttributesClassName") or ""),
        )


@dataclass(frozen=True, slots=True)
class ClaimRef:
    namespace: str
    name: str
    uid: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"namespace": self.namespace, "name": self.name, "uid": self.uid}


@dataclass(frozen=True, slots=True)
class PersistentVolume:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    #: spec.capacity.storage in bytes.
    storage: int = 0
    access_modes: tuple[str, ...] = ()
    #: `GetPersistentVolumeClass`: the beta annotation, else spec.storageClassName.
    storage_class: str = ""
    volume_mode: str = FILESYSTEM
    claim_ref: ClaimRef | None = None
    #: spec.nodeAffinity.required.nodeSelectorTerms as given; None: no required affinity.
    node_affinity: tuple[Mapping[str, Any], ...] | None = None
    phase: str = PENDING
    #: The volume source's field name: "csi", "local", "gcePersistentDisk", ...
    source: str = ""
    #: spec.csi.driver ("" for other sources).
    driver: str = ""
    #: spec.csi.volumeHandle, or the handle CSI migration gives an in-tree source.
    handle: str = ""
    #: An in-tree source's own volume ID, which the in-tree volume limits count.
    volume_id: str = ""
    deleting: bool = False
    kind: str = PV
    #: spec.volumeAttributesClassName ("" unset).
    volume_attributes_class: str = ""

    @property
    def key(self) -> str:
        return f"{PV}/{self.name}"

    def bound_to(self, claim: PersistentVolumeClaim) -> bool:
        """`IsVolumeBoundToClaim`: the claimRef names the claim (and its UID, when set)."""
        ref = self.claim_ref
        return (
            ref is not None
            and ref.name == claim.name
            and ref.namespace == claim.namespace
            and (not ref.uid or ref.uid == claim.uid)
        )

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"kind": PV, "name": self.name}
        optional: dict[str, Any] = {
            "labels": dict(self.labels),
            "storage": self.storage,
            "accessModes": list(self.access_modes),
            "storageClassName": self.storage_class,
            "claimRef": None if self.claim_ref is None else self.claim_ref.to_dict(),
            "source": self.source,
            "driver": self.driver,
            "handle": self.handle,
            "volumeId": self.volume_id,
            "deleting": self.deleting,
            "volumeAttributesClassName": self.volume_attributes_class,
        }
        record.update({k: v for k, v in optional.items() if v})
        if self.node_affinity is not None:
            record["nodeAffinity"] = [dict(t) for t in self.node_affinity]
        record["volumeMode"] = self.volume_mode
        record["phase"] = self.phase
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> PersistentVolume:
        ref = record.get("claimRef")
        affinity = record.get("nodeAffinity")
        return cls(
            name=str(record["name"]),
            labels=dict(record.get("labels", {})),
            storage=int(record.get("storage", 0)),
            access_modes=tuple(record.get("accessModes", ())),
            storage_class=str(record.get("storageClassName", "")),
            volume_mode=str(record.get("volumeMode", FILESYSTEM)),
            claim_ref=None if not ref else ClaimRef(**ref),
            node_affinity=None if affinity is None else tuple(dict(t) for t in affinity),
            phase=str(record.get("phase", PENDING)),
            source=str(record.get("source", "")),
            driver=str(record.get("driver", "")),
            handle=str(record.get("handle", "")),
            volume_id=str(record.get("volumeId", "")),
            deleting=bool(record.get("deleting", False)),
            volume_attributes_class=str(record.get("volumeAttributesClassName", "")),
        )

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> PersistentVolume:
        meta = _mapping(obj.get("metadata"))
        name = str(meta.get("name") or "")
        where = f"{PV} {name}"
        spec = _mapping(obj.get("spec"))
        labels = {str(k): str(v) for k, v in _mapping(meta.get("labels")).items()}
        source = next((s for s in _PV_SOURCES if spec.get(s) is not None), "")
        raw_source = _mapping(spec.get(source))
        driver, handle = pv_handle(source, raw_source, labels)
        return cls(
            name=name,
            labels=labels,
            storage=_storage(
                _mapping(spec.get("capacity")).get("storage"), where, "spec.capacity.storage"
            ),
            access_modes=_strings(spec.get("accessModes"), where, "spec.accessModes"),
            storage_class=_class_of(_mapping(meta.get("annotations")), spec),
            volume_mode=str(spec.get("volumeMode") or FILESYSTEM),
            claim_ref=_claim_ref(spec.get("claimRef")),
            node_affinity=_node_affinity(spec.get("nodeAffinity"), where),
            phase=str(_mapping(obj.get("status")).get("phase") or PENDING),
            source=source,
            driver=driver,
            handle=handle,
            volume_id=in_tree_volume_id(source, raw_source),
            deleting=bool(meta.get("deletionTimestamp")),
            volume_attributes_class=str(spec.get("volumeAttributesClassName") or ""),
        )


#: An object of one of `VOLUME_KINDS`.
VolumeObject = (
    PersistentVolumeClaim
    | PersistentVolume
    | StorageClass
    | CSINode
    | CSIDriver
    | CSIStorageCapacity
)

_FROM_RECORD: dict[str, Callable[[Mapping[str, Any]], VolumeObject]] = {
    PVC: PersistentVolumeClaim.from_record,
    PV: PersistentVolume.from_record,
    STORAGE_CLASS: StorageClass.from_record,
    CSI_NODE: CSINode.from_record,
    CSI_DRIVER: CSIDriver.from_record,
    CSI_STORAGE_CAPACITY: CSIStorageCapacity.from_record,
}
_FROM_MANIFEST: dict[str, Callable[[Mapping[str, Any]], VolumeObject]] = {
    PVC: PersistentVolumeClaim.from_manifest,
    PV: PersistentVolume.from_manifest,
    STORAGE_CLASS: StorageClass.from_manifest,
    CSI_NODE: CSINode.from_manifest,
    CSI_DRIVER: CSIDriver.from_manifest,
    CSI_STORAGE_CAPACITY: CSIStorageCapacity.from_manifest,
}


def volume_object_from_record(record: Mapping[str, Any]) -> VolumeObject:
    return _FROM_RECORD[str(record["kind"])](record)


def volume_object_from_manifest(obj: Mapping[str, Any]) -> VolumeObject:
    return _FROM_MANIFEST[str(obj["kind"])](obj)


# -- reading manifests -------------------------------------------------------------------


def _mapping(raw: Any) -> Mapping[str, Any]:
    return raw if isinstance(raw, Mapping) else {}


def _strings(raw: Any, where: str, path: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ManifestError(where, path, "must be a list of strings")
    return tuple(str(v) for v in raw)


def _storage(raw: Any, where: str, path: str) -> int:
    if raw is None:
        return 0
    try:
        return parse_quantity(raw)
    except QuantityError as exc:
        raise ManifestError(where, path, str(exc)) from exc


def _class_of(annotations: Mapping[str, Any], spec: Mapping[str, Any]) -> str:
    """`GetPersistentVolume(Claim)Class`: the beta annotation wins over spec.storageClassName."""
    if BETA_CLASS_ANNOTATION in annotations:
        return str(annotations[BETA_CLASS_ANNOTATION])
    return str(spec.get("storageClassName") or "")


def _controller_uid(refs: Any) -> str:
    for ref in refs if isinstance(refs, list) else ():
        if isinstance(ref, Mapping) and ref.get("controller"):
            return str(ref.get("uid") or "")
    return ""


def _claim_ref(raw: Any) -> ClaimRef | None:
    if not isinstance(raw, Mapping):
        return None
    return ClaimRef(
        str(raw.get("namespace") or ""), str(raw.get("name") or ""), str(raw.get("uid") or "")
    )


def _node_affinity(raw: Any, where: str) -> tuple[Mapping[str, Any], ...] | None:
    required = _mapping(_mapping(raw).get("required"))
    if not required:
        return None
    terms = required.get("nodeSelectorTerms") or []
    if not isinstance(terms, list) or not all(isinstance(t, Mapping) for t in terms):
        raise ManifestError(
            where, "spec.nodeAffinity.required.nodeSelectorTerms", "must be a list of objects"
        )
    return tuple(dict(t) for t in terms)


__all__ = [
    "CSI_DRIVER",
    "CSI_NODE",
    "CSI_STORAGE_CAPACITY",
    "IMMEDIATE",
    "PV",
    "PVC",
    "STORAGE_CLASS",
    "VOLUME_KINDS",
    "WAIT_FOR_FIRST_CONSUMER",
    "CSIDriver",
    "CSIDriverLimit",
    "CSINode",
    "CSIStorageCapacity",
    "ClaimRef",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "TopologyRequirement",
    "VolumeObject",
    "volume_object_from_manifest",
    "volume_object_from_record",
]
