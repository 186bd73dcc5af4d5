"""Which ElasticQuotas CapacityScheduling knows, as scheduler-plugins v0.28.9 knows them.

v0.28.9's plugin asks controller-runtime for an ElasticQuota informer but never starts
the cache it comes from, so its add/update/delete handlers never run. What it knows of
quotas comes from its pod handler alone: when an assigned pod is added and the plugin has
no quota for the pod's namespace, it lists the namespace's ElasticQuotas through the API
and keeps the first (by name) with that moment's min and max. Hence, until it restarts:

- a namespace none of whose pods was placed since the start has no quota: its pods pass,
  and its min is not part of the sum of mins;
- a quota's later changes are not seen, nor its deletion;
- a namespace whose quota was created after its pods were placed gets it with the next
  pod placed there.

`KnownQuotas` reproduces that from the NodeTable: a namespace is looked up again each
time one of its pods was placed since it was last found without a quota, and a quota
once found stays. A placement seen by the scheduler's next PreFilter rather than at the
instant of its informer event is the one difference in timing; usage counts every placed
pod of the namespace (upstream's leaves out pods placed before it found the quota, when
the quota was created while the scheduler ran).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog

from eventsched.model import NodeTable
from eventsched.plugins.capacityscheduling.elasticquota import ElasticQuota, namespace_quota
from eventsched.plugins.capacityscheduling.minmax import HANDLING
from eventsched.plugins.capacityscheduling.quotas import min_above_max

log = structlog.get_logger(__name__)


class KnownQuotas:
    """Namespace -> the ElasticQuota the plugin read for it, kept from first read."""

    def __init__(self) -> None:
        self.quotas: dict[str, ElasticQuota] = {}
        #: Namespace -> placements counted when it was last found without a quota.
        self._looked: dict[str, int] = {}
        self._recorded = False
        self._warned: set[str] = set()

    def update(self, table: NodeTable) -> bool:
        """Read the quotas of namespaces with new placements; True when the known set
        changed (or was never recorded by this process)."""
        changed = not self._recorded
        for namespace, added in table.namespace_usage.added().items():
            if namespace in self.quotas:
                self._warn_if_changed(namespace, table)
                continue
            if self._looked.get(namespace) == added:
                continue
            quota = namespace_quota(table.objects.custom, namespace)
            if quota is None:
                self._looked[namespace] = added
                continue
            self.quotas[namespace] = quota
            self._looked.pop(namespace, None)
            _warn_if_min_above_max(quota)
            changed = True
        self._recorded = True
        return changed

    def _warn_if_changed(self, namespace: str, table: NodeTable) -> None:
        now = namespace_quota(table.objects.custom, namespace)
        known = self.quotas[namespace]
        if now == known or namespace in self._warned:
            return
        self._warned.add(namespace)
        log.warning(
            "an ElasticQuota changed after CapacityScheduling read it: it keeps the min and "
            "max it first read until eventsched restarts, as scheduler-plugins v0.28.9 does",
            namespace=namespace,
            known=known.name,
            now=None if now is None else now.name,
        )

    def to_record(self) -> dict[str, Any]:
        return {ns: quota.to_record() for ns, quota in sorted(self.quotas.items())}

    def replayed(self, record: Mapping[str, Any] | None) -> None:
        """While replaying: the known quotas as the live scheduler last recorded them."""
        self.quotas = {
            str(ns): ElasticQuota.from_record(value) for ns, value in (record or {}).items()
        }


def _warn_if_min_above_max(quota: ElasticQuota) -> None:
    """Say so when a quota read has a min above its max: it is used as given (minmax.py)."""
    above = min_above_max(quota.effective_min(), quota.effective_max())
    if above:
        log.warning(
            "an ElasticQuota's min is above its max: " + HANDLING,
            namespace=quota.namespace,
            quota=quota.name,
            min_above_max=above,
        )
