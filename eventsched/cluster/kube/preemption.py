"""Preempting a victim on a real API server, as kube-scheduler v1.28's `PreemptPod` does.

A strategic merge patch of `pods/<name>/status` adds the DisruptionTarget
condition (model/preemption.py), then a DELETE removes the pod (the kubelet
then terminates it gracefully; until it has, the pod is seen with a
deletionTimestamp). A victim already gone (404 on either request) counts as
preempted, as upstream treats it.

Nothing calls it yet: DefaultPreemption is not wired into the scheduler, and
deploy/'s RBAC (cluster/kube/access.py) will grant `delete` on pods when it is.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from eventsched.cluster.kube.ratelimit import TokenBucket
from eventsched.cluster.kube.recorder import rfc3339
from eventsched.cluster.kube.rest import (
    JSON,
    STRATEGIC_MERGE,
    Rest,
    limited_request,
    resource_path,
)
from eventsched.model import Pod
from eventsched.model.changes import ApiError
from eventsched.model.preemption import (
    DISRUPTION_TARGET,
    PREEMPTION_BY_SCHEDULER,
    disruption_message,
)

PODS = "pods"


def disruption_patch(scheduler_name: str, now: datetime) -> dict[str, Any]:
    """The status patch that marks a pod as a victim of preemption."""
    condition = {
        "type": DISRUPTION_TARGET,
        "status": "True",
        "reason": PREEMPTION_BY_SCHEDULER,
        "message": disruption_message(scheduler_name),
        "lastTransitionTime": rfc3339(now),
    }
    return {"status": {"conditions": [condition]}}


class Evictions:
    """The two requests, through the adapter's connection pool and rate limit."""

    def __init__(self, rest: Rest, limiter: TokenBucket) -> None:
        self._rest = rest
        self._limiter = limiter

    def preempt(self, victim: Pod, preemptor: Pod) -> None:
        path = resource_path(PODS, victim.namespace, victim.name)
        patch = disruption_patch(preemptor.scheduler_name, datetime.now(UTC))
        if self._request("PATCH", path + "/status", patch, STRATEGIC_MERGE):
            self._request("DELETE", path)

    def _request(self, method: str, path: str, body: Any = None, content_type: str = JSON) -> bool:
        """True when the request succeeded, False when the pod is gone; ApiError otherwise."""
        answer = limited_request(self._rest, self._limiter, method, path, body, content_type)
        if answer.ok:
            return True
        if answer.status == 404:
            return False
        raise ApiError(answer.status, answer.message)
