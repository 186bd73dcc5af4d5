"""Volume limits per node: kube-scheduler v1.28's nodevolumelimits plugins.

csi.py is NodeVolumeLimits (upstream's CSILimits, csi.go): CSI volumes, and
in-tree ones where CSI migration is on. intree.py is EBSLimits,
GCEPDLimits, AzureDiskLimits and CinderLimits (non_csi.go): one in-tree type
each, on nodes where it is not migrated. common.py is what they share.
"""

from eventsched.plugins.nodevolumelimits.common import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED
from eventsched.plugins.nodevolumelimits.csi import NodeVolumeLimits
from eventsched.plugins.nodevolumelimits.intree import (
    AzureDiskLimits,
    CinderLimits,
    EBSLimits,
    GCEPDLimits,
)

__all__ = [
    "ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED",
    "AzureDiskLimits",
    "CinderLimits",
    "EBSLimits",
    "GCEPDLimits",
    "NodeVolumeLimits",
]
