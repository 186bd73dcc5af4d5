"""Preemption's requests on a real API server, as kube-scheduler v1.28 makes them.

`PreemptPod`: a strategic merge patch of `pods/<name>/status` adds the
DisruptionTarget condition (model/preemptionwrites.py), then a DELETE removes the
pod (the kubelet then terminates it gracefully; until it has, the pod is seen
with a deletionTimestamp). A victim already gone (404 on either request)
counts as preempted, as upstream treats it.

`util.ClearNominatedNodeName`: for a lower-priority pod nominated to the
chosen node, a status patch emptying status.nominatedNodeName (null, as the
two-way merge patch of a field that went empty reads); a pod gone is no error.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from eventsched.cluster.kube.ratelimit import TokenBucket
from eventsched.cluster.kube.recorder import rfc3339
from eventsched.cluster.kube.rest import (
    Answer,
    Rest,
    TransportError,
    limited_request,
    resource_path,
)
from eventsched.cluster.kube.statuspatch import patch_pod_status
from eventsched.model import Pod
from eventsched.model.changes import ApiError
from eventsched.model.preemptionwrites import (
    DISRUPTION_TARGET,
    PREEMPTION_BY_SCHEDULER,
    disruption_message,
)

PODS = "pods"

#: The status patch `ClearNominatedNodeName` sends.
CLEAR_NOMINATION: dict[str, Any] = {"status": {"nominatedNodeName": None}}


def disruption_patch(
    scheduler_name: str, now: datetime, observed_generation: int = 0
) -> dict[str, Any]:
    """The status patch that marks a pod as a victim of preemption (`observed_generation`:
    v1.34+, written when not 0)."""
    condition: dict[str, Any] = {
        "type": DISRUPTION_TARGET,
        "status": "True",
        "reason": PREEMPTION_BY_SCHEDULER,
        "message": disruption_message(scheduler_name),
        "lastTransitionTime": rfc3339(now),
    }
    if observed_generation:
        condition["observedGeneration"] = observed_generation
    return {"status": {"conditions": [condition]}}


class Evictions:
    """The two requests, through the adapter's connection pool and rate limit."""

    def __init__(
        self,
        rest: Rest,
        limiter: TokenBucket,
        observed_generation: Callable[[Pod], int] | None = None,
    ) -> None:
        """`observed_generation`: the DisruptionTarget condition's for a victim (v1.34+)."""
        self._rest = rest
        self._limiter = limiter
        self._observed_generation = observed_generation

    def preempt(self, victim: Pod, preemptor: Pod) -> None:
        path = resource_path(PODS, victim.namespace, victim.name)
        generation = self._observed_generation(victim) if self._observed_generation else 0
        patch = disruption_patch(preemptor.scheduler_name, datetime.now(UTC), generation)
        if self._patch_status(path + "/status", patch):
            self._request("DELETE", path)

    def clear_nomination(self, pod: Pod) -> None:
        """No request when the scheduler's copy has no nomination, as upstream; the API
        leaves a pod that has none unchanged."""
        if not pod.nominated_node_name:
            return
        path = resource_path(PODS, pod.namespace, pod.name) + "/status"
        self._patch_status(path, CLEAR_NOMINATION)

    def _patch_status(self, path: str, patch: Any) -> bool:
        """As `_request`, through PatchPodStatus's retries (statuspatch.py)."""
        try:
            answer = patch_pod_status(self._rest, self._limiter, path, patch)
        except TransportError as exc:
            raise ApiError(0, f"no answer from the API server: {exc}") from exc
        return _gone_or_ok(answer)

    def _request(self, method: str, path: str) -> bool:
        """True when the request succeeded, False when the pod is gone; ApiError otherwise."""
        return _gone_or_ok(limited_request(self._rest, self._limiter, method, path))


def _gone_or_ok(answer: Answer) -> bool:
    """True when the request succeeded, False when the pod is gone; ApiError otherwise."""
    if answer.ok:
        return True
    if answer.status == 404:
        return False
    raise ApiError(answer.status, answer.message)
