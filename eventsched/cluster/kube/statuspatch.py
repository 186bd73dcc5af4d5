"""A pod's status patch as kube-scheduler v1.28's `util.PatchPodStatus` sends it: a
strategic merge patch of `pods/<name>/status`, tried again on an InternalError (500), a
ServiceUnavailable (503) or a refused connection, with `retry.DefaultBackoff` (four
attempts, 10 ms then five times longer each time, 10% jitter). The unschedulable
condition (recorder.py), the DisruptionTarget condition and the cleared nomination
(evictions.py) go through it, as upstream's all go through PatchPodStatus. Each attempt
waits for the client's rate limit, as each of client-go's requests does.
"""

from __future__ import annotations

import random
import time
from typing import Any

import structlog

from eventsched.cluster.kube.ratelimit import TokenBucket
from eventsched.cluster.kube.rest import STRATEGIC_MERGE, Answer, Rest, TransportError

log = structlog.get_logger(__name__)

#: retry.DefaultBackoff: Steps, Duration, Factor, Jitter.
STEPS = 4
FIRST_WAIT = 0.01
FACTOR = 5.0
JITTER = 0.1

#: The reasons `util.Retriable` retries (apierrors.IsInternalError, IsServiceUnavailable).
_RETRIED = frozenset({"InternalError", "ServiceUnavailable"})
#: The reason client-go gives an error answer whose body is no Status.
_REASON_OF_CODE = {500: "InternalError", 503: "ServiceUnavailable"}


def patch_pod_status(rest: Rest, limiter: TokenBucket, path: str, patch: Any) -> Answer:
    """The last attempt's answer; TransportError when the last attempt had none."""
    wait = FIRST_WAIT
    for step in range(1, STEPS + 1):
        limiter.acquire()
        try:
            answer = rest.request("PATCH", path, patch, content_type=STRATEGIC_MERGE)
        except TransportError as exc:
            if step == STEPS or "refused" not in str(exc).lower():
                raise
            why = str(exc)
        else:
            if step == STEPS or _reason(answer) not in _RETRIED:
                return answer
            why = f"{answer.status} {answer.message}"
        log.debug("retrying a pod status patch", path=path, attempt=step, error=why)
        time.sleep(wait * (1 + JITTER * random.random()))
        wait *= FACTOR
    raise AssertionError("unreachable: the last step returns or raises")


def _reason(answer: Answer) -> str | None:
    body = answer.body
    if isinstance(body, dict) and body.get("reason"):
        return str(body["reason"])
    return _REASON_OF_CODE.get(answer.status)
