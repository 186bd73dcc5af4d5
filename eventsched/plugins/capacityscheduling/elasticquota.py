"""ElasticQuotas (`scheduling.x-k8s.io/v1alpha1`), as scheduler-plugins v0.28.9's
CapacityScheduling reads them, and their declaration as a custom kind (`ELASTIC_QUOTAS`).

An ElasticQuota is namespaced: `spec.min` is what the namespace is guaranteed,
`spec.max` the most it may use, borrowing from namespaces under their min.
CapacityScheduling reads only the spec: usage is the sum of the requests of the
namespace's assigned pods, never `status.used` (which scheduler-plugins' controller
writes). Only the fields a decision reads are kept.

Upstream's `newElasticQuotaInfo` gives a quota without `spec.min` a min of 0 cpu,
memory and ephemeral-storage, and one without `spec.max` a max of MaxInt64 of those
three. A quota that lists some resources only has 0 for the other three of
cpu/memory/ephemeral-storage/pods (so a max of `{cpu: 2}` leaves room for no memory),
while an extended resource it does not list is bounded by MaxInt64 in a max and by 0
in a min (`cmp2`'s bound).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eventsched.model.counted import counted
from eventsched.model.customkinds import CustomKind
from eventsched.model.customobjects import CustomObjectReader
from eventsched.model.errors import ManifestError
from eventsched.model.quantity import QuantityError
from eventsched.model.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    Resources,
    parse_resource_list,
)

ELASTIC_QUOTA = "ElasticQuota"
#: Upstream's `UpperBoundOfMax` (math.MaxInt64) and `LowerBoundOfMin`.
UPPER_BOUND_OF_MAX = 2**63 - 1
LOWER_BOUND_OF_MIN = 0
#: What a missing spec.min / spec.max stands for (`makeResourceListForBound`).
_BOUNDED = (CPU, MEMORY, EPHEMERAL_STORAGE)


@dataclass(frozen=True, slots=True)
class ElasticQuota:
    namespace: str
    name: str
    #: `spec.min` / `spec.max` as counted (`framework.NewResource`); None when absent.
    min: Mapping[str, int] | None = None
    max: Mapping[str, int] | None = None
    kind: str = ELASTIC_QUOTA

    @property
    def key(self) -> str:
        return f"{ELASTIC_QUOTA}/{self.namespace}/{self.name}"

    def effective_min(self) -> Resources:
        """The min CapacityScheduling compares with: 0 of the bounded three when absent."""
        if self.min is None:
            return dict.fromkeys(_BOUNDED, LOWER_BOUND_OF_MIN)
        return dict(self.min)

    def effective_max(self) -> Resources:
        """The max CapacityScheduling compares with: MaxInt64 of the bounded three when absent."""
        if self.max is None:
            return dict.fromkeys(_BOUNDED, UPPER_BOUND_OF_MAX)
        return dict(self.max)

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "kind": ELASTIC_QUOTA,
            "namespace": self.namespace,
            "name": self.name,
        }
        if self.min is not None:
            record["min"] = dict(self.min)
        if self.max is not None:
            record["max"] = dict(self.max)
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ElasticQuota:
        raw_min, raw_max = record.get("min"), record.get("max")
        return cls(
            str(record["namespace"]),
            str(record["name"]),
            None if raw_min is None else {str(k): int(v) for k, v in raw_min.items()},
            None if raw_max is None else {str(k): int(v) for k, v in raw_max.items()},
        )

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> ElasticQuota:
        """An ElasticQuota from the API (or a manifest); quantities as the API validates
        them (non-negative)."""
        meta = obj.get("metadata") or {}
        if not isinstance(meta, Mapping):
            raise ManifestError(ELASTIC_QUOTA, "metadata", "must be a mapping")
        namespace = str(meta.get("namespace") or "default")
        name = str(meta.get("name") or "")
        where = f"{ELASTIC_QUOTA} {namespace}/{name}"
        spec = obj.get("spec") or {}
        if not isinstance(spec, Mapping):
            raise ManifestError(where, "spec", f"must be a mapping (got {type(spec).__name__})")
        return cls(
            namespace,
            name,
            _resource_list(spec, "min", where),
            _resource_list(spec, "max", where),
        )


def _resource_list(spec: Mapping[str, Any], field: str, where: str) -> Resources | None:
    raw = spec.get(field)
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ManifestError(
            where, f"spec.{field}", "must be a map of resource name to quantity, e.g. {cpu: '2'}"
        )
    try:
        return counted(parse_resource_list(raw))
    except QuantityError as exc:
        raise ManifestError(where, f"spec.{field}", str(exc)) from exc


#: ElasticQuota as a custom kind: watched when a profile enables CapacityScheduling.
ELASTIC_QUOTAS = CustomKind(
    kind=ELASTIC_QUOTA,
    group="scheduling.x-k8s.io",
    version="v1alpha1",
    plural="elasticquotas",
    namespaced=True,
    from_manifest=ElasticQuota.from_manifest,
    from_record=ElasticQuota.from_record,
    crd_file="deploy/crds/elasticquotas.yaml",
)


def namespace_quota(objects: CustomObjectReader, namespace: str) -> ElasticQuota | None:
    """The namespace's ElasticQuota as CapacityScheduling reads it: the first by name of
    those it has (upstream lists the namespace's quotas and takes the first)."""
    quotas = objects.in_namespace(ELASTIC_QUOTAS, namespace)
    return quotas[min(quotas)] if quotas else None
