"""The scheduling-relevant part of a Kubernetes Pod.

Only fields a scheduling decision can depend on are kept, so that an
observation of a pod is small enough to log every time it changes and exact
enough to replay the decision from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from eventsched.model.containers import BEST_EFFORT, ContainerRequests, pod_qos
from eventsched.model.errors import ManifestError
from eventsched.model.podspec import HostPort, host_ports, images, maps, scheduling_volumes
from eventsched.model.quantity import QuantityError
from eventsched.model.resources import (
    Resources,
    non_zero_requests,
    parse_resource_list,
    pod_requests,
)
from eventsched.model.taints import Toleration

DEFAULT_SCHEDULER_NAME = "default-scheduler"
#: Phases after which a pod never runs again: kube-scheduler lists pods without them.
TERMINAL_PHASES = ("Succeeded", "Failed")

POD_AFFINITY = "spec.affinity.podAffinity"
POD_ANTI_AFFINITY = "spec.affinity.podAntiAffinity"
TOPOLOGY_SPREAD = "spec.topologySpreadConstraints"
HOST_PORTS = "spec.containers[].ports[].hostPort"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"


@dataclass(frozen=True, slots=True)
class OwnerRef:
    kind: str
    name: str
    uid: str = ""


@dataclass(frozen=True, slots=True)
class Pod:
    uid: str
    namespace: str
    name: str
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    node_name: str = ""
    priority: int = 0
    requests: Resources = field(default_factory=dict)
    #: CPU millicores and memory bytes as scored (containers without requests count defaults).
    non_zero: tuple[int, int] = (0, 0)
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    affinity: Mapping[str, Any] = field(default_factory=dict)
    scheduling_gates: tuple[str, ...] = ()
    owner: OwnerRef | None = None
    created: str = ""
    #: Succeeded or Failed: the only thing about a pod's phase a scheduling decision reads,
    #: so a pod going from Pending to Running is not a change worth logging.
    terminal: bool = False
    deleting: bool = False
    nominated_node_name: str = ""
    #: Host ports of the regular containers (NodePorts).
    host_ports: tuple[HostPort, ...] = ()
    #: Images of the regular containers (ImageLocality).
    images: tuple[str, ...] = ()
    #: `spec.topologySpreadConstraints` as given (PodTopologySpread parses them).
    topology_spread: tuple[Mapping[str, Any], ...] = ()
    #: `spec.volumes` whose source a volume plugin reads, as given.
    volumes: tuple[Mapping[str, Any], ...] = ()
    #: Scheduling fields of the spec that only a plugin eventsched may lack honours
    #: (POD_AFFINITY, ...): the scheduler warns when no enabled plugin does.
    uses: tuple[str, ...] = ()
    #: `status.startTime` as given (RFC 3339): DefaultPreemption orders victims by it
    #: (`util.MoreImportantPod`, `GetEarliestPodStartTime`); empty until the kubelet starts the pod.
    start_time: str = ""
    #: `spec.preemptionPolicy` when it is not the default PreemptLowerPriority ("Never").
    preemption_policy: str = ""
    #: Reason of the pod's DisruptionTarget condition when its status is True
    #: ("PreemptionByScheduler" for a victim of preemption; `podTerminatingByPreemption`).
    disruption_target: str = ""
    #: Each app container's requests, in spec order (NodeResourceTopologyMatch).
    containers: tuple[ContainerRequests, ...] = ()
    #: Each init container's requests, in spec order.
    init_containers: tuple[ContainerRequests, ...] = ()
    #: The QoS class (`v1qos.GetPodQOS`): Guaranteed, Burstable or BestEffort.
    qos: str = BEST_EFFORT

    @property
    def key(self) -> str:
        """`namespace/name`, the way kubectl and kube-scheduler's logs name a pod."""
        return f"{self.namespace}/{self.name}"

    @property
    def is_assigned(self) -> bool:
        return bool(self.node_name)

    @property
    def is_terminal(self) -> bool:
        return self.terminal

    def with_node(self, node_name: str) -> Pod:
        return replace(self, node_name=node_name)

    def keeping_annotations(self, keys: frozenset[str]) -> Pod:
        """This pod with only the annotations under `keys` (itself when it has no other)."""
        if all(key in keys for key in self.annotations):
            return self
        return replace(self, annotations={k: v for k, v in self.annotations.items() if k in keys})

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any], where: str = "Pod") -> Pod:
        """Read a Pod object (API JSON or YAML manifest), naming the field that is wrong."""
        meta = obj.get("metadata") or {}
        name = meta.get("name")
        if not name or not isinstance(name, str):
            raise ManifestError(where, "metadata.name", "is required (a DNS-1123 name)")
        namespace = str(meta.get("namespace") or "default")
        where = f"Pod {namespace}/{name}"
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
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
        owner = None
        for ref in meta.get("ownerReferences") or []:
            if ref.get("controller"):
                owner = OwnerRef(
                    str(ref.get("kind", "")), str(ref.get("name", "")), str(ref.get("uid", ""))
                )
        return cls(
            uid=str(meta.get("uid") or ""),
            namespace=namespace,
            name=name,
            scheduler_name=str(spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME),
            node_name=str(spec.get("nodeName") or ""),
            priority=priority,
            requests=pod_requests(regular, init, overhead),
            non_zero=non_zero_requests(regular, init, overhead),
            labels={str(k): str(v) for k, v in (meta.get("labels") or {}).items()},
            annotations={str(k): str(v) for k, v in (meta.get("annotations") or {}).items()},
            tolerations=tuple(Toleration.from_dict(t) for t in spec.get("tolerations") or []),
            node_selector={str(k): str(v) for k, v in (spec.get("nodeSelector") or {}).items()},
            affinity=dict(spec.get("affinity") or {}),
            scheduling_gates=tuple(
                str(g.get("name", "")) for g in spec.get("schedulingGates") or []
            ),
            owner=owner,
            created=str(meta.get("creationTimestamp") or ""),
            terminal=status.get("phase") in TERMINAL_PHASES,
            deleting=bool(meta.get("deletionTimestamp")),
            nominated_node_name=str(status.get("nominatedNodeName") or ""),
            host_ports=host_ports(containers, where, "spec.containers"),
            images=images(containers),
            topology_spread=maps(
                spec.get("topologySpreadConstraints"), where, "spec.topologySpreadConstraints"
            ),
            volumes=scheduling_volumes(spec.get("volumes"), where),
            uses=_fields_used(spec),
            start_time=str(status.get("startTime") or ""),
            preemption_policy=_preemption_policy(spec, where),
            disruption_target=_disruption_target(status),
            containers=tuple(
                ContainerRequests(str(c.get("name") or ""), r)
                for c, r in zip(containers, regular, strict=True)
            ),
            init_containers=tuple(
                ContainerRequests(str(c.get("name") or ""), r)
                for c, (r, _) in zip(init_specs, init, strict=True)
            ),
            qos=qos,
        )

    def to_record(self) -> dict[str, Any]:
        """What a `pod_observed` event keeps: enough to rebuild this object exactly.

        Fields at their default are left out (`from_record` puts them back):
        most pods have no tolerations, affinity or gates, and every byte is
        written once per observation.
        """
        record: dict[str, Any] = {
            "uid": self.uid,
            "namespace": self.namespace,
            "name": self.name,
            "schedulerName": self.scheduler_name,
            "priority": self.priority,
            "requests": dict(self.requests),
            "nonZero": list(self.non_zero),
        }
        optional: dict[str, Any] = {
            "nodeName": self.node_name,
            "labels": dict(self.labels),
            "annotations": dict(self.annotations),
            "tolerations": [t.to_dict() for t in self.tolerations],
            "nodeSelector": dict(self.node_selector),
            "affinity": dict(self.affinity),
            "schedulingGates": list(self.scheduling_gates),
            "created": self.created,
            "terminal": self.terminal,
            "deleting": self.deleting,
            "nominatedNodeName": self.nominated_node_name,
            "hostPorts": [p.to_dict() for p in self.host_ports],
            "images": list(self.images),
            "topologySpread": [dict(c) for c in self.topology_spread],
            "volumes": [dict(v) for v in self.volumes],
            "uses": list(self.uses),
            "startTime": self.start_time,
            "preemptionPolicy": self.preemption_policy,
            "disruptionTarget": self.disruption_target,
        }
        for key, value in optional.items():
            if value:
                record[key] = value
        if self.containers:
            record["containers"] = [c.to_dict() for c in self.containers]
        if self.init_containers:
            record["initContainers"] = [c.to_dict() for c in self.init_containers]
        if self.qos != BEST_EFFORT:
            record["qos"] = self.qos
        if self.owner is not None:
            record["owner"] = {
                "kind": self.owner.kind,
                "name": self.owner.name,
                "uid": self.owner.uid,
            }
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Pod:
        owner = record.get("owner")
        non_zero = record.get("nonZero", [0, 0])
        return cls(
            uid=record["uid"],
            namespace=record["namespace"],
            name=record["name"],
            scheduler_name=record.get("schedulerName", DEFAULT_SCHEDULER_NAME),
            node_name=record.get("nodeName", ""),
            priority=int(record.get("priority", 0)),
            requests=dict(record.get("requests", {})),
            non_zero=(int(non_zero[0]), int(non_zero[1])),
            labels=dict(record.get("labels", {})),
            annotations=dict(record.get("annotations", {})),
            tolerations=tuple(Toleration.from_dict(t) for t in record.get("tolerations", [])),
            node_selector=dict(record.get("nodeSelector", {})),
            affinity=dict(record.get("affinity", {})),
            scheduling_gates=tuple(record.get("schedulingGates", [])),
            owner=OwnerRef(**owner) if owner else None,
            created=record.get("created", ""),
            # Logs written before `terminal` carried the phase itself.
            terminal=bool(record.get("terminal", record.get("phase") in TERMINAL_PHASES)),
            deleting=bool(record.get("deleting", False)),
            nominated_node_name=record.get("nominatedNodeName", ""),
            host_ports=tuple(HostPort.from_dict(p) for p in record.get("hostPorts", ())),
            images=tuple(record.get("images", ())),
            topology_spread=tuple(record.get("topologySpread", ())),
            volumes=tuple(record.get("volumes", ())),
            uses=tuple(record.get("uses", ())),
            start_time=record.get("startTime", ""),
            preemption_policy=record.get("preemptionPolicy", ""),
            disruption_target=record.get("disruptionTarget", ""),
            containers=tuple(ContainerRequests.from_dict(c) for c in record.get("containers", ())),
            init_containers=tuple(
                ContainerRequests.from_dict(c) for c in record.get("initContainers", ())
            ),
            qos=str(record.get("qos", BEST_EFFORT)),
        )


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


def _disruption_target(status: Mapping[str, Any]) -> str:
    """The reason of the first DisruptionTarget condition when it is True, else ""."""
    for condition in status.get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == "DisruptionTarget":
            return str(condition.get("reason") or "") if condition.get("status") == "True" else ""
    return ""


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
