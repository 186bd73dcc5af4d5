"""The shadow: each pod another scheduler places or fails, decided by eventsched first.

On the loop thread, before the event handlers fold a change (`Scheduler.before_change`),
what the change shows a shadowed scheduler did is held back (for the settle window, to
decide in that scheduler's queue order: order.py), then decided and folded:

- a pod of a shadowed scheduler that the view holds pending, now seen on a node: its
  placement. eventsched decides the pod against the view as it stands (the pod still
  pending, every earlier placement applied), then records the verdict; the handlers
  then fold the placement, as kube-scheduler's cache assumed it before its next pod;
- a pending pod whose PodScheduled=False condition carries a new message (what its
  FailedScheduling Event said): the same, compared message for message;
- a pending pod newly nominated (status.nominatedNodeName): its preemption, compared
  with eventsched's PostFilter choice. kube-scheduler deletes its victims before it
  writes the nomination, so the deletions of pods it marked (DisruptionTarget
  PreemptionByScheduler) are held back until the nomination is decided, or for
  VICTIM_HOLD seconds: the decision sees the node as kube-scheduler's preemption did.

A shadow attempt is an attempt like any other (`attempt_started` with `shadow`, then
Filter, Score and the node it selects, or PostFilter's choice as a dry run) and ends
with `shadow_verdict`: nothing is reserved, bound, evicted or written to the cluster.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from eventsched.framework import (
    CycleState,
    FitError,
    Framework,
    ListSink,
    SchedulingError,
    num_feasible_nodes_to_find,
    run_post_filter,
    schedule_pod,
)
from eventsched.model import Pod
from eventsched.model.changes import ClusterChange
from eventsched.scheduler.attempts import Attempts
from eventsched.scheduler.profiles import Profiles
from eventsched.shadow.order import QueueOrder
from eventsched.shadow.verdict import (
    NOMINATED,
    PLACED,
    UNSCHEDULABLE,
    Judgement,
    Ours,
    Theirs,
    judge,
)
from eventsched.shadow.victims import Victims
from eventsched.view import ClusterView

#: Seconds what the watch shows is held to recover kube-scheduler's order (order.py).
SETTLE_WINDOW = 0.5
#: Seconds a preemption victim's deletion is held for its preemptor's nomination.
VICTIM_HOLD = 2.0


@dataclass(slots=True)
class Decided:
    """One verdict, as the metrics and the driver's counts hear of it."""

    pod: Pod
    theirs: Theirs
    judgement: Judgement
    #: Seconds from the watch's delivery of the change to the verdict.
    lag: float


@dataclass(slots=True)
class Observed:
    """What the watch showed the shadowed scheduler did, held until decided."""

    #: The pod as the view holds it, pending.
    pod: Pod
    theirs: Theirs
    change: ClusterChange


class Shadow:
    """Decides what the shadowed schedulers did, before the view takes it."""

    def __init__(
        self,
        profiles: Profiles,
        view: ClusterView,
        attempts: Attempts,
        fold: Callable[[ClusterChange], None],
        *,
        window: float = SETTLE_WINDOW,
        percentages: Mapping[str, int | None] | None = None,
        on_verdict: Callable[[Decided], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`fold`: the event handlers' `on_change`, for the changes held and released.
        `window`: seconds what the watch shows is held to recover kube-scheduler's order
        (order.py). `percentages`: per scheduler, its percentageOfNodesToScore (None or
        0: adaptive, as kube-scheduler's default), named when a difference may come from
        the nodes it left unscored (the shadow scores every node). `on_verdict`: told of
        each verdict."""
        self.profiles = profiles
        self.view = view
        self.attempts = attempts
        self.fold = fold
        self.percentages = percentages or {}
        self.on_verdict = on_verdict
        self.clock = clock
        self.order: QueueOrder[Observed] = QueueOrder(window)
        #: The failure message each pending pod's last verdict compared.
        self._reported: dict[str, str] = {}
        self.victims = Victims(VICTIM_HOLD)

    @property
    def schedulers(self) -> Collection[str]:
        return self.profiles.frameworks.keys()

    def before(self, change: ClusterChange) -> bool:
        """What `change` shows the shadowed scheduler did is held, to be decided in its
        queue's order (False: the change is held back and folded once decided); any other
        change is folded now (True), once what was held for its pod is decided."""
        self.settle()
        pod = change.obj
        if not isinstance(pod, Pod):
            return True
        if self.order.holding(pod.uid):
            self.settle(everything=True)
        if self.victims.seen(change, self.view.cache.node_of(pod.uid), change.seen):
            return False
        if change.type == "DELETED":
            self._reported.pop(pod.uid, None)
            self.order.forget(pod.uid)
            return True
        if pod.scheduler_name not in self.profiles or self.view.relisting is not None:
            return True
        held = self.view.pods.get(pod.uid)
        if held is None or held.node_name or self.view.cache.node_of(pod.uid) is not None:
            if not pod.node_name:
                self.order.entered(
                    pod.uid,
                    change.seen,
                    pod.priority,
                    undecided=not pod.scheduling_gates and not pod.failed_scheduling,
                )
            return True
        theirs = self._what_it_did(pod, held)
        if theirs is None:
            return True
        self.order.hold(pod.uid, held.priority, change.seen, Observed(held, theirs, change))
        return False

    def _what_it_did(self, pod: Pod, held: Pod) -> Theirs | None:
        """The placement, nomination or failure `pod` (as the watch shows it) records,
        against `held` (as the view has it); None when it shows no new attempt.

        kube-scheduler writes PodScheduled=False when an attempt's message is new, with
        the nomination when its preemption nominated another node; a nomination cleared
        alone (a higher-priority pod preempted there) is no attempt of the pod's."""
        if pod.node_name:
            self._reported.pop(pod.uid, None)
            return Theirs(pod.scheduler_name, PLACED, node=pod.node_name)
        node = pod.nominated_node_name
        if node and node != held.nominated_node_name:
            self._reported[pod.uid] = pod.failed_scheduling
            victims = tuple(
                {"uid": v.uid, "namespace": v.namespace, "name": v.name}
                for v in self.victims.on(node)
            )
            return Theirs(pod.scheduler_name, NOMINATED, node, pod.failed_scheduling, victims)
        message = pod.failed_scheduling
        if not message or message == self._reported.get(pod.uid, held.failed_scheduling):
            return None
        self._reported[pod.uid] = message
        return Theirs(pod.scheduler_name, UNSCHEDULABLE, message=message)

    def settle(self, everything: bool = False) -> None:
        """Decide (then fold) what was held long enough, in the order kube-scheduler
        decided it (`everything`: all of it); fold the victim deletions held longer than
        VICTIM_HOLD.

        Where that order is uncertain (order.py: pods of different priorities seen close
        together), kube-scheduler's decisions tell it: of the outcomes that may come
        next, the first that eventsched's decision agrees with goes (a dry run, logged
        nowhere), else the likeliest."""
        now = self.clock()
        while len(self.order) and (everything or self.order.any_due(now)):
            candidates = self.order.candidates()
            chosen = candidates[0]
            if not everything and self.order.blocked(chosen, now):
                break
            if len(candidates) > 1:
                chosen = next((c for c in candidates if self._agrees(c)), chosen)
            self.order.take(chosen)
            self._decide(chosen.pod, chosen.theirs, chosen.change)
            self.fold(chosen.change)
            if chosen.theirs.observed != PLACED:
                self.order.reentered(chosen.pod.uid, chosen.change.seen)
            if chosen.theirs.observed == NOMINATED:
                self._fold_all(self.victims.release(chosen.theirs.node))
        self._fold_all(self.victims.expired(now))

    def _agrees(self, observed: Observed) -> bool:
        """Whether eventsched, deciding the pod now, agrees (or ties) with what was seen."""
        fw = self.profiles[observed.pod.scheduler_name]
        state = CycleState("", 0, ListSink())
        ours = self._attempt(fw, observed.pod, state)
        theirs = observed.theirs
        return judge(ours, theirs, self.view.table, None).verdict != "differ"

    def release_all(self) -> None:
        """Decide and fold everything held (the shadow stops)."""
        self.settle(everything=True)
        self._fold_all(self.victims.all())

    def _fold_all(self, changes: list[ClusterChange]) -> None:
        for change in changes:
            self.fold(change)

    # -- deciding ------------------------------------------------------------------

    def _decide(self, pod: Pod, theirs: Theirs, change: ClusterChange) -> None:
        fw = self.profiles[pod.scheduler_name]
        shadow: dict[str, Any] = {"scheduler": theirs.scheduler, "observed": theirs.observed}
        if theirs.node:
            shadow["node"] = theirs.node
        started = self.attempts.start(fw, pod, shadow=shadow)
        ours = self._attempt(fw, pod, started.state)
        judgement = judge(ours, theirs, self.view.table, self._sample(theirs.scheduler))
        lag = max(0.0, self.clock() - change.seen)
        started.sink.record(
            "shadow_verdict",
            _verdict_record(ours, theirs, judgement, lag),
            node=theirs.node or None,
        )
        if self.on_verdict is not None:
            self.on_verdict(Decided(pod, theirs, judgement, lag))

    def _sample(self, scheduler: str) -> int | None:
        """How many nodes `scheduler` scores, when fewer than all."""
        nodes = len(self.view.table)
        sample = num_feasible_nodes_to_find(self.percentages.get(scheduler), nodes)
        return sample if sample < nodes else None

    def _attempt(self, fw: Framework, pod: Pod, state: Any) -> Ours:
        """eventsched's own scheduling cycle for the pod, up to the node it selects (or its
        PostFilter's choice, as a dry run): recorded, acted on never."""
        table = self.view.table
        try:
            result = schedule_pod(fw, state, pod, table, 0)
        except FitError as err:
            chosen = run_post_filter(fw, state, pod, table, err.diagnosis, dry_run=True)
            return Ours(
                diagnosis=err.diagnosis,
                message=err.diagnosis.message(),
                preemption=chosen.record if chosen is not None else {},
                tied=chosen.tied if chosen is not None else (),
            )
        except SchedulingError as err:
            return Ours(message=err.status.message, error=True)
        return Ours(result.node, result.scores, result.diagnosis)


def _verdict_record(ours: Ours, theirs: Theirs, judgement: Judgement, lag: float) -> dict[str, Any]:
    data: dict[str, Any] = {
        "scheduler": theirs.scheduler,
        "observed": theirs.observed,
        "verdict": judgement.verdict,
        "picked": ours.node or None,
        "lagSeconds": round(lag, 6),
    }
    if theirs.node:
        data["node"] = theirs.node
    if theirs.message:
        data["message"] = theirs.message
    if ours.message:
        data["ourMessage"] = ours.message
    if ours.error:
        data["ourError"] = True
    if judgement.cause:
        data["cause"] = judgement.cause
    if judgement.our_total is not None or judgement.their_total is not None:
        data["totals"] = {"ours": judgement.our_total, "theirs": judgement.their_total}
    if ours.preemption:
        data["preemption"] = dict(ours.preemption)
    if theirs.victims:
        data["victims"] = [dict(v) for v in theirs.victims]
    return data
