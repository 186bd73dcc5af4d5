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
without all its `evicted`: the next process settles it (`settle_open_preemptions`),
and the preemptor of one it finishes waits for its victims' deletion (`await_victims`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import structlog

from eventsched.framework import LEGACY_FEATURES, Features, Handle
from eventsched.metrics import SchedulerMetrics
from eventsched.model import Pod
from eventsched.model.changes import ApiError
from eventsched.model.preemptionwrites import (
    PREEMPTED_REASON,
    PREEMPTING_ACTION,
    preempted_event_message,
)
from eventsched.scheduler.journal import Journal
from eventsched.scheduler.moves import QueueMoves
from eventsched.scheduler.ports import Cluster
from eventsched.scheduler.queue import SchedulingQueue

log = structlog.get_logger(__name__)

PLUGIN = "DefaultPreemption"
#: What a rejected waiting victim is told (upstream: `waitingPod.Reject(pluginName, "preempted")`).
REJECTED_MESSAGE = "preempted"
#: `evicted`'s outcome for a v1.37 victim preempted while waiting on Permit.
PREEMPTED_IN_MEMORY = "preemptedInMemory"


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
    features: Features = LEGACY_FEATURES,
) -> bool:
    """Evict `victims` for `preemptor` (on `node`); True when every one is gone or rejected.
    `features`: the preemptor's profile's, which word the victims' Events."""
    in_memory = features.since("1.37")
    preemptor_uid = preemptor.uid if features.since("1.34") else None
    for victim in victims:
        outcome = _evict_one(cluster, handle, preemptor, victim, in_memory)
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
            preempted_event_message(node, preemptor_uid, outcome["outcome"] == PREEMPTED_IN_MEMORY),
            related=preemptor,
        )
    if metrics is not None:
        metrics.preemption_victims.observe(len(victims))
    for pod in lower_nominated:
        try:
            # Nominated to `node` by our log even where the watch has not shown it yet
            # (its nominating patch may still be on its way): it is cleared all the same.
            cluster.clear_nomination(replace(pod, nominated_node_name=node))
        except ApiError as exc:  # not critical, as upstream: logged, not returned
            log.warning(
                "cannot clear a lower-priority pod's nomination", pod=pod.key, error=str(exc)
            )
    return True


def _evict_one(
    cluster: Cluster, handle: Handle, preemptor: Pod, victim: Pod, in_memory: bool
) -> dict[str, Any]:
    """Up to v1.34 a victim waiting on Permit is rejected there (`waitingPod.Reject`); v1.37
    preempts it there (`waitingPod.Preempt`, an Error, not a rejection) and deletes it
    through the API only if its wait had ended already."""
    waiting = handle.waiting_pods.get(victim.uid)
    if waiting is not None:
        if not in_memory:
            waiting.reject(PLUGIN, REJECTED_MESSAGE)
            return {"outcome": "rejected", "code": 0}
        if waiting.preempt(PLUGIN, REJECTED_MESSAGE):
            return {"outcome": PREEMPTED_IN_MEMORY, "code": 0}
    try:
        cluster.preempt(victim, preemptor)
    except ApiError as exc:
        return {"outcome": "failed", "code": exc.code, "reason": exc.message}
    return {"outcome": "deleted", "code": 200}


@dataclass(frozen=True, slots=True)
class Finished:
    """A preemption a starting process finished: its victims are evicted, and its
    preemptor, still pending, must wait for their deletion to be seen."""

    preemptor: Pod
    #: The attempt that decided the preemption (its `preempted` and `unschedulable`).
    attempt: str
    node: str


def settle_open_preemptions(
    cluster: Cluster,
    journal: Journal,
    handle: Handle,
    metrics: SchedulerMetrics | None,
    features: Mapping[str, Features] | None = None,
) -> list[Finished]:
    """Finish what a previous process decided and did not live to do, from what the
    cluster shows now (the view after the initial lists):

    - a victim that no longer exists: `evicted` {gone};
    - the preemptor still pending: the other victims are evicted now (`reconciled`);
    - the preemptor gone or placed: the rest is `abandoned` (nothing evicted), and a
      preemptor still nominated loses its nomination.

    `features`: each profile's, by scheduler name (v1.28's for a profile not named).
    Returns the preemptions whose victims were all evicted now. Their deletion
    reaches the view only through the watch: the caller must not let the
    preemptor be tried before then, or it would find the victims still there.
    """
    finished: list[Finished] = []
    pods = journal.view.pods
    for attempt, open_ in list(journal.projections.open_preemptions.items()):
        node = open_.node or ""
        preemptor = pods.get(open_.uid or "")
        stub = Pod(uid=open_.uid or "", namespace=open_.namespace or "", name=open_.name or "")
        present: list[Pod] = []
        for uid in open_.victims.split():
            victim = pods.get(uid)
            if victim is None or victim.node_name != node:
                _settled(journal, stub, open_.scheduler, attempt, node, uid, "gone")
            else:
                present.append(victim)
        if not present:
            continue
        if preemptor is not None and not preemptor.node_name and not preemptor.deleting:
            log.info("finishing a preemption a previous process decided", preemptor=stub.key)
            if evict_victims(
                cluster,
                journal,
                handle,
                metrics,
                preemptor,
                open_.scheduler,
                attempt,
                node,
                present,
                reconciled=True,
                features=(features or {}).get(open_.scheduler, LEGACY_FEATURES),
            ):
                finished.append(Finished(preemptor, attempt, node))
            continue
        for victim in present:
            _settled(journal, stub, open_.scheduler, attempt, node, victim.uid, "abandoned", victim)
        if preemptor is not None and preemptor.nominated_node_name:
            try:
                cluster.clear_nomination(preemptor)
            except ApiError as exc:
                log.warning("cannot clear a nomination", pod=stub.key, error=str(exc))
    return finished


def await_victims(
    finished: Finished,
    journal: Journal,
    queue: SchedulingQueue,
    moves: QueueMoves,
    cluster: Cluster,
) -> None:
    """The preemptor of a preemption finished at start waits where its attempt's failure
    put it: in the unschedulable pool until an event its rejecting plugins registered
    for (its victims' deletion, once the watch shows it), and nominated to the node.
    Tried at once instead, it would find its victims still in the view and preempt
    them again. The failure's report, which the previous process may not have lived
    to write, is written (PodScheduled=False, status.nominatedNodeName)."""
    failure = next(
        (e for e in journal.store.read_attempt(finished.attempt) if e.kind == "unschedulable"),
        None,
    )
    if failure is None:
        return
    pod = finished.preemptor
    move = queue.park(pod.uid, failure.data.get("plugins") or ())
    if move is not None:
        moves.record([move])
    message = str(failure.data.get("message", ""))
    journal.after(lambda: cluster.set_unschedulable(pod, message, finished.node))


def _settled(
    journal: Journal,
    preemptor: Pod,
    scheduler: str,
    attempt: str,
    node: str,
    uid: str,
    outcome: str,
    victim: Pod | None = None,
) -> None:
    """`evicted` for a victim a starting process settles without evicting it."""
    data: dict[str, Any] = {
        "preemptor": {
            "uid": preemptor.uid,
            "namespace": preemptor.namespace,
            "name": preemptor.name,
        },
        "outcome": outcome,
        "code": 0,
        "reconciled": True,
    }
    if outcome == "abandoned":
        data["reason"] = "the preemptor is gone or already placed"
    journal.pending.add(
        "evicted",
        data,
        pod=victim or Pod(uid=uid, namespace="", name=""),
        scheduler=scheduler,
        attempt=attempt,
        node=node,
    )
