"""The cluster protocol in memory: what `eventsched simulate`, tests and benchmarks run on.

It answers like the API server where the scheduler can tell the difference
(status codes and messages of a Binding, a binding to an unknown node being
accepted) and delivers changes like an informer: in order, one at a time,
never from inside the cluster's lock. The scheduler's observer takes its own
locks in the callback; calling it while holding ours would let a binder
thread and the scheduling thread deadlock each other.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from uuid import uuid4

import structlog

from eventsched.cluster.naming import rfc3339
from eventsched.cluster.simstatus import SimulatedPodStatus, started
from eventsched.cluster.simvolumes import SimulatedVolumes, with_claim_uid
from eventsched.cluster.types import BindOutcome, ChangeType, ClusterChange, LoadedCluster, SimEvent
from eventsched.model import Node, Pod
from eventsched.model.objects import ClusterObject

log = structlog.get_logger(__name__)

OnChange = Callable[[ClusterChange], None]

#: Reasons the API server gives for the codes a test is likely to inject.
_DEFAULT_REASONS = {
    404: "the server could not find the requested resource",
    409: "Operation cannot be fulfilled: the object has been modified",
    429: "Too many requests, please try again later.",
    500: "Internal error occurred: simulated failure",
    503: "the server is currently unable to handle the request",
}


@dataclass(frozen=True, slots=True)
class _Synced:
    """Queued after the initial list: delivering it means the cache has everything."""


@dataclass(frozen=True, slots=True)
class _Failure:
    code: int
    reason: str


class SimulatedCluster(SimulatedPodStatus, SimulatedVolumes):
    """Nodes and pods in memory behind the scheduler's `Cluster` protocol; thread-safe.

    `events` (core Events the scheduler wrote), `conditions` (PodScheduled per
    pod key) and `bindings` ((pod key, node) in bind order) are there for tests
    and the CLI summary; copy them with `snapshot_records()` while binders run.
    Events and the status the scheduler writes to pods (the PodScheduled condition,
    nominatedNodeName, preemption) are `SimulatedPodStatus`' (simstatus.py);
    VolumeBinding's volume requests, and the PV controller answering them,
    `SimulatedVolumes`' (simvolumes.py).
    """

    def __init__(
        self,
        nodes: Iterable[Node] = (),
        pods: Iterable[Pod] = (),
        *,
        objects: Iterable[ClusterObject] = (),
        reporting_controller: str = "eventsched",
        start_pods: bool = False,
    ) -> None:
        """`start_pods`: the simulated kubelet starts every pod on a node (status.startTime
        when it is bound or created there), which DefaultPreemption orders victims by. Off,
        a bound pod is observed exactly as our Binding left it (no second `pod_observed`);
        on (`eventsched simulate`), each pod we bind is observed again with its startTime."""
        self.start_pods = start_pods
        self._lock = threading.Lock()
        self._nodes: dict[str, Node] = {}
        self._pods: dict[str, Pod] = {}
        #: Namespaces, workloads and storage objects by key (see model/objects.py).
        self._objects: dict[str, ClusterObject] = {obj.key: with_claim_uid(obj) for obj in objects}
        for node in nodes:
            if node.name in self._nodes:
                raise ValueError(f"node {node.name!r} is given twice")
            self._nodes[node.name] = node
        for pod in pods:
            if pod.key in self._pods:
                raise ValueError(f"pod {pod.key!r} is given twice")
            self._pods[pod.key] = self._started(_with_uid(pod))
        self.reporting_controller = reporting_controller
        self.events: list[SimEvent] = []
        self.conditions: dict[str, dict[str, str]] = {}
        self.bindings: list[tuple[str, str]] = []
        self.bind_calls = 0
        self._failures: deque[_Failure] = deque()
        self._on_change: OnChange | None = None
        self._pending: deque[ClusterChange | _Synced] = deque()
        # Held by the one thread delivering; never waited for (see _deliver).
        self._delivering = threading.Lock()
        self._synced = threading.Event()

    @classmethod
    def from_loaded(
        cls,
        loaded: LoadedCluster,
        *,
        reporting_controller: str = "eventsched",
        start_pods: bool = False,
    ) -> SimulatedCluster:
        """A cluster holding what `load_manifests` or `generate_cluster` produced."""
        return cls(
            loaded.nodes,
            loaded.pods,
            objects=loaded.objects,
            reporting_controller=reporting_controller,
            start_pods=start_pods,
        )

    # -- the Cluster protocol ------------------------------------------------------------

    def start(self, on_change: OnChange) -> None:
        """Deliver every node, then every pod, as ADDED (in this thread), then each change."""
        with self._lock:
            if self._on_change is not None:
                raise RuntimeError("SimulatedCluster.start() called twice without stop()")
            self._on_change = on_change
            self._synced.clear()
            self._pending.clear()
            self._pending.extend(ClusterChange("ADDED", obj) for obj in self._objects.values())
            self._pending.extend(ClusterChange("ADDED", node) for node in self._nodes.values())
            self._pending.extend(ClusterChange("ADDED", pod) for pod in self._pods.values())
            self._pending.append(_Synced())
        log.debug("simulated cluster started", nodes=len(self._nodes), pods=len(self._pods))
        self._deliver()

    def wait_synced(self, timeout: float | None = None) -> bool:
        """True once the initial list has been delivered (at once, after `start`)."""
        with self._lock:
            started = self._on_change is not None
        return started and self._synced.wait(timeout)

    def bind(self, pod: Pod, node_name: str) -> BindOutcome:
        """Assign the pod as the pods/binding subresource would, with its status codes."""
        with self._lock:
            self.bind_calls += 1
            outcome = self._bind_locked(pod, node_name)
        if not outcome.ok:
            log.debug("simulated bind refused", pod=pod.key, node=node_name, code=outcome.code)
        self._deliver()
        return outcome

    def stop(self, abandon: bool = False) -> None:
        """Deliver nothing more; a change already being delivered finishes (nothing is
        queued to abandon)."""
        with self._lock:
            self._on_change = None
            self._pending.clear()

    # -- failures for tests ------------------------------------------------------------

    def fail_next_binds(self, code: int, count: int = 1, reason: str = "") -> None:
        """Make the next `count` binds fail with `code` before the pod is even looked at.

        404 and 409 are final (retrying cannot help), anything else is not,
        as the binder must treat them.
        """
        failure = _Failure(code, reason or _DEFAULT_REASONS.get(code, f"simulated HTTP {code}"))
        with self._lock:
            self._failures.extend([failure] * count)

    @property
    def pending_failures(self) -> int:
        with self._lock:
            return len(self._failures)

    # -- reading -----------------------------------------------------------------------

    def get_pod(self, key: str) -> Pod | None:
        """The pod `namespace/name` as the cluster has it now."""
        with self._lock:
            return self._pods.get(key)

    def get_node(self, name: str) -> Node | None:
        with self._lock:
            return self._nodes.get(name)

    def list_nodes(self) -> list[Node]:
        with self._lock:
            return list(self._nodes.values())

    def list_pods(self) -> list[Pod]:
        with self._lock:
            return list(self._pods.values())

    def snapshot_records(
        self,
    ) -> tuple[list[SimEvent], dict[str, dict[str, str]], list[tuple[str, str]]]:
        """Copies of `events`, `conditions` and `bindings`, consistent with each other."""
        with self._lock:
            conditions = {key: dict(value) for key, value in self.conditions.items()}
            return list(self.events), conditions, list(self.bindings)

    # -- changing the cluster (tests and scenarios) -------------------------------------

    def put_object(self, obj: ClusterObject) -> None:
        """Create or update an object of model/objects.py's KINDS (a Namespace, a workload,
        a PersistentVolumeClaim, ...)."""
        with self._lock:
            previous = self._objects.get(obj.key)
            change: ChangeType = "MODIFIED" if previous is not None else "ADDED"
            obj = with_claim_uid(obj, previous)
            self._objects[obj.key] = obj
            self._enqueue(change, obj)
        self._deliver()

    def delete_object(self, key: str) -> None:
        with self._lock:
            obj = self._objects.pop(key)
            self._enqueue("DELETED", obj)
        self._deliver()

    def add_node(self, node: Node) -> None:
        with self._lock:
            if node.name in self._nodes:
                raise ValueError(f"node {node.name!r} already exists; use update_node")
            self._nodes[node.name] = node
            self._enqueue("ADDED", node)
        self._deliver()

    def update_node(self, node: Node) -> None:
        with self._lock:
            if node.name not in self._nodes:
                raise KeyError(f"node {node.name!r} does not exist; use add_node")
            self._nodes[node.name] = node
            self._enqueue("MODIFIED", node)
        self._deliver()

    def remove_node(self, name: str) -> Node:
        """Delete the node. Its pods stay, as they do until the pod GC controller runs."""
        with self._lock:
            node = self._nodes.pop(name, None)
            if node is None:
                raise KeyError(f"node {name!r} does not exist")
            self._enqueue("DELETED", node)
        self._deliver()
        return node

    def add_pod(self, pod: Pod) -> Pod:
        """Create the pod; returns it with the uid the "API server" gave it if it had none."""
        pod = self._started(_with_uid(pod))
        with self._lock:
            if pod.key in self._pods:
                raise ValueError(f"pod {pod.key!r} already exists; use update_pod")
            self._pods[pod.key] = pod
            self._enqueue("ADDED", pod)
        self._deliver()
        return pod

    def update_pod(self, pod: Pod) -> None:
        """Replace the pod, as a user's update: status the scheduler and the kubelet wrote
        (nominatedNodeName, startTime) stays unless `pod` gives it."""
        with self._lock:
            current = self._pods.get(pod.key)
            if current is None:
                raise KeyError(f"pod {pod.key!r} does not exist; use add_pod")
            pod = replace(
                pod,
                nominated_node_name=pod.nominated_node_name or current.nominated_node_name,
                start_time=pod.start_time or current.start_time,
            )
            pod = self._started(pod)
            self._pods[pod.key] = pod
            self._enqueue("MODIFIED", pod)
        self._deliver()

    def delete_pod(self, pod: Pod | str) -> Pod:
        """Delete a pod given as a Pod or as `namespace/name`; returns it as it was."""
        key = pod if isinstance(pod, str) else pod.key
        with self._lock:
            removed = self._pods.pop(key, None)
            if removed is None:
                raise KeyError(f"pod {key!r} does not exist")
            self.conditions.pop(key, None)
            self._enqueue("DELETED", removed)
        self._deliver()
        return removed

    # -- internals ---------------------------------------------------------------------

    def _bind_locked(self, pod: Pod, node_name: str) -> BindOutcome:
        if self._failures:
            failure = self._failures.popleft()
            return BindOutcome(
                ok=False, code=failure.code, reason=failure.reason, final=failure.code in (404, 409)
            )
        current = self._pods.get(pod.key)
        if current is None:
            return BindOutcome(
                ok=False, code=404, reason=f'pods "{pod.name}" not found', final=True
            )
        if pod.uid and current.uid != pod.uid:
            return BindOutcome(
                ok=False,
                code=409,
                reason=(
                    f'Operation cannot be fulfilled on pods/binding "{pod.name}": the UID in the '
                    f"precondition ({pod.uid}) does not match the UID in record ({current.uid}). "
                    "The object might have been deleted and then recreated"
                ),
                final=True,
            )
        if current.node_name:
            return BindOutcome(
                ok=False,
                code=409,
                reason=(
                    f'Operation cannot be fulfilled on pods/binding "{pod.name}": '
                    f'pod {pod.name} is already assigned to node "{current.node_name}"'
                ),
                final=True,
            )
        if node_name not in self._nodes:
            # The API server does not check the node; the pod would then wait for a kubelet
            # that never comes. Accept it as the API does, but say so.
            log.warning("pod bound to a node that does not exist", pod=pod.key, node=node_name)
        bound = self._started(current.with_node(node_name))
        self._pods[pod.key] = bound
        self.bindings.append((pod.key, node_name))
        self.conditions[pod.key] = {
            "type": "PodScheduled",
            "status": "True",
            "reason": "",
            "message": "",
            "lastTransitionTime": rfc3339(datetime.now(UTC)),
        }
        self._enqueue("MODIFIED", bound)
        return BindOutcome(ok=True, code=201)

    def _started(self, pod: Pod) -> Pod:
        return started(pod) if self.start_pods else pod

    def _enqueue(self, change_type: ChangeType, obj: Node | Pod | ClusterObject) -> None:
        """Queue a change for delivery; the caller holds the lock, so order is the state's."""
        if self._on_change is not None:
            self._pending.append(ClusterChange(change_type, obj))

    def _deliver(self) -> None:
        """Run the callback for queued changes, in order, outside the state lock.

        One thread delivers at a time. A thread that finds another delivering
        returns at once and leaves its changes to it, instead of waiting: so a
        callback that itself changes the cluster cannot deadlock, and the
        callback is never run concurrently with itself. The deliverer checks
        the queue again after letting go, so no change is left behind.
        """
        while True:
            if not self._delivering.acquire(blocking=False):
                return
            try:
                while (item := self._next_pending()) is not None:
                    change, on_change = item
                    if isinstance(change, _Synced):
                        self._synced.set()
                        continue
                    try:
                        on_change(change)
                    except Exception:
                        # As an informer does: a failing handler must not stop the stream.
                        log.exception("cluster change handler failed", change=change.type)
            finally:
                self._delivering.release()
            with self._lock:
                if not self._pending or self._on_change is None:
                    return

    def _next_pending(self) -> tuple[ClusterChange | _Synced, OnChange] | None:
        with self._lock:
            if not self._pending or self._on_change is None:
                return None
            return self._pending.popleft(), self._on_change


def _with_uid(pod: Pod) -> Pod:
    """The API server gives every pod a uid; the scheduler keys its state on it."""
    return pod if pod.uid else replace(pod, uid=str(uuid4()))
