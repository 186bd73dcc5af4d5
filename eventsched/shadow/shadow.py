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
from collections.abc import Callable, Mapping
from typing import Protocol

from eventsched.model import Pod
from eventsched.model.changes import ClusterChange
from eventsched.scheduler.attempts import Attempts
from eventsched.scheduler.profiles import Profiles
from eventsched.shadow.decide import Decided, Decider, Observed, Trial
from eventsched.shadow.order import QueueOrder
from eventsched.shadow.verdict import (
    NOMINATED,
    PLACED,
    UNSCHEDULABLE,
    Theirs,
)
from eventsched.shadow.victims import Victims
from eventsched.view import ClusterView

#: Seconds what the watch shows is held to recover kube-scheduler's order (order.py).
SETTLE_WINDOW = 0.5
#: Seconds a preemption victim's deletion is held for its preemptor's nomination.
VICTIM_HOLD = 2.0


class History(Protocol):
    """What the log says of a pod from before this process started (history.py)."""

    def placed_unseen(self, pod: Pod) -> bool: ...

    def last_message(self, uid: str) -> str: ...


class Shadow:
    """Decides what the shadowed schedulers did, before the view takes it."""

    def __init__(
        self,
        profiles: Profiles,
        view: ClusterView,
        attempts: Attempts,
        fold: Callable[[ClusterChange], None],
        history: History,
        *,
        window: float = SETTLE_WINDOW,
        percentages: Mapping[str, int | None] | None = None,
        on_verdict: Callable[[Decided], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        caught_up: Callable[[], bool] = lambda: True,
    ) -> None:
        """`fold`: the event handlers' `on_change`, for the changes held and released.
        `history`: what the log says of a pod from before this process started.
        `window`: seconds what the watch shows is held to recover kube-scheduler's order
        (order.py). `percentages`: per scheduler, its percentageOfNodesToScore (None or
        0: adaptive, as kube-scheduler's default), named when a difference may come from
        the nodes it left unscored (the shadow scores every node). `on_verdict`: told of
        each verdict. `caught_up`: whether no change waits to be handled (the loop's inbox
        is empty); while one does, time for the window and the waits is the delivery time
        of the last change handled, not the clock: an outcome handled late is not decided
        before the outcomes delivered just after it, still waiting in the inbox."""
        self.profiles = profiles
        self.view = view
        self.fold = fold
        self.history = history
        self.decider = Decider(profiles, view, attempts, percentages or {}, clock)
        self.on_verdict = on_verdict
        self.clock = clock
        self.caught_up = caught_up
        #: When the last change handled was delivered.
        self._handled_to = 0.0
        self.order: QueueOrder[Observed] = QueueOrder(window)
        #: The failure message each pending pod's last verdict compared.
        self._reported: dict[str, str] = {}
        self.victims = Victims(VICTIM_HOLD)

    def before(self, change: ClusterChange) -> bool:
        """What `change` shows the shadowed scheduler did is held, to be decided in its
        queue's order (False: the change is held back and folded once decided); any other
        change is folded now (True), once what was held for its pod is decided."""
        self._handled_to = max(self._handled_to, change.seen)
        self.settle()
        pod = change.obj
        if not isinstance(pod, Pod):
            return True
        if self.order.holding(pod.uid):
            self.settle(until_decided=pod.uid)
        if self.victims.seen(change, self.view.cache.node_of(pod.uid), change.seen):
            return False
        if change.type == "DELETED":
            self._reported.pop(pod.uid, None)
            self.order.forget(pod.uid)
            return True
        if pod.scheduler_name not in self.profiles:
            return True
        if self.view.relisting is not None:
            return self._relisted(change, pod)
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

    def _relisted(self, change: ClusterChange, pod: Pod) -> bool:
        """A pod a restarted shadow lists: what its scheduler did while the shadow was down
        is held, to be decided once the lists are in. A pod placed that the log last
        recorded pending, or never saw, is gathered pending (as the log had it), its
        placement held (False: the change is held); a pending pod whose FailedScheduling
        message no logged verdict compared has that held too."""
        relisting = self.view.relisting
        assert relisting is not None
        pending = pod.keeping_annotations(self.profiles.annotation_keys).with_node("")
        if pod.node_name:
            if not self.history.placed_unseen(pod):
                return True
            relisting.put_pod(pending)
            theirs = Theirs(pod.scheduler_name, PLACED, node=pod.node_name)
            observed = Observed(pending, theirs, change)
            self.order.hold(pod.uid, pod.priority, change.seen, observed, unordered=True)
            return False
        message = pod.failed_scheduling
        if message and message != self._last_reported(pod.uid, message):
            self._reported[pod.uid] = message
            what = NOMINATED if pod.nominated_node_name else UNSCHEDULABLE
            theirs = Theirs(pod.scheduler_name, what, pod.nominated_node_name, message)
            self.order.hold(pod.uid, pod.priority, change.seen, Observed(pending, theirs, change))
        return True

    def _last_reported(self, uid: str, message: str) -> str:
        """The message the pod's last verdict compared (asked of the log once)."""
        if uid not in self._reported:
            self._reported[uid] = self.history.last_message(uid) if message else ""
        return self._reported[uid]

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
        if not message or message == self._last_reported(pod.uid, message):
            return None
        self._reported[pod.uid] = message
        return Theirs(pod.scheduler_name, UNSCHEDULABLE, message=message)

    def settle(self, everything: bool = False, until_decided: str = "") -> None:
        """Decide (then fold) what was held long enough, in the order kube-scheduler
        decided it (`everything`: all of it; `until_decided`: up to what was held of
        that pod, which changed again); fold the victim deletions held longer than
        VICTIM_HOLD.

        Where that order is uncertain (order.py: pods of different priorities seen close
        together), kube-scheduler's decisions tell it: the likeliest outcome is tried
        (decide.py), and when eventsched differs from it, the others that may come next
        are, and the first it agrees (or ties) with goes; the trial is what is logged."""
        if self.view.relisting is not None:
            return  # the view is what is listed only once the lists are in
        now = self.clock() if self.caught_up() else self._handled_to
        while len(self.order) and (
            everything or self.order.holding(until_decided) or self.order.any_due(now)
        ):
            candidates = self.order.candidates()
            forced = everything or self.order.holding(until_decided)
            if not forced and self.order.blocked(candidates[0], now):
                break
            best = self._first_explained(candidates)
            chosen = best.observed
            self.order.take(chosen)
            decided = self.decider.commit(best)
            if self.on_verdict is not None:
                self.on_verdict(decided)
            self.fold(chosen.change)
            if chosen.theirs.observed != PLACED:
                self.order.reentered(chosen.pod.uid, chosen.change.seen)
            if chosen.theirs.observed == NOMINATED:
                self._fold_all(self.victims.release(chosen.theirs.node))
        self._fold_all(self.victims.expired(now))

    def _first_explained(self, candidates: list[Observed]) -> Trial:
        """The trial of the outcome to decide next, of those that may come next: the
        likeliest's, unless eventsched differs from it (beyond what the shadowed
        scheduler's sample of the nodes explains); then the first other one it agrees (or
        ties) with, else still the likeliest's."""
        likeliest = self.decider.trial(candidates[0])
        if _agrees(likeliest):
            return likeliest
        others = (self.decider.trial(c) for c in candidates[1:])
        return next((t for t in others if _agrees(t)), likeliest)

    def release_all(self) -> None:
        """Decide and fold everything held (the shadow stops)."""
        self.settle(everything=True)
        self._fold_all(self.victims.all())

    def _fold_all(self, changes: list[ClusterChange]) -> None:
        for change in changes:
            self.fold(change)


def _agrees(trial: Trial) -> bool:
    """Agrees or ties, or differs only as the shadowed scheduler's sample of the nodes
    explains (no sign of another order)."""
    return trial.judgement.verdict != "differ" or trial.judgement.sampled
