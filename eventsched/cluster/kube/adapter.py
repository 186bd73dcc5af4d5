"""The cluster protocol on a real API server.

Nodes and pods are listed and watched as plain JSON (`informer.py`) and
read straight into the scheduler's Node and Pod; what the scheduler sees of
a pod follows kube-scheduler's informer: terminal pods leave the cache
(kube-scheduler lists with `status.phase!=Succeeded,!=Failed`), unassigned
pods of other schedulers are none of our business, assigned pods of every
scheduler use capacity. Bindings go through the pods/binding subresource;
Events and the PodScheduled condition through the Recorder; VolumeBinding's
PersistentVolume updates and reads through `volumes.py`. Every request goes
through one keep-alive pool (`rest.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, cast

import structlog

from eventsched.cluster.kube.connection import Api, ClientConnection, rate_limiter
from eventsched.cluster.kube.convert import to_node, to_object, to_pod
from eventsched.cluster.kube.evictions import Evictions
from eventsched.cluster.kube.informer import DELETED, Informer, ListWatchError
from eventsched.cluster.kube.observedgeneration import observed_generation
from eventsched.cluster.kube.prefetch import POD_QUERY, Prefetch
from eventsched.cluster.kube.recorder import WORKERS as RECORDER_WORKERS
from eventsched.cluster.kube.recorder import Recorder, pod_reference
from eventsched.cluster.kube.rest import RequestObserver, Rest, TransportError, resource_path
from eventsched.cluster.kube.slim import slim_decoders
from eventsched.cluster.kube.volumes import VolumeRequests
from eventsched.model import Node, Pod
from eventsched.model.accounting import LEGACY_ACCOUNTING, Accounting
from eventsched.model.changes import BindOutcome, ChangeType, ClusterChange
from eventsched.model.customkinds import CUSTOM_KINDS, CustomKind
from eventsched.model.objects import ClusterObject
from eventsched.model.preemptionwrites import DISRUPTION_TARGET
from eventsched.model.volumes import CSINode, PersistentVolume, PersistentVolumeClaim

if TYPE_CHECKING:
    from kubernetes import client

log = structlog.get_logger(__name__)

OnChange = Callable[[ClusterChange], None]

#: Status codes after which retrying the same Binding cannot succeed.
FINAL_BIND_CODES = frozenset({404, 409})

#: The other kinds plugins read (model/objects.py): resource path and object kind.
OBJECT_RESOURCES = (
    ("namespaces", "Namespace"),
    ("services", "Service"),
    ("replicationcontrollers", "ReplicationController"),
    ("apps/v1/replicasets", "ReplicaSet"),
    ("apps/v1/statefulsets", "StatefulSet"),
    # The volume plugins' (model/volumes.py).
    ("persistentvolumeclaims", "PersistentVolumeClaim"),
    ("persistentvolumes", "PersistentVolume"),
    ("storage.k8s.io/v1/storageclasses", "StorageClass"),
    ("storage.k8s.io/v1/csinodes", "CSINode"),
    ("storage.k8s.io/v1/csidrivers", "CSIDriver"),
    ("storage.k8s.io/v1/csistoragecapacities", "CSIStorageCapacity"),
    # DefaultPreemption's (model/disruption.py).
    ("policy/v1/poddisruptionbudgets", "PodDisruptionBudget"),
)


class KubeCluster:
    """Implements `eventsched.scheduler.ports.Cluster`: plain JSON, configured as the official client is."""

    def __init__(
        self,
        api: Api | client.ApiClient,
        scheduler_names: Collection[str],
        connection: ClientConnection | None = None,
        request_threads: int = 16,
        custom_kinds: Collection[str] = (),
        observer: RequestObserver | None = None,
        prefetch: Prefetch | None = None,
        accounting: Accounting = LEGACY_ACCOUNTING,
        observed_generation_tracking: bool | None = None,
    ) -> None:
        """`request_threads`: the caller's threads that send requests through this cluster
        at once (the binders); `custom_kinds`: the custom kinds to watch as well, by name
        (`Registry.custom_kinds`: those the profiles' plugins read), as model/customkinds.py
        declares them; `observer`: told of every request (the rest_client metrics);
        `prefetch`: the nodes' and pods' first lists, already asked for (`first_lists`);
        `accounting`: how a pod's resources count (the profiles' `Features.accounting`);
        `observed_generation_tracking`: the gate PodObservedGenerationTracking, with which
        the conditions written carry the pod's generation (None: before v1.34, never)."""
        connection = connection or ClientConnection()
        # A keep-alive connection for each: a connection returned to a full pool is
        # dropped, and the next request pays a new TLS handshake.
        watches = 2 + len(OBJECT_RESOURCES) + len(custom_kinds)
        pool_size = request_threads + watches + 2 * RECORDER_WORKERS + 1  # + the loop's own
        self._rest = Rest(api.configuration, pool_size)
        self._rest.observer = observer
        self._schedulers = frozenset(scheduler_names)
        self._accounting = accounting
        self._limiter = rate_limiter(connection)
        self._on_change: OnChange | None = None
        self._stopped = threading.Event()
        first_answer = None
        if prefetch is not None:
            prefetch.report(observer)
            first_answer = prefetch.take
        self.nodes = Informer(
            self._rest,
            resource_path("nodes"),
            self._node,
            self._watch_error("nodes"),
            name="nodes",
            decoders=slim_decoders("Node"),
            first_answer=first_answer,
        )
        self.pods = Informer(
            self._rest,
            resource_path("pods"),
            self._pod,
            self._watch_error("pods"),
            query=POD_QUERY,
            name="pods",
            decoders=slim_decoders("Pod"),
            first_answer=first_answer,
        )
        self.objects = [
            Informer(
                self._rest,
                resource_path(resource),
                self._object(kind),
                self._watch_error(resource),
                name=resource.rpartition("/")[2],
            )
            for resource, kind in OBJECT_RESOURCES
        ]
        self.custom = {
            kind: self._custom_informer(CUSTOM_KINDS[kind]) for kind in sorted(custom_kinds)
        }
        self.volumes = VolumeRequests(self._rest, self._limiter)
        self._tracking = observed_generation_tracking
        self.evictions = Evictions(
            self._rest, self._limiter, lambda pod: self._generation(pod, DISRUPTION_TARGET)
        )
        # Events get a rate limit of their own, as kube-scheduler gives them a client of their own.
        self.recorder = Recorder(
            self._rest,
            self._limiter,
            rate_limiter(connection),
            self._pod_condition,
            observed_generation=lambda pod: self._generation(pod, "PodScheduled"),
        )

    # -- the protocol -----------------------------------------------------------

    def start(self, on_change: OnChange) -> None:
        self._on_change = on_change
        for informer in self._informers:
            informer.start()

    def relist(self) -> None:
        """Every informer lists again (its watch ended), as after a failed watch."""
        for informer in self._informers:
            informer.relist()

    def wait_synced(self, timeout: float | None = None) -> bool:
        """True once every initial list was delivered; False on timeout or stop."""
        for synced in (informer.synced for informer in self._informers):
            while not synced.wait(0.2 if timeout is None else min(0.2, timeout)):
                if self._stopped.is_set():
                    return False
                if timeout is not None:
                    timeout -= 0.2
                    if timeout <= 0:
                        return False
        return True

    @property
    def synced(self) -> bool:
        return all(informer.synced.is_set() for informer in self._informers)

    @property
    def _informers(self) -> list[Informer]:
        """Objects before nodes before pods, as the scheduler would like to see them."""
        return [*self.objects, *self.custom.values(), self.nodes, self.pods]

    @property
    def connections(self) -> int:
        """Keep-alive connections kept to the API server."""
        return self._rest.pool_size

    def absent_kinds(self) -> list[str]:
        """The custom resources the API server does not serve (CRD not installed)."""
        return [kind for kind, informer in self.custom.items() if informer.absent.is_set()]

    def bind(self, pod: Pod, node_name: str) -> BindOutcome:
        """POST pods/binding with the pod's UID as precondition, as DefaultBinder does."""
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        self._limiter.acquire()
        path = resource_path("pods", pod.namespace, pod.name) + "/binding"
        try:
            answer = self._rest.request("POST", path, body)
        except TransportError as exc:
            return BindOutcome(False, 0, f"no answer from the API server: {exc}")
        if answer.ok:
            return BindOutcome(True, answer.status)
        return BindOutcome(
            False, answer.status, answer.message, final=answer.status in FINAL_BIND_CODES
        )

    def bind_volume(self, volume: str, claim: PersistentVolumeClaim) -> None:
        self.volumes.bind_volume(volume, claim)

    def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        self.volumes.select_node(claim, node_name)

    def read_volume(self, name: str) -> PersistentVolume:
        return self.volumes.read_volume(name)

    def read_claim(self, namespace: str, name: str) -> PersistentVolumeClaim:
        return self.volumes.read_claim(namespace, name)

    def read_node(self, name: str) -> Node:
        return self.volumes.read_node(name)

    def read_csi_node(self, name: str) -> CSINode:
        return self.volumes.read_csi_node(name)

    def preempt(self, victim: Pod, preemptor: Pod) -> None:
        self.evictions.preempt(victim, preemptor)

    def clear_nomination(self, pod: Pod) -> None:
        # After the pod's queued status patch: one that nominates it must not land last.
        self.recorder.settle(pod)
        self.evictions.clear_nomination(pod)

    def emit_event(
        self,
        pod: Pod,
        event_type: str,
        reason: str,
        action: str,
        message: str,
        related: Pod | None = None,
    ) -> None:
        """References carry the resourceVersion the informer last saw, as client-go's do."""
        version = self._resource_version(pod)
        if related is None:
            self.recorder.event(pod, event_type, reason, action, message, version)
            return
        reference = pod_reference(related, self._resource_version(related))
        self.recorder.event(
            pod, event_type, reason, action, message, version, reference, related.scheduler_name
        )

    def set_unschedulable(
        self,
        pod: Pod,
        message: str,
        nominated_node: str | None = None,
        reason: str = "Unschedulable",
    ) -> None:
        self.recorder.unschedulable(pod, message, nominated_node, reason)

    def stop(self, abandon: bool = False) -> None:
        """Stop watching and deliver nothing more; queued Events and patches are still
        written, unless `abandon` (the lease is lost): then they are dropped."""
        self._stopped.set()
        self._on_change = None
        for informer in self._informers:
            # Abandoning, an informer in the middle of a list is not waited for either.
            informer.stop(timeout=0.0 if abandon else 2.0)
        self.recorder.stop(abandon)

    # -- informer plumbing ------------------------------------------------------

    def _deliver(self, change_type: str, obj: Node | Pod | ClusterObject) -> None:
        on_change = self._on_change
        if on_change is not None:
            on_change(ClusterChange(cast(ChangeType, change_type), obj))

    def _node(self, event_type: str, obj: dict[str, Any]) -> None:
        node = to_node(obj)
        if node is not None:
            self._deliver(event_type, node)

    def _object(self, kind: str) -> Callable[[str, dict[str, Any]], None]:
        def handle(event_type: str, obj: dict[str, Any]) -> None:
            read = to_object(obj, kind)
            if read is not None:
                self._deliver(event_type, read)

        return handle

    def _pod(self, event_type: str, obj: dict[str, Any]) -> None:
        pod = to_pod(obj, self._accounting)
        if pod is None:
            return
        if not pod.node_name and pod.scheduler_name not in self._schedulers:
            return
        if pod.is_terminal:
            event_type = DELETED
        self._deliver(event_type, pod)

    def _watch_error(self, resource: str) -> Callable[[Exception], None]:
        def report(error: Exception) -> None:
            if self._stopped.is_set():
                return  # stopping closes the watch streams; that is no failure
            if isinstance(error, ListWatchError) and error.code == 410:
                log.info("watch expired (410 Gone); relisting", resource=resource)
            else:
                log.warning("list/watch failed; retrying", resource=resource, error=str(error))

        return report

    def _custom_informer(self, custom: CustomKind[Any]) -> Informer:
        """A custom kind's informer: optional, as the API server may not serve it."""
        return Informer(
            self._rest,
            resource_path(custom.resource),
            self._object(custom.kind),
            self._custom_error(custom),
            name=custom.plural,
            optional=True,
        )

    def _custom_error(self, custom: CustomKind[Any]) -> Callable[[Exception], None]:
        """A missing CRD is said once, with the fix; it is listed again until it appears."""
        kind = custom.kind
        other = self._watch_error(custom.resource)
        said = threading.Event()

        def report(error: Exception) -> None:
            if not (isinstance(error, ListWatchError) and error.code == 404):
                other(error)
                return
            if not said.is_set():
                said.set()
                log.warning(
                    f"the API server does not serve {kind} (its CRD is not installed): the "
                    f"plugins that read it see none until it is; install it with "
                    f"`kubectl apply -f {custom.crd_file}`",
                    kind=kind,
                    resource=custom.resource,
                )

        return report

    def _resource_version(self, pod: Pod) -> str:
        seen = self.pods.get(pod.key)
        return str((seen or {}).get("metadata", {}).get("resourceVersion") or "")

    def _generation(self, pod: Pod, condition_type: str) -> int:
        """The observedGeneration of a condition written to `pod` (observedgeneration.py)."""
        return observed_generation(self.pods.get(pod.key), condition_type, self._tracking)

    def _pod_condition(self, pod: Pod) -> Mapping[str, Any] | None:
        """The pod's PodScheduled condition as the informer last saw it."""
        cached = self.pods.get(pod.key)
        if cached is None:
            return None
        for condition in (cached.get("status") or {}).get("conditions") or []:
            if condition.get("type") == "PodScheduled":
                return dict(condition)
        return None
