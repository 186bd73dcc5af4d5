"""CapacityScheduling: ElasticQuota min/max per namespace, as scheduler-plugins v0.28.9.

PreFilter (`CapacityScheduling.PreFilter`): a pod in a namespace whose quota the plugin
knows is rejected (Unschedulable) when

- its namespace's usage plus its request plus the requests of the pods nominated in the
  same namespace with at least its priority is more than the quota's max:
  `Pod NS/NAME is rejected in PreFilter because ElasticQuota NS is more than Max`; or
- the usage of every known namespace, plus its request, plus the nominated pods above and
  the nominated pods of other known namespaces that are not over their min, is more than
  the sum of every known quota's min:
  `Pod NS/NAME is rejected in PreFilter because total ElasticQuota used is more than min`.

Which quotas the plugin knows is v0.28.9's, to the letter (`known.py`): v0.28.9 never
starts its ElasticQuota informer, so it reads a namespace's quota (the first by name) only
when a pod of that namespace is placed, and keeps that min and max until it restarts.
Usage is what the namespace's placed pods request (bound and assumed: upstream's Reserve
adds the pod to its quota, Unreserve takes it off; the NodeTable counts assumed pods the
same way), never `status.used`.

The log holds what PreFilter weighed: the known quotas whenever they change (`known`),
and per attempt of a pod with a known quota its namespace's figures (`quota`, with
`minAboveMax` when its min is above its max: used as given, minmax.py); replay reads the
known quotas back, so it decides as the live scheduler did across restarts.

Preemption (PostFilter) is in quotapreemption.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eventsched.framework import (
    ASSIGNED_POD_DELETE,
    LEGACY_FEATURES,
    ClusterEvent,
    CycleState,
    Features,
    FilterRunner,
    Handle,
    PostFilterResult,
    PreFilterResult,
    Status,
    check_args,
)
from eventsched.framework.extenders.client import HTTPExtender
from eventsched.framework.extenders.preemption import extender_narrowing
from eventsched.model import NodeTable, Pod
from eventsched.model.counted import counted
from eventsched.model.resources import Resources, add_into
from eventsched.plugins.capacityscheduling.elasticquota import ELASTIC_QUOTAS
from eventsched.plugins.capacityscheduling.known import KnownQuotas
from eventsched.plugins.capacityscheduling.quotapreemption import preempt
from eventsched.plugins.capacityscheduling.quotas import QuotaInfo, Quotas
from eventsched.plugins.capacityscheduling.state import NAME, STATE_KEY, PreFilterState

#: Upstream registers every ElasticQuota change and any assigned pod's deletion.
ELASTIC_QUOTA_ANY = ClusterEvent(ELASTIC_QUOTAS.kind, "*")


def nominated_requests(
    pod: Pod, quotas: Quotas, table: NodeTable, request: Resources
) -> tuple[Resources, Resources]:
    """(in_quota_request, total_request) of PreFilterState: the nominated pods of every
    node in the snapshot, but `pod` itself."""
    in_quota = dict(request)
    every = dict(request)
    for other, node in table.nominated:
        if other.uid == pod.uid or table.row_of(node) is None:
            continue
        info = quotas.get(other.namespace)
        if info is None:
            continue
        if other.namespace == pod.namespace and other.priority >= pod.priority:
            add_into(in_quota, counted(other.requests))
            add_into(every, counted(other.requests))
        elif other.namespace != pod.namespace and not info.used_over_min():
            add_into(every, counted(other.requests))
    return in_quota, every


class CapacityScheduling:
    name = NAME
    #: The custom kinds it reads, by name: the cluster adapter watches ElasticQuotas when a
    #: profile enables the plugin.
    custom_kinds = (ELASTIC_QUOTAS.kind,)
    counts_preemption_attempts = True

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args)
        self.handle = handle
        self._filters: FilterRunner | None = None
        self._extenders: Sequence[HTTPExtender] = ()
        self.known = KnownQuotas()

    def use_filters(self, runner: FilterRunner) -> None:
        self._filters = runner

    def use_extenders(self, extenders: Sequence[HTTPExtender]) -> None:
        self._extenders = extenders

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (ASSIGNED_POD_DELETE, ELASTIC_QUOTA_ANY)

    def snapshot(self, state: CycleState, table: NodeTable) -> Quotas:
        """The known quotas with their usage now (upstream's ElasticQuotaSnapshotState)."""
        if self.handle.replaying:
            self.known.replayed(self.handle.recorded_input(self.name, "known"))
        elif self.known.update(table):
            state.record_input(self.name, "known", self.known.to_record())
        usage = table.namespace_usage
        return Quotas(
            {ns: QuotaInfo.of(quota, usage.of(ns)) for ns, quota in self.known.quotas.items()}
        )

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        quotas = self.snapshot(state, table)
        request = counted(pod.requests)
        info = quotas.get(pod.namespace)
        if info is None:
            state.write(STATE_KEY, PreFilterState(quotas, request, request, request))
            return None, None
        in_quota, every = nominated_requests(pod, quotas, table, request)
        state.write(STATE_KEY, PreFilterState(quotas, request, in_quota, every))
        over_max = info.used_over_max_with(in_quota)
        over_min = not over_max and quotas.aggregated_used_over_min_with(every)
        weighed: dict[str, Any] = {
            "namespace": info.namespace,
            "quota": info.quota,
            "used": dict(info.used),
            "request": in_quota,
            "totalRequest": every,
            "totalUsed": quotas.total_used(),
            "totalMin": quotas.total_min(),
            "overMax": over_max,
            "totalOverMin": over_min,
        }
        above = info.min_above_max()
        if above:  # used as given, as upstream: said where the pod's page shows it
            weighed["minAboveMax"] = above
        state.record_input(self.name, "quota", weighed)
        if over_max:
            return None, Status.unschedulable(
                f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because "
                f"ElasticQuota {info.namespace} is more than Max"
            )
        if over_min:
            return None, Status.unschedulable(
                f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because "
                "total ElasticQuota used is more than min"
            )
        return None, None

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        if self._filters is None:
            raise RuntimeError(f"{self.name} was not given its profile's Filter plugins")
        table = self.handle.table
        narrow = extender_narrowing(self._extenders, state, self.handle, pod, table)
        return preempt(self._filters, state, pod, statuses, table, narrow)
