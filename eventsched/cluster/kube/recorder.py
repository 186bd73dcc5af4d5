"""Events and the PodScheduled condition, written as kube-scheduler writes them.

kube-scheduler records through client-go's events.k8s.io/v1 broadcaster
(reportingController = the profile's schedulerName, reportingInstance =
controller + "-" + hostname, name = pod name + "." + hex nanoseconds) and
patches `status.conditions` with a strategic merge patch, skipping the
patch when the condition would not change. Both are best effort there and
here: they run off the scheduling loop and a failure is logged, not raised.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import structlog
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from eventsched.cluster.kube.connection import REQUEST_TIMEOUT
from eventsched.cluster.kube.ratelimit import TokenBucket
from eventsched.model import Pod

log = structlog.get_logger(__name__)

STRATEGIC_MERGE = "application/strategic-merge-patch+json"


def rfc3339_micro(now: datetime) -> str:
    """MicroTime as the API serializes it."""
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rfc3339(now: datetime) -> str:
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def event_body(
    pod: Pod,
    event_type: str,
    reason: str,
    action: str,
    note: str,
    controller: str,
    instance: str,
    now: datetime,
    resource_version: str = "",
) -> dict[str, Any]:
    """An events.k8s.io/v1 Event exactly as client-go's recorder makes one."""
    regarding: dict[str, Any] = {
        "kind": "Pod",
        "namespace": pod.namespace,
        "name": pod.name,
        "uid": pod.uid,
        "apiVersion": "v1",
    }
    if resource_version:
        regarding["resourceVersion"] = resource_version
    nanos = int(now.timestamp() * 1_000_000) * 1000
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": f"{pod.name}.{nanos:x}", "namespace": pod.namespace},
        "eventTime": rfc3339_micro(now),
        "reportingController": controller,
        "reportingInstance": instance,
        "action": action,
        "reason": reason,
        "regarding": regarding,
        "note": note,
        "type": event_type,
    }


def unschedulable_patch(
    current: Mapping[str, Any] | None,
    message: str,
    nominated_node: str,
    now: datetime,
    reason: str = "Unschedulable",
) -> dict[str, Any] | None:
    """The status patch for a failed attempt, or None when nothing would change.

    `current` is the pod's PodScheduled condition as last seen (API JSON).
    As in podutil.UpdatePodCondition, lastTransitionTime moves only when the
    status does.
    """
    condition = {
        "type": "PodScheduled",
        "status": "False",
        "reason": reason,
        "message": message,
        "lastProbeTime": None,
        "lastTransitionTime": rfc3339(now),
    }
    unchanged = False
    if current is not None and current.get("status") == "False":
        condition["lastTransitionTime"] = (
            current.get("lastTransitionTime") or condition["lastTransitionTime"]
        )
        unchanged = current.get("reason") == reason and current.get("message") == message
    if unchanged and not nominated_node:
        return None
    status: dict[str, Any] = {"conditions": [condition]}
    if nominated_node:
        status["nominatedNodeName"] = nominated_node
    return {"status": status}


class Recorder:
    """Writes Events and status patches from a small pool, rate limited with the client."""

    def __init__(
        self,
        api: client.ApiClient,
        limiter: TokenBucket,
        current_condition: Callable[[Pod], Mapping[str, Any] | None],
        workers: int = 4,
        hostname: str | None = None,
    ) -> None:
        self._core = client.CoreV1Api(api)
        self._events = client.EventsV1Api(api)
        self._limiter = limiter
        self._current = current_condition
        self._hostname = hostname or socket.gethostname()
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="kube-recorder")
        self.failures = 0

    def event(self, pod: Pod, event_type: str, reason: str, action: str, note: str) -> None:
        controller = pod.scheduler_name
        body = event_body(
            pod,
            event_type,
            reason,
            action,
            note,
            controller,
            f"{controller}-{self._hostname}",
            datetime.now(UTC),
        )
        self._submit(self._create_event, pod, body)

    def unschedulable(
        self, pod: Pod, message: str, nominated_node: str = "", reason: str = "Unschedulable"
    ) -> None:
        self._submit(self._patch_status, pod, message, nominated_node, reason)

    def _submit(self, write: Callable[..., None], *args: Any) -> None:
        """Off the caller's thread; once stopping, on it (the last outcomes still get written)."""
        try:
            self._pool.submit(write, *args)
        except RuntimeError:
            write(*args)

    def stop(self) -> None:
        """Let queued writes finish: each is bounded by the client's request timeout."""
        self._pool.shutdown(wait=True)

    def _create_event(self, pod: Pod, body: dict[str, Any]) -> None:
        self._limiter.acquire()
        try:
            # The client serializes a plain dict as is; building the model would only be undone.
            self._events.create_namespaced_event(
                pod.namespace,
                body,  # type: ignore[arg-type]
                _preload_content=False,
                _request_timeout=REQUEST_TIMEOUT,
            )
        except Exception as exc:
            self._failed("event", pod, exc, reason=body["reason"])

    def _patch_status(self, pod: Pod, message: str, nominated_node: str, reason: str) -> None:
        current = self._current(pod)
        patch = unschedulable_patch(current, message, nominated_node, datetime.now(UTC), reason)
        if patch is None:
            return
        self._limiter.acquire()
        try:
            self._core.patch_namespaced_pod_status(
                pod.name,
                pod.namespace,
                patch,
                _content_type=STRATEGIC_MERGE,
                _preload_content=False,
                _request_timeout=REQUEST_TIMEOUT,
            )
        except ApiException as exc:
            if exc.status == 404:
                return  # the pod is gone; kube-scheduler ignores this too
            self._failed("status patch", pod, exc)
        except Exception as exc:
            self._failed("status patch", pod, exc)

    def _failed(self, what: str, pod: Pod, exc: Exception, **extra: object) -> None:
        self.failures += 1
        log.warning(
            f"could not write the pod's {what}",
            pod=pod.key,
            error=str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__,
            **extra,
        )
