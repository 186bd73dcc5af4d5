"""What CapacityScheduling's PreFilter leaves in the cycle state for its PostFilter."""

from __future__ import annotations

from dataclasses import dataclass

from eventsched.model.resources import Resources
from eventsched.plugins.capacityscheduling.quotas import Quotas

NAME = "CapacityScheduling"
STATE_KEY = "PreFilter" + NAME


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """Upstream's `PreFilterState` and `ElasticQuotaSnapshotState`."""

    quotas: Quotas
    pod_request: Resources
    #: The pod's request plus those of the pods nominated in its namespace with at least
    #: its priority (`nominatedPodsReqInEQWithPodReq`).
    in_quota_request: Resources
    #: That plus the requests of the pods nominated in other quota namespaces not over
    #: their min (`nominatedPodsReqWithPodReq`).
    total_request: Resources
