"""The scheduling-relevant part of a Kubernetes Pod.

Only fields a scheduling decision can depend on are kept, so that an
observation of a pod is small enough to log every time it changes and exact
enough to replay the decision from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, fields, replace
from typing import Any

from eventsched.model.accounting import LEGACY_ACCOUNTING, Accounting
from eventsched.model.containers import BEST_EFFORT, ContainerRequests
from eventsched.model.errors import ManifestError
from eventsched.model.podaccounting import accounted
from eventsched.model.podspec import HostPort
from eventsched.model.podspecfields import (
    DEFAULT_SCHEDULER_NAME,
    HOST_PORTS,
    POD_AFFINITY,
    POD_ANTI_AFFINITY,
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_NEVER,
    TOPOLOGY_SPREAD,
    SpecFields,
    sidecar_host_ports,
    spec_fields,
)
from eventsched.model.resources import Resources
from eventsched.model.taints import Toleration
from eventsched.model.valueclass import field_values, value_class

__all__ = [
    "DEFAULT_SCHEDULER_NAME",
    "HOST_PORTS",
    "POD_AFFINITY",
    "POD_ANTI_AFFINITY",
    "PREEMPT_LOWER_PRIORITY",
    "PREEMPT_NEVER",
    "TERMINAL_PHASES",
    "TOPOLOGY_SPREAD",
    "OwnerRef",
    "Pod",
]

#: Phases after which a pod never runs again: kube-scheduler lists pods without them.
TERMINAL_PHASES = ("Succeeded", "Failed")

#: Record keys of the fields `to_record` leaves out when empty (the rest are written
#: out below): strings and flags as they are, maps and sequences as dicts and lists.
_SCALARS = (
    ("created", "created"),
    ("terminal", "terminal"),
    ("deleting", "deleting"),
    ("nominatedNodeName", "nominated_node_name"),
    ("startTime", "start_time"),
    ("preemptionPolicy", "preemption_policy"),
    ("disruptionTarget", "disruption_target"),
)
_MAPS = (
    ("labels", "labels"),
    ("annotations", "annotations"),
    ("nodeSelector", "node_selector"),
    ("affinity", "affinity"),
)
_SEQUENCES = (
    ("schedulingGates", "scheduling_gates"),
    ("images", "images"),
    ("initImages", "init_images"),
    ("imageVolumes", "image_volumes"),
    ("requiredNodeFeatures", "required_node_features"),
    ("uses", "uses"),
)


@value_class
class OwnerRef:
    kind: str
    name: str
    uid: str = ""


@value_class
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
    #: Images of the init containers, and references of the image volumes (ImageLocality).
    init_images: tuple[str, ...] = ()
    image_volumes: tuple[str, ...] = ()
    #: The node declared features the spec requires (model/nodefeatures.py).
    required_node_features: tuple[str, ...] = ()
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
    #: What NodeResourcesFit scores this pod with when it is not `requests` with
    #: `non_zero` for cpu and memory: for a pod with pod-level requests, its
    #: containers' (each lacking a cpu or memory request counting the default), as
    #: v1.33+ Fit's scorer leaves pod-level resources out (model/podresources.py).
    score_requests: Mapping[str, int] | None = None
    #: The pod has a sidecar (an init container with restartPolicy Always): v1.28's
    #: NodeResourcesFit refuses it while the SidecarContainers gate is off.
    restartable_init: bool = False
    #: The message of the pod's PodScheduled=False condition (reason Unschedulable or
    #: SchedulerError): what its scheduler's last FailedScheduling Event said. Never
    #: logged with the pod and not compared: the shadow reads it (shadow/), the log
    #: records it in the verdict.
    failed_scheduling: str = field(default="", compare=False)

    @property
    def key(self) -> str:
        """`namespace/name`, the way kubectl and kube-scheduler's logs name a pod."""
        return f"{self.namespace}/{self.name}"

    @property
    def is_terminal(self) -> bool:
        return self.terminal

    def with_node(self, node_name: str) -> Pod:
        """This pod on `node_name` (what the cache assumes for every pod placed: built
        from the field values at once, as `dataclasses.replace` takes 10x as long)."""
        values = list(_pod_fields(self))
        values[_NODE_NAME] = node_name
        return Pod(*values)

    def keeping_annotations(self, keys: frozenset[str]) -> Pod:
        """This pod with only the annotations under `keys` (itself when it has no other)."""
        if all(key in keys for key in self.annotations):
            return self
        return replace(self, annotations={k: v for k, v in self.annotations.items() if k in keys})

    @classmethod
    def from_manifest(
        cls,
        obj: Mapping[str, Any],
        where: str = "Pod",
        accounting: Accounting = LEGACY_ACCOUNTING,
    ) -> Pod:
        """Read a Pod object (API JSON or YAML manifest), naming the field that is wrong;
        its requests counted by `accounting` (v1.28's by default)."""
        meta = obj.get("metadata") or {}
        name = meta.get("name")
        if not name or not isinstance(name, str):
            raise ManifestError(where, "metadata.name", "is required (a DNS-1123 name)")
        namespace = str(meta.get("namespace") or "default")
        where = f"Pod {namespace}/{name}"
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        fields = spec_fields(spec, where)
        requests, non_zero, score_requests = fields.requests, fields.non_zero, None
        host_ports = fields.host_ports
        if accounting is not LEGACY_ACCOUNTING and not accounting.is_legacy:
            counted = accounted(fields, status, accounting, where)
            requests, non_zero = counted.requests, counted.non_zero
            score_requests = counted.score_requests
            if accounting.sidecar_host_ports:
                host_ports = _with_sidecar_ports(fields, spec, where)
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
            scheduler_name=fields.scheduler_name,
            node_name=str(spec.get("nodeName") or ""),
            priority=fields.priority,
            requests=requests,
            non_zero=non_zero,
            labels={str(k): str(v) for k, v in (meta.get("labels") or {}).items()},
            annotations={str(k): str(v) for k, v in (meta.get("annotations") or {}).items()},
            tolerations=fields.tolerations,
            node_selector=fields.node_selector,
            affinity=fields.affinity,
            scheduling_gates=fields.scheduling_gates,
            owner=owner,
            created=str(meta.get("creationTimestamp") or ""),
            terminal=status.get("phase") in TERMINAL_PHASES,
            deleting=bool(meta.get("deletionTimestamp")),
            nominated_node_name=str(status.get("nominatedNodeName") or ""),
            host_ports=host_ports,
            images=fields.images,
            init_images=fields.init_images,
            image_volumes=fields.image_volumes,
            required_node_features=fields.required_node_features,
            topology_spread=fields.topology_spread,
            volumes=fields.volumes,
            uses=fields.uses,
            start_time=str(status.get("startTime") or ""),
            preemption_policy=fields.preemption_policy,
            disruption_target=_disruption_target(status),
            containers=fields.containers,
            init_containers=fields.init_containers,
            qos=fields.qos,
            score_requests=score_requests,
            restartable_init=fields.restartable_init,
            failed_scheduling=_failed_scheduling(status),
        )

    def to_record(self, *, node: bool = True) -> dict[str, Any]:
        """What a `pod_observed` event keeps: enough to rebuild this object exactly.

        Fields at their default are left out (`from_record` puts them back):
        most pods have no tolerations, affinity or gates, and every byte is
        written once per observation. `node` False: without `nodeName` (the record
        the log holds of a pod our Binding placed, as it was logged before).
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
        if node and self.node_name:
            record["nodeName"] = self.node_name
        # Each converted only when set: most are empty, and this runs for every pod listed.
        for key, attribute in _SCALARS:
            value = getattr(self, attribute)
            if value:
                record[key] = value
        for key, attribute in _MAPS:
            value = getattr(self, attribute)
            if value:
                record[key] = dict(value)
        for key, attribute in _SEQUENCES:
            value = getattr(self, attribute)
            if value:
                record[key] = list(value)
        if self.tolerations:
            record["tolerations"] = [t.to_dict() for t in self.tolerations]
        if self.host_ports:
            record["hostPorts"] = [p.to_dict() for p in self.host_ports]
        if self.topology_spread:
            record["topologySpread"] = [dict(c) for c in self.topology_spread]
        if self.volumes:
            record["volumes"] = [dict(v) for v in self.volumes]
        if self.containers:
            record["containers"] = [c.to_dict() for c in self.containers]
        if self.init_containers:
            record["initContainers"] = [c.to_dict() for c in self.init_containers]
        if self.qos != BEST_EFFORT:
            record["qos"] = self.qos
        if self.score_requests is not None:
            record["scoreRequests"] = dict(self.score_requests)
        if self.restartable_init:
            record["restartableInit"] = True
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
            init_images=tuple(record.get("initImages", ())),
            image_volumes=tuple(record.get("imageVolumes", ())),
            required_node_features=tuple(record.get("requiredNodeFeatures", ())),
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
            score_requests=_score_requests(record.get("scoreRequests")),
            restartable_init=bool(record.get("restartableInit", False)),
        )


_pod_fields = field_values(Pod)
_NODE_NAME = [f.name for f in fields(Pod)].index("node_name")


def _with_sidecar_ports(
    fields: SpecFields, spec: Mapping[str, Any], where: str
) -> tuple[HostPort, ...]:
    """The sidecars' host ports, then the app containers' (`schedutil.GetHostPorts`)."""
    sidecar_ports = fields.sidecar_ports
    if sidecar_ports is None:  # a wrong port: read again to raise its error
        sidecar_ports = sidecar_host_ports(spec.get("initContainers"), where)
    return (*sidecar_ports, *fields.host_ports) if sidecar_ports else fields.host_ports


def _score_requests(raw: Any) -> dict[str, int] | None:
    return None if raw is None else {str(k): int(v) for k, v in raw.items()}


def _failed_scheduling(status: Mapping[str, Any]) -> str:
    """The message of a PodScheduled=False condition its scheduler set, else ""."""
    for condition in status.get("conditions") or []:
        if (
            isinstance(condition, Mapping)
            and condition.get("type") == "PodScheduled"
            and condition.get("status") == "False"
            and condition.get("reason") in ("Unschedulable", "SchedulerError")
        ):
            return str(condition.get("message") or "")
    return ""


def _disruption_target(status: Mapping[str, Any]) -> str:
    """The reason of the first DisruptionTarget condition when it is True, else ""."""
    for condition in status.get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == "DisruptionTarget":
            return str(condition.get("reason") or "") if condition.get("status") == "True" else ""
    return ""
