"""The cluster protocol on a real API server.

Nodes and pods come from the client's SharedInformer; what the scheduler
sees of a pod follows kube-scheduler's informer: terminal pods leave the
cache (kube-scheduler lists with `status.phase!=Succeeded,!=Failed`),
unassigned pods of other schedulers are none of our business, assigned pods
of every scheduler use capacity. Bindings go through the pods/binding
subresource; Events and the PodScheduled condition through the Recorder.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Callable, Collection, Mapping
from typing import Any, cast

import structlog
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.informer import ADDED, DELETED, ERROR, MODIFIED, SharedInformer
from urllib3.exceptions import HTTPError

from eventsched.cluster.kube.connection import REQUEST_TIMEOUT, ClientConnection, rate_limiter
from eventsched.cluster.kube.convert import as_dict, to_node, to_pod
from eventsched.cluster.kube.recorder import Recorder
from eventsched.model import Node, Pod
from eventsched.model.changes import BindOutcome, ChangeType, ClusterChange

log = structlog.get_logger(__name__)

# The informer logs each watch failure with a traceback through `logging`, and
# also hands it to our ERROR handler, which logs one structured line instead.
logging.getLogger("kubernetes.informer.informer").setLevel(logging.CRITICAL)

OnChange = Callable[[ClusterChange], None]

#: Status codes after which retrying the same Binding cannot succeed.
FINAL_BIND_CODES = frozenset({404, 409})


class KubeCluster:
    """Implements `eventsched.scheduler.ports.Cluster` with the official client."""

    def __init__(
        self,
        api: client.ApiClient,
        scheduler_names: Collection[str],
        connection: ClientConnection | None = None,
        resync_period: float = 0.0,
    ) -> None:
        connection = connection or ClientConnection()
        self._core = client.CoreV1Api(api)
        self._schedulers = frozenset(scheduler_names)
        self._limiter = rate_limiter(connection)
        self._on_change: OnChange | None = None
        self._stopped = threading.Event()
        self._synced = {"nodes": threading.Event(), "pods": threading.Event()}
        self.nodes = SharedInformer(
            self._synced_on_watch(self._core.list_node, "nodes"), resync_period=resync_period
        )
        self.pods = SharedInformer(
            self._synced_on_watch(self._core.list_pod_for_all_namespaces, "pods"),
            resync_period=resync_period,
        )
        self.recorder = Recorder(api, self._limiter, self._pod_condition)
        for event_type in (ADDED, MODIFIED, DELETED):
            self.nodes.add_event_handler(event_type, functools.partial(self._node, event_type))
            self.pods.add_event_handler(event_type, functools.partial(self._pod, event_type))
        self.nodes.add_event_handler(ERROR, functools.partial(self._watch_error, "nodes"))
        self.pods.add_event_handler(ERROR, functools.partial(self._watch_error, "pods"))

    # -- the protocol -----------------------------------------------------------

    def start(self, on_change: OnChange) -> None:
        self._on_change = on_change
        self.nodes.start()
        self.pods.start()

    def wait_synced(self, timeout: float | None = None) -> bool:
        """True once both initial lists were delivered; False on timeout or stop."""
        for synced in self._synced.values():
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
        return all(s.is_set() for s in self._synced.values())

    def bind(self, pod: Pod, node_name: str) -> BindOutcome:
        """POST pods/binding with the pod's UID as precondition, as DefaultBinder does."""
        body = client.V1Binding(
            api_version="v1",
            kind="Binding",
            metadata=client.V1ObjectMeta(name=pod.name, namespace=pod.namespace, uid=pod.uid),
            target=client.V1ObjectReference(api_version="v1", kind="Node", name=node_name),
        )
        self._limiter.acquire()
        try:
            # The generated model cannot parse the Status the API answers with
            # (kubernetes-client/python#547), hence the raw response.
            response = self._core.create_namespaced_pod_binding(
                pod.name,
                pod.namespace,
                body,
                _preload_content=False,
                _request_timeout=REQUEST_TIMEOUT,
            )
        except ApiException as exc:
            code = int(exc.status or 0)
            return BindOutcome(False, code, status_message(exc), final=code in FINAL_BIND_CODES)
        except (HTTPError, OSError) as exc:
            return BindOutcome(False, 0, f"no answer from the API server: {exc}")
        return BindOutcome(True, int(getattr(response, "status", 201) or 201))

    def emit_event(self, pod: Pod, event_type: str, reason: str, action: str, message: str) -> None:
        self.recorder.event(pod, event_type, reason, action, message)

    def set_unschedulable(
        self, pod: Pod, message: str, nominated_node: str = "", reason: str = "Unschedulable"
    ) -> None:
        self.recorder.unschedulable(pod, message, nominated_node, reason)

    def stop(self) -> None:
        """Stop watching and deliver nothing more; queued Events and patches are still written."""
        self._stopped.set()
        self._on_change = None
        stoppers = [
            threading.Thread(target=informer.stop, name="informer-stop", daemon=True)
            for informer in (self.nodes, self.pods)
        ]
        for stopper in stoppers:
            stopper.start()
        # SharedInformer.stop joins its thread; one caught between sending a
        # watch request and its answer waits for the next event. Its threads
        # are daemons, so do not let that hold up a shutdown.
        for stopper in stoppers:
            stopper.join(2.0)
        self.recorder.stop()

    # -- informer plumbing ------------------------------------------------------

    def _synced_on_watch(self, list_func: Callable[..., Any], name: str) -> Callable[..., Any]:
        """The informer's list function, noting sync when it turns to watching.

        SharedInformer fires ADDED for the whole initial list before it opens
        the watch, so the first watch call means everything listed was
        delivered. `functools.wraps` keeps the signature the client's Watch
        reads the item type from.
        """
        synced = self._synced[name]

        @functools.wraps(list_func)
        def call(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("watch"):
                synced.set()
            else:
                kwargs.setdefault("_request_timeout", REQUEST_TIMEOUT)
            return list_func(*args, **kwargs)

        return call

    def _deliver(self, change_type: str, obj: Node | Pod) -> None:
        on_change = self._on_change
        if on_change is not None:
            on_change(ClusterChange(cast(ChangeType, change_type), obj))

    def _node(self, event_type: str, obj: Any) -> None:
        node = to_node(obj)
        if node is not None:
            self._deliver(event_type, node)

    def _pod(self, event_type: str, obj: Any) -> None:
        pod = to_pod(obj)
        if pod is None:
            return
        if not pod.node_name and pod.scheduler_name not in self._schedulers:
            return
        if pod.is_terminal:
            event_type = DELETED
        self._deliver(event_type, pod)

    def _watch_error(self, resource: str, error: Any) -> None:
        if self._stopped.is_set():
            return  # stopping closes the watch streams; that is no failure
        status = getattr(error, "status", None)
        if status == 410:
            log.info("watch expired (410 Gone); relisting", resource=resource)
        else:
            log.warning("list/watch failed; retrying", resource=resource, error=_first_line(error))

    def _pod_condition(self, pod: Pod) -> Mapping[str, Any] | None:
        """The pod's PodScheduled condition as the informer last saw it."""
        cached = self.pods.cache.get_by_key(pod.key)
        if cached is None:
            return None
        for condition in (as_dict(cached).get("status") or {}).get("conditions") or []:
            if condition.get("type") == "PodScheduled":
                return dict(condition)
        return None


def status_message(exc: ApiException) -> str:
    """The `message` of the Status the API answered with, else the HTTP reason."""
    try:
        body = json.loads(exc.body or "")
    except (TypeError, ValueError):
        body = None
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    return f"{exc.status} {exc.reason}".strip()


def _first_line(error: Any) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
