"""Resource names and the request arithmetic kube-scheduler applies to a pod."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from eventsched.model.labels import label_key_problem
from eventsched.model.quantity import QuantityError, parse_milli, parse_quantity

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

#: What kube-scheduler assumes a container uses when it requests nothing, for
#: scoring only (`schedutil.DefaultMilliCPURequest` / `DefaultMemoryRequest`).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

Resources = dict[str, int]
"""Resource name to amount: CPU in millicores, everything else in base units."""


#: Amounts are counted in int64 columns (NodeTable), as kube-scheduler counts them.
MAX_AMOUNT = 2**63 - 1


def parse_resource_list(values: Mapping[str, object] | None) -> Resources:
    """Turn a manifest's `resources.requests` (or a node's allocatable) into integers.

    Negative amounts are refused, as the API server refuses them ("must be
    greater than or equal to 0"): a negative request would free room on a
    node, a negative allocatable make room out of nothing.
    """
    parsed: Resources = {}
    for name, raw in (values or {}).items():
        amount = parse_milli(raw) if name == CPU else parse_quantity(raw)  # type: ignore[arg-type]
        if amount < 0:
            raise QuantityError(f"{name}: must be greater than or equal to 0 (got {raw!r})")
        if amount > MAX_AMOUNT:
            unit = "millicores" if name == CPU else "units"
            raise QuantityError(
                f"{name}: {raw!r} is too large ({amount} {unit}; the scheduler counts in "
                f"64-bit integers, at most {MAX_AMOUNT})"
            )
        parsed[name] = amount
    return parsed


def add_into(total: Resources, more: Mapping[str, int]) -> None:
    for name, amount in more.items():
        total[name] = total.get(name, 0) + amount


def max_into(total: Resources, other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        if amount > total.get(name, 0):
            total[name] = amount


def pod_requests(
    containers: Iterable[Mapping[str, int]],
    init_containers: Iterable[tuple[Mapping[str, int], bool]] = (),
    overhead: Mapping[str, int] | None = None,
) -> Resources:
    """Effective requests: the containers' sum, at least any init container's, plus overhead.

    Sidecar init containers (restartPolicy Always) keep running, so they add to
    the sum like regular containers and raise the floor for later init containers,
    as `resourcehelper.PodRequests` does.
    """
    total: Resources = {}
    for requests in containers:
        add_into(total, requests)
    floor: Resources = {}
    sidecars: Resources = {}
    for requests, is_sidecar in init_containers:
        if is_sidecar:
            add_into(sidecars, requests)
            candidate = dict(sidecars)
        else:
            candidate = dict(requests)
            add_into(candidate, sidecars)
        max_into(floor, candidate)
    add_into(total, sidecars)
    max_into(total, floor)
    if overhead:
        add_into(total, overhead)
    return total


def non_zero_requests(
    containers: Iterable[Mapping[str, int]],
    init_containers: Iterable[tuple[Mapping[str, int], bool]] = (),
    overhead: Mapping[str, int] | None = None,
) -> tuple[int, int]:
    """CPU and memory for scoring: a container that asks for none counts the defaults.

    As `resourcehelper.PodRequests` with `NonMissingContainerRequests`: the
    defaults apply to init containers too, and the pod's figure is the
    containers' sum, at least any init container's, plus overhead.
    """

    def defaulted(requests: Mapping[str, int]) -> Resources:
        return {
            CPU: requests.get(CPU, DEFAULT_MILLI_CPU_REQUEST) or DEFAULT_MILLI_CPU_REQUEST,
            MEMORY: requests.get(MEMORY, DEFAULT_MEMORY_REQUEST) or DEFAULT_MEMORY_REQUEST,
        }

    total = pod_requests(
        [defaulted(r) for r in containers],
        [(defaulted(r), sidecar) for r, sidecar in init_containers],
        {k: v for k, v in (overhead or {}).items() if k in (CPU, MEMORY)},
    )
    return total.get(CPU, 0), total.get(MEMORY, 0)


def is_scalar_resource_name(name: str) -> bool:
    """upstream `schedutil.IsScalarResourceName`: extended, hugepages-, kubernetes.io/ prefixed
    or attachable-volumes- resources, the ones NodeInfo keeps in ScalarResources."""
    return (
        _is_extended_resource_name(name)
        or name.startswith("hugepages-")
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


def _is_extended_resource_name(name: str) -> bool:
    """`v1helper.IsExtendedResourceName`: not native, not `requests.`, and
    `requests.<name>` a qualified name (the label key syntax)."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return label_key_problem("requests." + name) is None
