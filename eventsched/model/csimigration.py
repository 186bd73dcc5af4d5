"""CSI migration as kube-scheduler v1.28 sees it (csi-translation-lib, nodevolumelimits/utils.go).

In-tree volume sources are migrated to CSI drivers: a GCE PD, AWS EBS, Azure
Disk or Cinder volume counts against its CSI driver's attach limit, under
the volume handle the translator gives it. In v1.28 those four migrations
are GA (`isCSIMigrationOn` is true on any node with a CSINode object);
Portworx's is behind a feature gate that is off, RBD's is alpha: theirs, and
every other in-tree plugin's, are not on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

GCE_PD = "gcePersistentDisk"
AWS_EBS = "awsElasticBlockStore"
AZURE_DISK = "azureDisk"
CINDER = "cinder"
RBD = "rbd"
CSI = "csi"


@dataclass(frozen=True, slots=True)
class InTreePlugin:
    name: str  #: the in-tree plugin / provisioner name, e.g. kubernetes.io/gce-pd
    driver: str  #: the CSI driver it migrates to
    migrated: bool  #: `isCSIMigrationOn` in v1.28 (given a CSINode)


#: By volume source field.
IN_TREE: dict[str, InTreePlugin] = {
    GCE_PD: InTreePlugin("kubernetes.io/gce-pd", "pd.csi.storage.gke.io", True),
    AWS_EBS: InTreePlugin("kubernetes.io/aws-ebs", "ebs.csi.aws.com", True),
    AZURE_DISK: InTreePlugin("kubernetes.io/azure-disk", "disk.csi.azure.com", True),
    CINDER: InTreePlugin("kubernetes.io/cinder", "cinder.csi.openstack.org", True),
    "azureFile": InTreePlugin("kubernetes.io/azure-file", "file.csi.azure.com", False),
    "vsphereVolume": InTreePlugin("kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com", False),
    "portworxVolume": InTreePlugin("kubernetes.io/portworx-volume", "pxd.portworx.com", False),
    RBD: InTreePlugin("kubernetes.io/rbd", "rbd.csi.ceph.com", False),
}
#: By provisioner name (`IsMigratableIntreePluginByName`).
BY_PROVISIONER: dict[str, InTreePlugin] = {p.name: p for p in IN_TREE.values()}

CSI_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
ATTACHABLE_PREFIX = "attachable-volumes-"
_RESOURCE_NAME_LIMIT = 63

_UNSPECIFIED = "UNSPECIFIED"
_ZONE_LABELS = ("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone")


def attach_limit_key(driver: str) -> str:
    """`GetCSIAttachLimitKey`: the node resource that holds a driver's attach limit."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= _RESOURCE_NAME_LIMIT:
        digest = hashlib.sha1(driver.encode(), usedforsecurity=False).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + digest
    return CSI_ATTACH_LIMIT_PREFIX + driver


def pv_handle(source: str, raw: Mapping[str, Any], labels: Mapping[str, str]) -> tuple[str, str]:
    """(CSI driver, volume handle) of a PersistentVolume's source.

    A CSI source gives its own; a migratable in-tree source gives the handle
    `TranslateInTreePVToCSI` would ("" when it fails to translate: then the
    volume is not counted) and no driver (the driver is its plugin's, and
    counts only where migration is on).
    """
    if source == CSI:
        return str(raw.get("driver") or ""), str(raw.get("volumeHandle") or "")
    if source == GCE_PD:
        return "", gce_pd_handle(str(raw.get("pdName") or ""), labels)
    if source == AWS_EBS:
        return "", ebs_volume_id(str(raw.get("volumeID") or "")) or ""
    if source == AZURE_DISK:
        return "", str(raw.get("diskURI") or "")
    if source == CINDER:
        return "", str(raw.get("volumeID") or "")
    return "", ""


#: The field of each in-tree source that names its volume for the in-tree volume limits
#: (EBSLimits & co., `VolumeFilter.FilterVolume`/`FilterPersistentVolume` in non_csi.go):
#: the source's own ID, untranslated (an AWS `aws://zone/vol-1` stays as written).
IN_TREE_ID_FIELD: dict[str, str] = {
    AWS_EBS: "volumeID",
    GCE_PD: "pdName",
    AZURE_DISK: "diskName",
    CINDER: "volumeID",
}


def in_tree_volume_id(source: str, raw: Mapping[str, Any]) -> str:
    """The volume ID the in-tree volume limits count a source of `IN_TREE_ID_FIELD` by
    ("" for any other source)."""
    field = IN_TREE_ID_FIELD.get(source)
    return "" if field is None else str(raw.get(field) or "")


def inline_handle(source: str, raw: Mapping[str, Any]) -> str | None:
    """`TranslateInTreeInlineVolumeToCSI`'s volume handle of an in-line volume; None when
    the translation fails (a malformed AWS volume ID)."""
    if source == GCE_PD:
        return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{raw.get('pdName') or ''}"
    if source == AWS_EBS:
        return ebs_volume_id(str(raw.get("volumeID") or ""))
    if source == AZURE_DISK:
        return str(raw.get("diskURI") or "")
    return str(raw.get("volumeID") or "")  # cinder


def gce_pd_handle(pd_name: str, labels: Mapping[str, str]) -> str:
    """The GCE PD translator's volume ID: zonal, regional (zones `__`-joined) or unspecified."""
    zones_label = labels.get(_ZONE_LABELS[0]) or labels.get(_ZONE_LABELS[1]) or ""
    zones = zones_label.split("__")
    if len(zones) == 1 and zones[0]:
        return f"projects/{_UNSPECIFIED}/zones/{zones[0]}/disks/{pd_name}"
    if len(zones) > 1:
        # getRegionFromZones: every zone is {locale}-{region}-{zone}, all in one region.
        parts = [zone.split("-") for zone in zones]
        regions = {"-".join(p[:2]) for p in parts if len(p) == 3}
        if len(regions) != 1 or any(len(p) != 3 for p in parts):
            return ""  # upstream fails to translate: the volume is not counted
        return f"projects/{_UNSPECIFIED}/regions/{regions.pop()}/disks/{pd_name}"
    return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{pd_name}"


def ebs_volume_id(kubernetes_id: str) -> str | None:
    """`KubernetesVolumeIDToEBSVolumeID`: aws://ZONE/vol-... to vol-...; None when malformed."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    volume = kubernetes_id[len("aws://") :].partition("/")[2].strip("/")
    if not volume.startswith("vol-") or "/" in volume:
        return None
    return volume
