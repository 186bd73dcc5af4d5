"""A pod's requests as kube-scheduler v1.32-v1.37 counts them, and as v1.28 did.

`account` gives what a pod counts for under an `Accounting` (model/accounting.py):

- `requests`: `resourcehelper.PodRequests` as `PodInfo.CalculateResource` calls it
  (framework/types.go): the node's Requested, and the incoming pod's request in
  NodeResourcesFit's Filter and BalancedAllocation (for a pod not yet running its
  status holds no resources, so the spec alone counts, as `computePodResourceRequest`
  reads it);
- `non_zero`: CalculateResource's Non0CPU and Non0Mem, with the defaults of
  `getNonMissingContainerRequests` (v1.32 on) or eventsched's v1.28 form;
- `score_requests`: what NodeResourcesFit scores the incoming pod with, when it is not
  the above: only for a pod with pod-level requests (from v1.33 Fit's scorer leaves
  them out, `resource_allocation.go` `calculatePodResourceRequest`).

The arithmetic is component-helpers' `resource/helpers.go` (v0.32.0-v0.37.2), in Go's
terms: a request map keeps a resource given as 0 (a key present), which decides whether
a default is added (`applyNonMissing`, `getNonMissingContainerRequests`); None stands
for a nil map.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from eventsched.model.accounting import (
    RESIZE_ACTUAL,
    RESIZE_AGGREGATE,
    RESIZE_ALLOCATED,
    RESIZE_NONE,
    RESIZE_PER_CONTAINER,
    Accounting,
)
from eventsched.model.resizestatus import INFEASIBLE, ContainerResizeStatus, ResizeStatus
from eventsched.model.resources import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    Resources,
    add_into,
    non_zero_requests,
)
from eventsched.model.resources import pod_requests as legacy_pod_requests

List = Mapping[str, int] | None
"""A resource list; None is Go's nil map."""

#: `getNonMissingContainerRequests` without pod-level requests, and Fit's scorer always.
DEFAULTS: Mapping[str, int] = {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST}
HUGEPAGES_PREFIX = "hugepages-"


@dataclass(frozen=True, slots=True)
class PodShape:
    """What of a pod's spec its requests are made of."""

    #: Each app container's requests (a limit without a request counting as the request).
    containers: Sequence[Mapping[str, int]]
    #: Each init container's requests and whether it is a sidecar (restartPolicy Always).
    init_containers: Sequence[tuple[Mapping[str, int], bool]] = ()
    #: `spec.overhead`.
    overhead: Mapping[str, int] | None = None
    #: `spec.resources.requests`; None when absent.
    pod_requests: Mapping[str, int] | None = None
    #: The containers' names, in the order above (the statuses are found by name).
    names: Sequence[str] = ()
    init_names: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class Accounted:
    """What a pod counts for (see the module's docstring)."""

    requests: Resources
    non_zero: tuple[int, int]
    score_requests: Resources | None = None


def is_supported_pod_level(name: str) -> bool:
    """`IsSupportedPodLevelResource`: cpu, memory and hugepages-*."""
    return name in (CPU, MEMORY) or name.startswith(HUGEPAGES_PREFIX)


def pod_level_requests_set(shape: PodShape) -> bool:
    """`IsPodLevelRequestsSet`."""
    return shape.pod_requests is not None and any(
        is_supported_pod_level(name) for name in shape.pod_requests
    )


def account(shape: PodShape, status: ResizeStatus | None, accounting: Accounting) -> Accounted:
    """What the pod counts for under `accounting`; `status` None: its status says nothing
    of resources (the same as a status without any, in every form)."""
    form = accounting.resize if status is not None else RESIZE_NONE
    if not accounting.non_missing:
        return _legacy(shape, status, form)
    pod_level = accounting.pod_level
    requests = pod_requests(
        shape, status, form, pod_level=pod_level, pod_level_resize=accounting.pod_level_resize
    )
    pod_level_set = pod_level and pod_level_requests_set(shape)
    if pod_level_set:
        missing = {name: amount for name, amount in DEFAULTS.items() if name not in requests}
    else:
        missing = dict(DEFAULTS)
    non_zero_list = requests
    if missing:
        non_zero_list = pod_requests(
            shape,
            status,
            form,
            pod_level=pod_level,
            pod_level_resize=accounting.pod_level_resize,
            non_missing=missing,
        )
    score = None
    if pod_level_set:
        score = pod_requests(
            shape,
            None,
            RESIZE_NONE,
            pod_level=not accounting.fit_score_skips_pod_level,
            non_missing=DEFAULTS,
        )
    return Accounted(requests, (non_zero_list.get(CPU, 0), non_zero_list.get(MEMORY, 0)), score)


def pod_requests(
    shape: PodShape,
    status: ResizeStatus | None,
    form: str = RESIZE_NONE,
    *,
    pod_level: bool = False,
    pod_level_resize: bool = False,
    non_missing: Mapping[str, int] | None = None,
    exclude_overhead: bool = False,
) -> Resources:
    """`PodRequests`: the containers' requests in `form` (RESIZE_NONE: the spec's),
    replaced by the pod-level ones (`pod_level`), plus the overhead."""
    requests = _container_level(shape, status, form, pod_level_resize, non_missing)
    if pod_level and shape.pod_requests is not None and pod_level_requests_set(shape):
        _apply_pod_level(requests, shape.pod_requests, status, form, pod_level_resize)
    if not exclude_overhead and shape.overhead:
        add_into(requests, shape.overhead)
    return requests


# -- the containers ------------------------------------------------------------------

PerContainer = Callable[[int, bool], List]
"""A container's requests by its index and whether it is an init container."""


def aggregate(
    shape: PodShape, per: PerContainer, non_missing: Mapping[str, int] | None
) -> Resources:
    """`aggregateContainerResourcesByFn`: the app containers' sum, with each sidecar's
    added, at least each init container's with the sidecars started before it."""
    result: Resources = {}
    for i in range(len(shape.containers)):
        add_into(result, _non_missing(per(i, False), non_missing) or {})
    sidecars: Resources = {}
    peak: Resources = {}
    for i, (_, is_sidecar) in enumerate(shape.init_containers):
        requests: Mapping[str, int] = _non_missing(per(i, True), non_missing) or {}
        if is_sidecar:
            add_into(result, requests)
            add_into(sidecars, requests)
            requests = sidecars
        else:
            combined: Resources = {}
            add_into(combined, requests)
            add_into(combined, sidecars)
            requests = combined
        max_list_into(peak, requests)
    max_list_into(result, peak)
    return result


def _container_level(
    shape: PodShape,
    status: ResizeStatus | None,
    form: str,
    pod_level_resize: bool,
    non_missing: Mapping[str, int] | None,
) -> Resources:
    def spec(i: int, init: bool) -> List:
        return shape.init_containers[i][0] if init else shape.containers[i]

    if status is None or form == RESIZE_NONE:
        return aggregate(shape, spec, non_missing)
    if form == RESIZE_AGGREGATE:
        return _aggregate_form(shape, status, pod_level_resize, non_missing, spec)
    return aggregate(shape, _per_container_form(shape, status, form, spec), non_missing)


def _per_container_form(
    shape: PodShape, status: ResizeStatus, form: str, spec: PerContainer
) -> PerContainer:
    """Each container's requests as v1.27-v1.36 count a resized one, container by container."""
    statuses = status.by_name(with_init=form == RESIZE_PER_CONTAINER)

    def per(i: int, init: bool) -> List:
        own = spec(i, init)
        if init and (form != RESIZE_PER_CONTAINER or not shape.init_containers[i][1]):
            return own  # only v1.33's form reads a (sidecar) init container's status
        found = statuses.get(shape.init_names[i] if init else shape.names[i])
        if found is None:
            return own
        if form == RESIZE_ALLOCATED:  # pkg/api/v1/resource/helpers.go, v1.27-v1.31
            if status.resize == INFEASIBLE:
                return found.allocated
            return _max_pair(own, found.allocated)
        if not found.has_resources:
            return own
        if form == RESIZE_ACTUAL:  # component-helpers v0.32
            if status.resize == INFEASIBLE:
                return found.actual
            return max_lists(own, found.actual)
        # v0.33-v0.36 determineContainerReqs
        if status.infeasible:
            return max_lists(found.actual, found.allocated)
        return max_lists(own, found.actual, found.allocated)

    return per


def _aggregate_form(
    shape: PodShape,
    status: ResizeStatus,
    pod_level_resize: bool,
    non_missing: Mapping[str, int] | None,
    spec: PerContainer,
) -> Resources:
    """v0.37 `AggregateContainerRequests` with UseStatusResources: the most of the spec,
    allocated and actual totals (the pod-level status's when it has all of them)."""
    infeasible = status.infeasible

    def found(i: int, init: bool) -> ContainerResizeStatus | None:
        return status.find(shape.init_names[i] if init else shape.names[i])

    def allocated(i: int, init: bool) -> List:
        cs = found(i, init)
        if cs is not None and cs.allocated is not None:
            return cs.allocated
        return None if infeasible else spec(i, init)

    def actuated(i: int, init: bool) -> List:
        cs = found(i, init)
        if cs is not None and cs.has_resources and cs.actual is not None:
            return cs.actual
        if cs is not None and cs.allocated is not None:
            return cs.allocated
        return None if infeasible else spec(i, init)

    spec_total = aggregate(shape, spec, non_missing)
    allocated_total: List
    actuated_total: List
    if (
        pod_level_resize
        and status.pod_allocated is not None
        and status.pod_has_resources
        and status.pod_actual is not None
    ):
        allocated_total, actuated_total = status.pod_allocated, status.pod_actual
    else:
        allocated_total = aggregate(shape, allocated, non_missing)
        actuated_total = aggregate(shape, actuated, non_missing)
    if infeasible:
        return max_lists(actuated_total, allocated_total)
    return max_lists(spec_total, actuated_total, allocated_total)


# -- the pod level ---------------------------------------------------------------------


def _apply_pod_level(
    requests: Resources,
    pod: Mapping[str, int],
    status: ResizeStatus | None,
    form: str,
    pod_level_resize: bool,
) -> None:
    """The pod-level requests of cpu, memory and hugepages-* in place of the containers'."""
    resized = pod_level_resize and status is not None and status.pod_has_resources
    if resized and status is not None and form == RESIZE_AGGREGATE:
        # v0.37 effectivePodLevelResources: every resource of the three counts.
        spec = None if status.infeasible else pod
        effective: Mapping[str, int] = max_lists(spec, status.pod_actual, status.pod_allocated)
        requests.update((k, v) for k, v in effective.items() if is_supported_pod_level(k))
        return
    if resized and status is not None and form == RESIZE_PER_CONTAINER:
        # v0.35-v0.36 determineEffectiveRequests, read for the spec's resources only
        # (a resource the status lacks reads as 0, as Go's map index does).
        if status.infeasible:
            effective = max_lists(status.pod_actual, status.pod_allocated)
        else:
            effective = max_lists(pod, status.pod_actual, status.pod_allocated)
        requests.update((k, effective.get(k, 0)) for k in pod if is_supported_pod_level(k))
        return
    requests.update((k, v) for k, v in pod.items() if is_supported_pod_level(k))


# -- Go's resource list helpers ------------------------------------------------------


def max_list_into(total: Resources, other: List) -> None:
    """`maxResourceList`: a resource `total` lacks is set, even to 0."""
    for name, amount in (other or {}).items():
        if name not in total or amount > total[name]:
            total[name] = amount


def max_lists(first: List, *others: List) -> Resources:
    """helpers.go `max`: per resource, the most of the lists."""
    result = dict(first) if first is not None else {}
    for other in others:
        max_list_into(result, other)
    return result


def _max_pair(a: List, b: List) -> Resources:
    """v1.28 pkg/api/v1/resource `max(a, b)`: per resource, the larger."""
    return max_lists(a, b)


def _non_missing(requests: List, defaults: Mapping[str, int] | None) -> List:
    """`applyNonMissing`: each default added where `requests` lacks the resource."""
    if not defaults:
        return requests
    out = dict(requests or {})
    for name, amount in defaults.items():
        if requests is None or name not in requests:
            out[name] = out.get(name, 0) + amount
    return out


# -- v1.28 -----------------------------------------------------------------------------


def _legacy(shape: PodShape, status: ResizeStatus | None, form: str) -> Accounted:
    """eventsched's v1.28 arithmetic (model/resources.py), over each container's
    requests as the status makes them (v1.27-v1.31 with InPlacePodVerticalScaling)."""
    containers: list[Mapping[str, int]] = list(shape.containers)
    init = list(shape.init_containers)
    if status is not None and form != RESIZE_NONE:
        if form == RESIZE_AGGREGATE:
            raise ValueError("the aggregate resize form needs the v1.32 defaults")

        def spec(i: int, is_init: bool) -> List:
            return shape.init_containers[i][0] if is_init else shape.containers[i]

        per = _per_container_form(shape, status, form, spec)
        containers = [per(i, False) or {} for i in range(len(containers))]
        init = [(per(i, True) or {}, sidecar) for i, (_, sidecar) in enumerate(init)]
    overhead = shape.overhead or {}
    return Accounted(
        legacy_pod_requests(containers, init, overhead),
        non_zero_requests(containers, init, overhead),
    )
