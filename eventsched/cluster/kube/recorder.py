"""Events and the PodScheduled condition, written as kube-scheduler writes them.

kube-scheduler records through client-go's events.k8s.io/v1 broadcaster
(reportingController = the profile's schedulerName, reportingInstance =
controller + "-" + hostname, name = pod name + "." + hex nanoseconds) and
patches `status.conditions` with a strategic merge patch, skipping the
patch when the condition would not change. Both are best effort there and
here: they run off the scheduling loop and a failure is logged, not raised.

A pod's status patches are written in the order they were asked for (each
pod's go to one worker of the pool), and `settle` waits for those queued, so a
request the caller sends next for the same pod (clearing its nomination)
reaches the API server after them, never before.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime
from typing import Any

import structlog

from eventsched.cluster.kube.events import EventBroadcaster, rfc3339_micro
from eventsched.cluster.kube.ratelimit import TokenBucket
from eventsched.cluster.kube.rest import Rest, TransportError, resource_path
from eventsched.cluster.kube.statuspatch import patch_pod_status
from eventsched.model import Pod

log = structlog.get_logger(__name__)

#: Threads writing Events, and as many writing status patches (each with a connection).
WORKERS = 4


def rfc3339(now: datetime) -> str:
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod_reference(pod: Pod, resource_version: str = "") -> dict[str, Any]:
    """The ObjectReference client-go's `reference.GetReference` makes of a pod."""
    reference: dict[str, Any] = {
        "kind": "Pod",
        "namespace": pod.namespace,
        "name": pod.name,
        "uid": pod.uid,
        "apiVersion": "v1",
    }
    if resource_version:
        reference["resourceVersion"] = resource_version
    return reference


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
    related: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An events.k8s.io/v1 Event exactly as client-go's recorder makes one; `related` is
    the related object's reference (`pod_reference`), left out when there is none."""
    nanos = int(now.timestamp() * 1_000_000) * 1000
    body: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": f"{pod.name}.{nanos:x}", "namespace": pod.namespace},
        "eventTime": rfc3339_micro(now),
        "reportingController": controller,
        "reportingInstance": instance,
        "action": action,
        "reason": reason,
        "regarding": pod_reference(pod, resource_version),
        "note": note,
        "type": event_type,
    }
    if related is not None:
        body["related"] = related
    return body


def unschedulable_patch(
    current: Mapping[str, Any] | None,
    message: str,
    nomination: str | None,
    now: datetime,
    reason: str = "Unschedulable",
    observed_generation: int = 0,
) -> dict[str, Any] | None:
    """The status patch for a failed attempt, or None when nothing would change.

    `current` is the pod's PodScheduled condition as last seen (API JSON).
    As in podutil.UpdatePodCondition, lastTransitionTime moves only when the
    status does. `nomination`: None leaves status.nominatedNodeName out of the
    patch, a name sets it, "" clears it (null, as CreateTwoWayMergePatch writes
    a field that went empty); the caller decides, as `updatePod` does, that it
    differs from the pod's. `observed_generation` (v1.34+, observedgeneration.py) is
    written when not 0; whether anything changed does not look at it (`UpdatePodCondition`).
    """
    condition: dict[str, Any] = {
        "type": "PodScheduled",
        "status": "False",
        "reason": reason,
        "message": message,
        "lastProbeTime": None,
        "lastTransitionTime": rfc3339(now),
    }
    if observed_generation:
        condition["observedGeneration"] = observed_generation
    unchanged = False
    if current is not None and current.get("status") == "False":
        condition["lastTransitionTime"] = (
            current.get("lastTransitionTime") or condition["lastTransitionTime"]
        )
        unchanged = current.get("reason") == reason and current.get("message") == message
    if unchanged and nomination is None:
        return None
    status: dict[str, Any] = {"conditions": [condition]}
    if nomination is not None:
        status["nominatedNodeName"] = nomination or None
    return {"status": status}


class Recorder:
    """Events through the broadcaster (their own rate limit); status patches from a small pool.

    The status patch shares the Bindings' client and rate limit, as
    kube-scheduler's does; Events have a client of their own there, so
    they never delay a Binding.
    """

    def __init__(
        self,
        rest: Rest,
        limiter: TokenBucket,
        event_limiter: TokenBucket,
        current_condition: Callable[[Pod], Mapping[str, Any] | None],
        workers: int = WORKERS,
        hostname: str | None = None,
        observed_generation: Callable[[Pod], int] | None = None,
    ) -> None:
        """`observed_generation`: the PodScheduled condition's for a pod (v1.34+; None: 0)."""
        self._rest = rest
        self._limiter = limiter
        self._current = current_condition
        self._observed_generation = observed_generation
        self._hostname = hostname or socket.gethostname()
        self._events = EventBroadcaster(rest, event_limiter, workers)
        #: One single-thread worker per shard of pods: a pod's patches keep their order.
        self._workers = [
            ThreadPoolExecutor(1, thread_name_prefix=f"kube-status-{n}") for n in range(workers)
        ]
        #: The last status patch queued for each pod uid, until it is written.
        self._queued: dict[str, Future[None]] = {}
        self._queued_lock = threading.Lock()
        self._failures = 0

    @property
    def failures(self) -> int:
        """Events and status patches that could not be written."""
        return self._failures + self._events.failures

    def event(
        self,
        pod: Pod,
        event_type: str,
        reason: str,
        action: str,
        note: str,
        resource_version: str = "",
        related: dict[str, Any] | None = None,
        related_scheduler: str = "",
    ) -> None:
        """`resource_version`: the pod's as last seen (client-go's reference carries it).
        `related`: the related object's reference; `related_scheduler`, when given, is the
        reporting controller (the profile of the pod being scheduled wrote the Event)."""
        controller = related_scheduler or pod.scheduler_name
        body = event_body(
            pod,
            event_type,
            reason,
            action,
            note,
            controller,
            f"{controller}-{self._hostname}",
            datetime.now(UTC),
            resource_version,
            related,
        )
        self._events.record(body)

    def unschedulable(
        self,
        pod: Pod,
        message: str,
        nominated_node: str | None = None,
        reason: str = "Unschedulable",
    ) -> None:
        """Off the caller's thread; once stopping, on it (the last outcomes still get written).

        `nominated_node` is written only when not None and not what `pod` has (`updatePod`).
        """
        nomination = (
            nominated_node
            if nominated_node is not None and nominated_node != pod.nominated_node_name
            else None
        )
        worker = self._workers[hash(pod.uid) % len(self._workers)]
        try:
            queued = worker.submit(self._patch_status, pod, message, nomination, reason)
        except RuntimeError:
            self._patch_status(pod, message, nomination, reason)
            return
        with self._queued_lock:
            self._queued[pod.uid] = queued
        queued.add_done_callback(lambda done: self._written(pod.uid, done))

    def settle(self, pod: Pod) -> None:
        """Wait until the status patches queued for `pod` are written (or have failed)."""
        with self._queued_lock:
            queued = self._queued.get(pod.uid)
        if queued is not None:
            wait([queued])  # a failed patch was logged and counted by the worker

    def stop(self, abandon: bool = False) -> None:
        """Let queued writes finish: each is bounded by the request timeout. `abandon`
        (the lease is lost): drop them and return at once."""
        if abandon:
            for worker in self._workers:
                worker.shutdown(wait=False, cancel_futures=True)
            self._events.abandon()
            return
        for worker in self._workers:
            worker.shutdown(wait=True)
        self._events.stop()

    def _written(self, uid: str, done: Future[None]) -> None:
        with self._queued_lock:
            if self._queued.get(uid) is done:
                del self._queued[uid]

    def _patch_status(self, pod: Pod, message: str, nomination: str | None, reason: str) -> None:
        current = self._current(pod)
        generation = self._observed_generation(pod) if self._observed_generation else 0
        patch = unschedulable_patch(
            current, message, nomination, datetime.now(UTC), reason, generation
        )
        if patch is None:
            return
        path = resource_path("pods", pod.namespace, pod.name) + "/status"
        try:
            answer = patch_pod_status(self._rest, self._limiter, path, patch)
        except TransportError as exc:
            self._failed(pod, str(exc))
            return
        if not answer.ok and answer.status != 404:  # gone: kube-scheduler ignores this too
            self._failed(pod, f"{answer.status} {answer.message}")

    def _failed(self, pod: Pod, error: str) -> None:
        self._failures += 1
        log.warning("could not write the pod's status patch", pod=pod.key, error=error)
