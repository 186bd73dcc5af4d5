"""The quota arithmetic of scheduler-plugins v0.28.9's CapacityScheduling (`elasticquota.go`).

A `QuotaInfo` is upstream's `ElasticQuotaInfo` for one namespace: its quota's effective
min and max (elasticquota.py) and its usage, the requests of its placed pods. Every
comparison is upstream's `cmp2`: true when, for any resource, the sum of two amounts is
strictly more than the bound's. cpu, memory, ephemeral-storage and pods are always
compared (a bound that does not list one has 0 of it); a scalar resource is compared only
when the left-hand amount lists it, against the bound's amount or, when the bound lacks it,
against MaxInt64 for a max and 0 for a min.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from eventsched.model.counted import BASE_RESOURCES
from eventsched.model.resources import Resources, add_into
from eventsched.plugins.capacityscheduling.elasticquota import (
    LOWER_BOUND_OF_MIN,
    UPPER_BOUND_OF_MAX,
    ElasticQuota,
)

_EMPTY: Mapping[str, int] = {}


def exceeds(x1: Mapping[str, int], x2: Mapping[str, int], y: Mapping[str, int], bound: int) -> bool:
    """`cmp2(x1, x2, y, bound)`: whether x1 + x2 > y for some resource."""
    for name in BASE_RESOURCES:
        if x1.get(name, 0) + x2.get(name, 0) > y.get(name, 0):
            return True
    for name, amount in x1.items():
        if name in BASE_RESOURCES:
            continue
        if amount + x2.get(name, 0) > y.get(name, bound):
            return True
    return False


def min_above_max(low: Mapping[str, int], high: Mapping[str, int]) -> dict[str, dict[str, int]]:
    """The resources whose min is above the max the namespace's use is held to, as `cmp2`
    bounds them (a base resource the max does not list is 0, a scalar one MaxInt64):
    {resource: {"min": amount, "max": amount}}. v0.28.9 uses both as given."""
    above = {}
    for name, amount in low.items():
        bound = high.get(name, 0 if name in BASE_RESOURCES else UPPER_BOUND_OF_MAX)
        if amount > bound:
            above[name] = {"min": amount, "max": bound}
    return above


def total(amounts: Iterable[Mapping[str, int]]) -> Resources:
    out: Resources = {}
    for amount in amounts:
        add_into(out, amount)
    return out


@dataclass(frozen=True, slots=True)
class QuotaInfo:
    """One namespace's ElasticQuota as CapacityScheduling weighs it."""

    namespace: str
    quota: str
    min: Mapping[str, int]
    max: Mapping[str, int]
    used: Mapping[str, int]

    @classmethod
    def of(cls, quota: ElasticQuota, used: Mapping[str, int]) -> QuotaInfo:
        return cls(
            quota.namespace, quota.name, quota.effective_min(), quota.effective_max(), dict(used)
        )

    def used_over_min_with(self, request: Mapping[str, int]) -> bool:
        """`usedOverMinWith`: request + used > min."""
        return exceeds(request, self.used, self.min, LOWER_BOUND_OF_MIN)

    def used_over_max_with(self, request: Mapping[str, int]) -> bool:
        """`usedOverMaxWith`: request + used > max."""
        return exceeds(request, self.used, self.max, UPPER_BOUND_OF_MAX)

    def used_over_min(self) -> bool:
        """`usedOverMin`: used > min."""
        return exceeds(self.used, _EMPTY, self.min, LOWER_BOUND_OF_MIN)

    def min_above_max(self) -> dict[str, dict[str, int]]:
        return min_above_max(self.min, self.max)

    def record(self) -> dict[str, object]:
        return {
            "namespace": self.namespace,
            "quota": self.quota,
            "min": dict(self.min),
            "max": dict(self.max),
            "used": dict(self.used),
        }


class Quotas:
    """Every namespace's QuotaInfo (upstream's `ElasticQuotaInfos`), with the sums of their
    usage and mins computed once."""

    __slots__ = ("infos", "min_sum", "used_sum")

    def __init__(self, infos: Mapping[str, QuotaInfo]) -> None:
        self.infos = infos
        self.used_sum: Mapping[str, int] = total(info.used for info in infos.values())
        self.min_sum: Mapping[str, int] = total(info.min for info in infos.values())

    def get(self, namespace: str) -> QuotaInfo | None:
        return self.infos.get(namespace)

    def total_used(self) -> Resources:
        return dict(self.used_sum)

    def total_min(self) -> Resources:
        return dict(self.min_sum)

    def aggregated_used_over_min_with(
        self, request: Mapping[str, int], change: Mapping[str, int] = _EMPTY
    ) -> bool:
        """`aggregatedUsedOverMinWith`: the sum of every quota's used (plus `change`, a
        what-if's), plus request, more than the sum of every quota's min."""
        used = self.total_used()
        add_into(used, change)
        add_into(used, request)
        return exceeds(used, _EMPTY, self.min_sum, LOWER_BOUND_OF_MIN)
