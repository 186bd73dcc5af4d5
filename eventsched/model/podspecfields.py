"""What a pod's spec says to the scheduler, read once for each distinct spec.

Pods made from one template (a ReplicaSet's, a Job's) have the same spec but
for the node they are bound to, and every pod is read at least twice: when it
is created and when it is bound. Reading a spec (its containers' quantities
parsed, requests summed, QoS, tolerations, host ports, ...) is most of the cost
of reading a pod, so `spec_fields` keeps what a spec read as, under the spec's
JSON text without `nodeName`, and a pod with the same spec gets the same
fields. Only a spec that reads without error is kept: a wrong one is read (and
refused, naming its pod) every time. The values are shared between the pods
that have them and, like a Pod's, never changed in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from eventsched.model.containers import ContainerRequests, pod_qos
from eventsched.model.errors import ManifestError
from eventsched.model.nodefeatures import required_node_features
from eventsched.model.podspec import (
    HostPort,
    host_ports,
    image_volumes,
    images,
    maps,
    scheduling_volumes,
)
from eventsched.model.quantity import QuantityError
from eventsched.model.resources import (
    Resources,
    non_zero_requests,
    parse_resource_list,
    pod_requests,
)
from eventsched.model.taints import Toleration

DEFAULT_SCHEDULER_NAME = "default-scheduler"

POD_AFFINITY = "spec.affinity.podAffinity"
POD_ANTI_AFFINITY = "spec.affinity.podAntiAffinity"
TOPOLOGY_SPREAD = "spec.topologySpreadConstraints"
HOST_PORTS = "spec.containers[].ports[].hostPort"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"

#: Distinct specs kept; when full, the memo starts again (a cluster has far fewer
#: templates than this; a spec of its own per pod only misses).
MEMO_SIZE = 4096


@dataclass(frozen=True, slots=True)
class SpecFields:
    """The Pod fields read from `spec`, its `nodeName` aside."""

    scheduler_name: str
    priority: int
    requests: Resources
    non_zero: tuple[int, int]
    tolerations: tuple[Toleration, ...]
    node_selector: Mapping[str, str]
    affinity: Mapping[str, Any]
    scheduling_gates: tuple[str, ...]
    host_ports: tuple[HostPort, ...]
    images: tuple[str, ...]
    init_images: tuple[str, ...]
    image_volumes: tuple[str, ...]
    required_node_features: tuple[str, ...]
    topology_spread: tuple[Mapping[str, Any], ...]
    volumes: tuple[Mapping[str, Any], ...]
    uses: tuple[str, ...]
    preemption_policy: str
    containers: tuple[ContainerRequests, ...]
    init_containers: tuple[ContainerRequests, ...]
    qos: str
    #: Whether each init container is a sidecar (restartPolicy Always), in spec order.
    sidecars: tuple[bool, ...] = ()
    #: `spec.overhead`, parsed.
    overhead: Resources = field(default_factory=dict)
    #: `spec.resources` as given (read only by the accounting of pod-level resources).
    pod_resources: Any = None
    #: The sidecars' host ports (v1.34 on they are the pod's); None when one is not a
    #: port number (refused only where they count).
    sidecar_ports: tuple[HostPort, ...] | None = ()
    #: What the pod counts for under an accounting other than v1.28's, by the accounting
    #: and the resource part of the status (model/podaccounting.py keeps it).
    accounted: dict[Any, Any] = field(default_factory=dict, compare=False)

    @property
    def restartable_init(self) -> bool:
        """The pod has a sidecar (`hasRestartableInitContainer`)."""
        return any(self.sidecars)


_memo: dict[bytes, SpecFields] = {}


def spec_fields(spec: Mapping[str, Any], where: str) -> SpecFields:
    """What `spec` reads as (ManifestError naming `where` and the field when it is wrong),
    from the memo when a spec with the same text was read before."""
    key = _memo_key(spec)
    if key is not None:
        known = _memo.get(key)
        if known is not None:
            return known
    fields = read_spec(spec, where)
    if key is not None:
        if len(_memo) >= MEMO_SIZE:
            _memo.clear()
        _memo[key] = fields
    return fields


def _memo_key(spec: Mapping[str, Any]) -> bytes | None:
    """The spec's JSON text without `nodeName`; None when it is not plain JSON data (a
    manifest's YAML may hold dates or big integers): such a spec is read every time."""
    if not isinstance(spec, dict):
        return None
    if "nodeName" in spec:
        spec = {k: v for k, v in spec.items() if k != "nodeName"}
    try:
        return orjson.dumps(spec, option=orjson.OPT_PASSTHROUGH_DATETIME)
    except (TypeError, orjson.JSONEncodeError):
        return None


def read_spec(spec: Mapping[str, Any], where: str) -> SpecFields:
    """Read `spec` afresh, naming the field that is wrong."""
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        raise ManifestError(where, "spec.containers", "must list at least one container")
    regular = [
        _container_requests(c, f"spec.containers[{i}]", where) for i, c in enumerate(containers)
    ]
    init_specs = spec.get("initContainers") or []
    init = [
        (
            _container_requests(c, f"spec.initContainers[{i}]", where),
            c.get("restartPolicy") == "Always",
        )
        for i, c in enumerate(init_specs)
    ]
    qos = pod_qos(
        [
            (r, _container_limits(c, f"spec.containers[{i}]", where))
            for i, (c, r) in enumerate(zip(containers, regular, strict=True))
        ]
        + [
            (r, _container_limits(c, f"spec.initContainers[{i}]", where))
            for i, (c, (r, _)) in enumerate(zip(init_specs, init, strict=True))
        ]
    )
    try:
        overhead = parse_resource_list(spec.get("overhead"))
    except QuantityError as exc:
        raise ManifestError(where, "spec.overhead", str(exc)) from exc
    priority = spec.get("priority", 0) or 0
    if not isinstance(priority, int):
        raise ManifestError(where, "spec.priority", f"must be an integer (got {priority!r})")
    return SpecFields(
        scheduler_name=str(spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME),
        priority=priority,
        requests=pod_requests(regular, init, overhead),
        non_zero=non_zero_requests(regular, init, overhead),
        tolerations=tuple(Toleration.from_dict(t) for t in spec.get("tolerations") or []),
        node_selector={str(k): str(v) for k, v in (spec.get("nodeSelector") or {}).items()},
        affinity=dict(spec.get("affinity") or {}),
        scheduling_gates=tuple(str(g.get("name", "")) for g in spec.get("schedulingGates") or []),
        host_ports=host_ports(containers, where, "spec.containers"),
        images=images(containers),
        init_images=images(init_specs),
        image_volumes=image_volumes(spec.get("volumes")),
        required_node_features=required_node_features(spec),
        topology_spread=maps(
            spec.get("topologySpreadConstraints"), where, "spec.topologySpreadConstraints"
        ),
        volumes=scheduling_volumes(spec.get("volumes"), where),
        uses=_fields_used(spec),
        preemption_policy=_preemption_policy(spec, where),
        containers=tuple(
            ContainerRequests(str(c.get("name") or ""), r)
            for c, r in zip(containers, regular, strict=True)
        ),
        init_containers=tuple(
            ContainerRequests(str(c.get("name") or ""), r)
            for c, (r, _) in zip(init_specs, init, strict=True)
        ),
        qos=qos,
        sidecars=tuple(sidecar for _, sidecar in init),
        overhead=overhead,
        pod_resources=spec.get("resources"),
        sidecar_ports=_sidecar_ports(init_specs, where),
    )


def sidecar_host_ports(init_specs: Any, where: str) -> tuple[HostPort, ...]:
    """The host ports of the sidecar init containers (ManifestError when one is wrong)."""
    sidecars = [
        c if isinstance(c, Mapping) and c.get("restartPolicy") == "Always" else {}
        for c in init_specs or []
    ]
    if not any(sidecars):
        return ()
    return host_ports(sidecars, where, "spec.initContainers")


def _sidecar_ports(init_specs: list[Any], where: str) -> tuple[HostPort, ...] | None:
    """As `sidecar_host_ports`, None when one is wrong: v1.28 does not read them."""
    try:
        return sidecar_host_ports(init_specs, where)
    except ManifestError:
        return None


def _preemption_policy(spec: Mapping[str, Any], where: str) -> str:
    """`spec.preemptionPolicy`, with the default (PreemptLowerPriority, or unset) as ""."""
    policy = spec.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY
    if policy not in (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER):
        raise ManifestError(
            where,
            "spec.preemptionPolicy",
            f"must be {PREEMPT_LOWER_PRIORITY} or {PREEMPT_NEVER} (got {policy!r})",
        )
    return "" if policy == PREEMPT_LOWER_PRIORITY else str(policy)


def _fields_used(spec: Mapping[str, Any]) -> tuple[str, ...]:
    """Which of the fields in `uses` the pod's spec sets."""
    affinity = spec.get("affinity") or {}
    used = []
    if isinstance(affinity, Mapping):
        used += [
            f
            for f, key in ((POD_AFFINITY, "podAffinity"), (POD_ANTI_AFFINITY, "podAntiAffinity"))
            if affinity.get(key)
        ]
    if spec.get("topologySpreadConstraints"):
        used.append(TOPOLOGY_SPREAD)
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    if any(
        isinstance(port, Mapping) and port.get("hostPort")
        for c in containers
        if isinstance(c, Mapping)
        for port in c.get("ports") or []
    ):
        used.append(HOST_PORTS)
    return tuple(used)


def _container_requests(container: Mapping[str, Any], path: str, where: str) -> Resources:
    resources = container.get("resources") or {}
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    for field_name, value in (("requests", requests), ("limits", limits)):
        if not isinstance(value, Mapping):
            raise ManifestError(
                where, f"{path}.resources.{field_name}", "must be a map of resource to quantity"
            )
    # The API server defaults each request that is missing to its limit, resource by resource.
    requests = {**limits, **requests}
    try:
        return parse_resource_list(requests)
    except QuantityError as exc:
        raise ManifestError(where, f"{path}.resources.requests", str(exc)) from exc


def _container_limits(container: Mapping[str, Any], path: str, where: str) -> Resources:
    """A container's `resources.limits` (already checked to be a map by `_container_requests`)."""
    limits = (container.get("resources") or {}).get("limits") or {}
    try:
        return parse_resource_list(limits)
    except QuantityError as exc:
        raise ManifestError(where, f"{path}.resources.limits", str(exc)) from exc
