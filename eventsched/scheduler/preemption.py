"""Acting on a preemption decision once it is durable (kube-scheduler's `prepareCandidate`).

The attempt's `preempted` event names the victims; only after it is appended
does the scheduler, for each victim in turn:

- reject it if it is waiting on Permit (a gang member), else mark it
  DisruptionTarget and delete it (`Cluster.preempt`);
- write the `Preempted` Event on it, related to the preemptor;
- append `evicted` with the outcome;

then clear the nomination of the lower-priority pods nominated to that node. A
victim the API refuses ends the evictions, as upstream's error channel does;
what was done and what failed are both in the log, and the preemptor is
retried by the queue as any unschedulable pod.

A process that dies between the decision and its evictions leaves a `preempted`
without all its `evicted`: the next process settles it (`settle_open_preemptions`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import structlog

from eventsched.framework import Handle
from eventsched.model import Pod
from eventsched.model.changes import ApiError
from eventsched.model.preemption import (
    PREEMPTED_REASON,
    PREEMPTING_ACTION,
    preempted_event_message,
)
from eventsched.scheduler.journal import Journal
from eventsched.scheduler.metrics import SchedulerMetrics
from eventsched.scheduler.ports import Cluster

log = structlog.get_logger(__name__)

PLUGIN = "DefaultPreemption"
#: What a rejected waiting victim is told (upstream: `waitingPod.Reject(pluginName, "preempted")`).
REJECTED_MESSAGE = "preempted"


def evict_victims(
    cluster: Cluster,
    journal: Journal,
    handle: Handle,
    metrics: SchedulerMetrics | None,
    preemptor: Pod,
    scheduler: str,
    attempt: str,
    node: str,
    victims: Sequence[Pod],
    lower_nominated: Sequence[Pod] = (),
    reconciled: bool = False,
) -> bool:
    """Evict `victims` for `preemptor` (on `node`); True when every one is gone or rejected."""
    for victim in victims:
        outcome = _evict_one(cluster, handle, preemptor, victim)
        data: dict[str, Any] = {
            "preemptor": {
                "uid": preemptor.uid,
                "namespace": preemptor.namespace,
                "name": preemptor.name,
            },
            **outcome,
        }
        if reconciled:
            data["reconciled"] = True
        journal.pending.add(
            "evicted", data, pod=victim, scheduler=scheduler, attempt=attempt, node=node
        )
        if outcome["outcome"] == "failed":
            log.error(
                "preemption: could not evict a victim",
                preemptor=preemptor.key,
                victim=victim.key,
                error=outcome.get("reason"),
            )
            return False
        cluster.emit_event(
            victim,
            "Normal",
            PREEMPTED_REASON,
            PREEMPTING_ACTION,
            preempted_event_message(node),
            related=preemptor,
        )
    if metrics is not None:
        metrics.preemption_victims.observe(len(victims))
    for pod in lower_nominated:
        try:
            cluster.clear_nomination(pod)
        except ApiError as exc:  # not critical, as upstream: logged, not returned
            log.warning(
                "cannot clear a lower-priority pod's nomination", pod=pod.key, error=str(exc)
            )
    return True


def _evict_one(cluster: Cluster, handle: Handle, preemptor: Pod, victim: Pod) -> dict[str, Any]:
    waiting = handle.waiting_pods.get(victim.uid)
    if waiting is not None:
        waiting.reject(PLUGIN, REJECTED_MESSAGE)
        return {"outcome": "rejected", "code": 0}
    try:
        cluster.preempt(victim, preemptor)
    except ApiError as exc:
        return {"outcome": "failed", "code": exc.code, "reason": exc.message}
    return {"outcome": "deleted", "code": 200}


def victims_of(decision: Mapping[str, Any], pods: Mapping[str, Pod]) -> list[Pod]:
    """The victims a `preempted` event names, as the view knows them (gone ones left out)."""
    out = []
    for entry in decision.get("victims") or ():
        pod = pods.get(str(entry.get("uid", "")))
        if pod is not None:
            out.append(pod)
    return out
