"""The cluster protocol in memory: what `eventsched simulate`, tests and benchmarks run on.

It answers like the API server where the scheduler can tell the difference
(status codes and messages of a Binding, a binding to an unknown node being
accepted) and delivers changes like an informer: in order, one at a time,
never from inside the cluster's lock (simstate.py's `ChangeFeed`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from uuid import uuid4

import structlog

from eventsched.cluster.naming import rfc3339
from eventsched.cluster.simstate import OnChange, SimState
from eventsched.cluster.simstatus import SimulatedPodStatus, started
from eventsched.cluster.simvolumes import SimulatedVolumes, with_claim_uid
from eventsched.cluster.types import BindOutcome, ChangeType, LoadedCluster, SimEvent
from eventsched.model import Node, Pod
from eventsched.model.changes import ApiError
from eventsched.model.objects import ClusterObject
from eventsched.model.volumes import CSI_NODE, CSINode, PersistentVolume, PersistentVolumeClaim

log = structlog.get_logger(__name__)

#: Reasons the API server gives for the codes a test is likely to inject.
_DEFAULT_REASONS = {
    404: "the server could not find the requested resource",
    409: "Operation cannot be fulfilled: the object has been modified",
    429: "Too many requests, please try again later.",
    500: "Internal error occurred: simulated failure",
    503: "the server is currently unable to handle the request",
}


@dataclass(frozen=True, slots=True)
class _Failure:
    code: int
    reason: str


class SimulatedCluster:
    """Nodes and pods in memory behind the scheduler's `Cluster` protocol; thread-safe.

    `events` (core Events the scheduler wrote), `conditions` (PodScheduled per
    pod key) and `bindings` ((pod key, node) in bind order) are there for tests
    and the CLI summary; copy them with `snapshot_records()` while binders run.
    The state is a `SimState` (simstate.py) the cluster shares with its two parts,
    which it delegates to: Events and the status the scheduler writes to pods (the
    PodScheduled condition, nominatedNodeName, preemption) are `SimulatedPodStatus`'
    (simstatus.py); VolumeBinding's volume requests, and the PV controller answering
    them, `SimulatedVolumes`' (simvolumes.py).
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
        self._state = state = SimState.empty()
        self._feed = state.feed
        state.objects.update((obj.key, with_claim_uid(obj)) for obj in objects)
        for node in nodes:
            if node.name in state.nodes:
                raise ValueError(f"node {node.name!r} is given twice")
            state.nodes[node.name] = node
        for pod in pods:
            if pod.key in state.pods:
                raise ValueError(f"pod {pod.key!r} is given twice")
            state.pods[pod.key] = self._started(_with_uid(pod))
        self.bind_calls = 0
        self._failures: deque[_Failure] = deque()
        self._status = SimulatedPodStatus(state, reporting_controller)
        self._volumes = SimulatedVolumes(state)

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

    @property
    def events(self) -> list[SimEvent]:
        return self._state.events

    @property
    def conditions(self) -> dict[str, dict[str, str]]:
        return self._state.conditions

    @property
    def bindings(self) -> list[tuple[str, str]]:
        return self._state.bindings

    # -- the Cluster protocol ------------------------------------------------------------

    def start(self, on_change: OnChange) -> None:
        """Deliver every node, then every pod, as ADDED (in this thread), then each change."""
        state = self._state
        with state.lock:
            listed = (*state.objects.values(), *state.nodes.values(), *state.pods.values())
            self._feed.open_locked(on_change, listed)
        log.debug("simulated cluster started", nodes=len(state.nodes), pods=len(state.pods))
        self._feed.deliver()

    def relist(self) -> None:
        """Deliver every object again as ADDED, as a new list would, then what follows."""
        state = self._state
        with state.lock:
            listed = (*state.objects.values(), *state.nodes.values(), *state.pods.values())
            self._feed.relist_locked(listed)
        self._feed.deliver()

    def wait_synced(self, timeout: float | None = None) -> bool:
        """True once the initial list has been delivered (at once, after `start`)."""
        return self._feed.wait_synced(timeout)

    def bind(self, pod: Pod, node_name: str) -> BindOutcome:
        """Assign the pod as the pods/binding subresource would, with its status codes."""
        with self._state.lock:
            self.bind_calls += 1
            outcome = self._bind_locked(pod, node_name)
        if not outcome.ok:
            log.debug("simulated bind refused", pod=pod.key, node=node_name, code=outcome.code)
        self._feed.deliver()
        return outcome

    def stop(self, abandon: bool = False) -> None:
        """Deliver nothing more; a change already being delivered finishes (nothing is
        queued to abandon)."""
        self._feed.close()

    def emit_event(
        self,
        pod: Pod,
        event_type: str,
        reason: str,
        action: str,
        message: str,
        related: Pod | None = None,
    ) -> None:
        """Keep the Event (simstatus.py)."""
        self._status.emit_event(pod, event_type, reason, action, message, related)

    def set_unschedulable(
        self,
        pod: Pod,
        message: str,
        nominated_node: str | None = None,
        reason: str = "Unschedulable",
    ) -> None:
        """PodScheduled=False and the nominated node, as one status update (simstatus.py)."""
        self._status.set_unschedulable(pod, message, nominated_node, reason)

    def clear_nomination(self, pod: Pod) -> None:
        """Empty status.nominatedNodeName (simstatus.py)."""
        self._status.clear_nomination(pod)

    def preempt(self, victim: Pod, preemptor: Pod) -> None:
        """Mark the victim DisruptionTarget and delete it (simstatus.py)."""
        self._status.preempt(victim, preemptor)

    def bind_volume(self, volume: str, claim: PersistentVolumeClaim) -> None:
        """Update the volume pre-bound to the claim (simvolumes.py)."""
        self._volumes.bind_volume(volume, claim)

    def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        """Update the claim with its selected node (simvolumes.py provisions it)."""
        self._volumes.select_node(claim, node_name)

    def read_volume(self, name: str) -> PersistentVolume:
        return self._volumes.read_volume(name)

    def read_claim(self, namespace: str, name: str) -> PersistentVolumeClaim:
        return self._volumes.read_claim(namespace, name)

    def read_node(self, name: str) -> Node:
        with self._state.lock:
            node = self._state.nodes.get(name)
        if node is None:
            raise ApiError(404, f'nodes "{name}" not found')
        return node

    def read_csi_node(self, name: str) -> CSINode:
        with self._state.lock:
            found = self._state.objects.get(f"{CSI_NODE}/{name}")
        if not isinstance(found, CSINode):
            raise ApiError(404, f'csinodes.storage.k8s.io "{name}" not found')
        return found

    def set_pv_controller(self, running: bool) -> None:
        """Stop or start the PV controller (simvolumes.py)."""
        self._volumes.set_pv_controller(running)

    def set_provisioner(self, running: bool, fails: bool = False) -> None:
        """Stop or start the provisioner, or make it give up (simvolumes.py)."""
        self._volumes.set_provisioner(running, fails)

    # -- failures for tests ------------------------------------------------------------

    def fail_next_binds(self, code: int, count: int = 1, reason: str = "") -> None:
        """Make the next `count` binds fail with `code` before the pod is even looked at.

        404 and 409 are final (retrying cannot help), anything else is not,
        as the binder must treat them.
        """
        failure = _Failure(code, reason or _DEFAULT_REASONS.get(code, f"simulated HTTP {code}"))
        with self._state.lock:
            self._failures.extend([failure] * count)

    @property
    def pending_failures(self) -> int:
        with self._state.lock:
            return len(self._failures)

    # -- reading -----------------------------------------------------------------------

    def get_pod(self, key: str) -> Pod | None:
        """The pod `namespace/name` as the cluster has it now."""
        with self._state.lock:
            return self._state.pods.get(key)

    def get_node(self, name: str) -> Node | None:
        with self._state.lock:
            return self._state.nodes.get(name)

    def list_nodes(self) -> list[Node]:
        with self._state.lock:
            return list(self._state.nodes.values())

    def list_pods(self) -> list[Pod]:
        with self._state.lock:
            return list(self._state.pods.values())

    def snapshot_records(
        self,
    ) -> tuple[list[SimEvent], dict[str, dict[str, str]], list[tuple[str, str]]]:
        """Copies of `events`, `conditions` and `bindings`, consistent with each other."""
        with self._state.lock:
            conditions = {key: dict(value) for key, value in self._state.conditions.items()}
            return list(self._state.events), conditions, list(self._state.bindings)

    # -- changing the cluster (tests and scenarios) -------------------------------------

    def put_object(self, obj: ClusterObject) -> None:
        """Create or update an object of model/objects.py's KINDS (a Namespace, a workload,
        a PersistentVolumeClaim, ...)."""
        with self._state.lock:
            previous = self._state.objects.get(obj.key)
            change: ChangeType = "MODIFIED" if previous is not None else "ADDED"
            obj = with_claim_uid(obj, previous)
            self._state.objects[obj.key] = obj
            self._feed.enqueue(change, obj)
        self._feed.deliver()

    def delete_object(self, key: str) -> None:
        with self._state.lock:
            obj = self._state.objects.pop(key)
            self._feed.enqueue("DELETED", obj)
        self._feed.deliver()

    def add_node(self, node: Node) -> None:
        with self._state.lock:
            if node.name in self._state.nodes:
                raise ValueError(f"node {node.name!r} already exists; use update_node")
            self._state.nodes[node.name] = node
            self._feed.enqueue("ADDED", node)
        self._feed.deliver()

    def update_node(self, node: Node) -> None:
        with self._state.lock:
            if node.name not in self._state.nodes:
                raise KeyError(f"node {node.name!r} does not exist; use add_node")
            self._state.nodes[node.name] = node
            self._feed.enqueue("MODIFIED", node)
        self._feed.deliver()

    def remove_node(self, name: str) -> Node:
        """Delete the node. Its pods stay, as they do until the pod GC controller runs."""
        with self._state.lock:
            node = self._state.nodes.pop(name, None)
            if node is None:
                raise KeyError(f"node {name!r} does not exist")
            self._feed.enqueue("DELETED", node)
        self._feed.deliver()
        return node

    def add_pod(self, pod: Pod) -> Pod:
        """Create the pod; returns it with the uid the "API server" gave it if it had none."""
        pod = self._started(_with_uid(pod))
        with self._state.lock:
            if pod.key in self._state.pods:
                raise ValueError(f"pod {pod.key!r} already exists; use update_pod")
            self._state.pods[pod.key] = pod
            self._feed.enqueue("ADDED", pod)
        self._feed.deliver()
        return pod

    def update_pod(self, pod: Pod) -> None:
        """Replace the pod, as a user's update: status the scheduler and the kubelet wrote
        (nominatedNodeName, startTime) stays unless `pod` gives it."""
        with self._state.lock:
            current = self._state.pods.get(pod.key)
            if current is None:
                raise KeyError(f"pod {pod.key!r} does not exist; use add_pod")
            pod = replace(
                pod,
                nominated_node_name=pod.nominated_node_name or current.nominated_node_name,
                start_time=pod.start_time or current.start_time,
            )
            pod = self._started(pod)
            self._state.pods[pod.key] = pod
            self._feed.enqueue("MODIFIED", pod)
        self._feed.deliver()

    def delete_pod(self, pod: Pod | str) -> Pod:
        """Delete a pod given as a Pod or as `namespace/name`; returns it as it was."""
        key = pod if isinstance(pod, str) else pod.key
        with self._state.lock:
            removed = self._state.pods.pop(key, None)
            if removed is None:
                raise KeyError(f"pod {key!r} does not exist")
            self._state.conditions.pop(key, None)
            self._feed.enqueue("DELETED", removed)
        self._feed.deliver()
        return removed

    # -- internals ---------------------------------------------------------------------

    def _bind_locked(self, pod: Pod, node_name: str) -> BindOutcome:
        if self._failures:
            failure = self._failures.popleft()
            return BindOutcome(
                ok=False, code=failure.code, reason=failure.reason, final=failure.code in (404, 409)
            )
        current = self._state.pods.get(pod.key)
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
        if node_name not in self._state.nodes:
            # The API server does not check the node; the pod would then wait for a kubelet
            # that never comes. Accept it as the API does, but say so.
            log.warning("pod bound to a node that does not exist", pod=pod.key, node=node_name)
        bound = self._started(current.with_node(node_name))
        self._state.pods[pod.key] = bound
        self._state.bindings.append((pod.key, node_name))
        self._state.conditions[pod.key] = {
            "type": "PodScheduled",
            "status": "True",
            "reason": "",
            "message": "",
            "lastTransitionTime": rfc3339(datetime.now(UTC)),
        }
        self._feed.enqueue("MODIFIED", bound)
        return BindOutcome(ok=True, code=201)

    def _started(self, pod: Pod) -> Pod:
        return started(pod) if self.start_pods else pod


def _with_uid(pod: Pod) -> Pod:
    """The API server gives every pod a uid; the scheduler keys its state on it."""
    return pod if pod.uid else replace(pod, uid=str(uuid4()))
