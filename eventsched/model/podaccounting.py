"""What a pod counts for under an accounting other than v1.28's, kept per spec and status.

The spec's part is read once (model/podspecfields.py); what the pod counts for depends
as well on the accounting and, for a running pod, on what its status says of its
resources. So the `SpecFields` of a spec keep it by (accounting, the status's resource
part as text): the replicas of one template, which report the same resources, count
it once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eventsched.model.accounting import Accounting
from eventsched.model.errors import ManifestError
from eventsched.model.podresources import Accounted, PodShape, account
from eventsched.model.podspecfields import SpecFields
from eventsched.model.quantity import QuantityError
from eventsched.model.resizestatus import read_resize_status, resize_key
from eventsched.model.resources import Resources, parse_resource_list

#: Distinct (accounting, status) kept for one spec; when full, it starts again.
KEPT_PER_SPEC = 64


def accounted(
    fields: SpecFields, status: Mapping[str, Any], accounting: Accounting, where: str
) -> Accounted:
    """What a pod of spec `fields` and `status` counts for under `accounting`
    (ManifestError naming `where` and the field when a quantity is wrong)."""
    key = resize_key(status) if accounting.uses_status else None
    memo_key = (accounting, key)
    if key != b"":
        known = fields.accounted.get(memo_key)
        if known is not None:
            return known
    resize = read_resize_status(status, where) if key is not None else None
    result = account(shape_of(fields, accounting, where), resize, accounting)
    if key != b"":
        if len(fields.accounted) >= KEPT_PER_SPEC:
            fields.accounted.clear()
        fields.accounted[memo_key] = result
    return result


def shape_of(fields: SpecFields, accounting: Accounting, where: str) -> PodShape:
    """The parts of the spec the requests are made of (pod-level ones only when counted)."""
    return PodShape(
        containers=tuple(c.requests for c in fields.containers),
        init_containers=tuple(
            (c.requests, sidecar)
            for c, sidecar in zip(fields.init_containers, fields.sidecars, strict=True)
        ),
        overhead=fields.overhead,
        pod_requests=_pod_level_requests(fields.pod_resources, where)
        if accounting.pod_level
        else None,
        names=tuple(c.name for c in fields.containers),
        init_names=tuple(c.name for c in fields.init_containers),
    )


def _pod_level_requests(resources: Any, where: str) -> Resources | None:
    """`spec.resources.requests`, parsed; None when absent."""
    if resources is None:
        return None
    if not isinstance(resources, Mapping):
        raise ManifestError(where, "spec.resources", "must be a map with requests and limits")
    requests = resources.get("requests")
    if requests is None:
        return None
    if not isinstance(requests, Mapping):
        raise ManifestError(
            where, "spec.resources.requests", "must be a map of resource to quantity"
        )
    try:
        return parse_resource_list(requests)
    except QuantityError as exc:
        raise ManifestError(where, "spec.resources.requests", str(exc)) from exc
