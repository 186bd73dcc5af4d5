"""eventsched's decision on what a shadowed scheduler did: tried, then recorded.

A trial runs eventsched's scheduling cycle for the pod on the view as it stands (up to
the node it selects, or its PostFilter's choice as a dry run) into a list, and judges
it against what the shadowed scheduler did (verdict.py). The shadow may try several
outcomes that could come next (order.py) and commit one: its attempt is then logged as
it was tried (the same id, seed and decisions), ending with `shadow_verdict`. Nothing
is reserved, bound, evicted or written to the cluster.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
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
from eventsched.scheduler.attempts import Attempts, Drawn
from eventsched.scheduler.profiles import Profiles
from eventsched.shadow.verdict import Judgement, Ours, Theirs, judge
from eventsched.view import ClusterView


@dataclass(slots=True)
class Observed:
    """What the watch showed the shadowed scheduler did, held until decided."""

    #: The pod as the view holds it, pending.
    pod: Pod
    theirs: Theirs
    change: ClusterChange


@dataclass(slots=True)
class Trial:
    """eventsched's decision on an observed outcome, not logged yet."""

    observed: Observed
    drawn: Drawn
    decisions: ListSink
    ours: Ours
    judgement: Judgement


@dataclass(slots=True)
class Decided:
    """One verdict, as the metrics and the driver's counts hear of it."""

    pod: Pod
    theirs: Theirs
    judgement: Judgement
    #: Seconds from the watch's delivery of the change to the verdict.
    lag: float


class Decider:
    """Tries and commits eventsched's decisions on what the shadowed schedulers did."""

    def __init__(
        self,
        profiles: Profiles,
        view: ClusterView,
        attempts: Attempts,
        percentages: Mapping[str, int | None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.profiles = profiles
        self.view = view
        self.attempts = attempts
        self.percentages = percentages
        self.clock = clock

    def trial(self, observed: Observed) -> Trial:
        fw = self.profiles[observed.pod.scheduler_name]
        drawn = self.attempts.draw()
        decisions = ListSink()
        state = CycleState(drawn.attempt, drawn.seed, decisions)
        ours = self._attempt(fw, observed.pod, state)
        theirs = observed.theirs
        judgement = judge(ours, theirs, self.view.table, self._sample(theirs.scheduler))
        return Trial(observed, drawn, decisions, ours, judgement)

    def commit(self, trial: Trial) -> Decided:
        """Log the trial as the attempt it was, and its verdict."""
        pod, theirs, change = trial.observed.pod, trial.observed.theirs, trial.observed.change
        fw = self.profiles[pod.scheduler_name]
        shadow: dict[str, Any] = {"scheduler": theirs.scheduler, "observed": theirs.observed}
        if theirs.node:
            shadow["node"] = theirs.node
        sink = self.attempts.start(fw, pod, shadow=shadow, drawn=trial.drawn).sink
        for d in trial.decisions.decisions:
            sink.record(d.kind, d.data, node=d.node, plugin=d.plugin)
        lag = max(0.0, self.clock() - change.seen)
        sink.record(
            "shadow_verdict",
            verdict_record(trial.ours, theirs, trial.judgement, lag),
            node=theirs.node or None,
        )
        return Decided(pod, theirs, trial.judgement, lag)

    def _sample(self, scheduler: str) -> int | None:
        """How many nodes `scheduler` scores, when fewer than all."""
        nodes = len(self.view.table)
        sample = num_feasible_nodes_to_find(self.percentages.get(scheduler), nodes)
        return sample if sample < nodes else None

    def _attempt(self, fw: Framework, pod: Pod, state: CycleState) -> Ours:
        """eventsched's own scheduling cycle for the pod, up to the node it selects (or its
        PostFilter's choice, as a dry run)."""
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


def verdict_record(ours: Ours, theirs: Theirs, judgement: Judgement, lag: float) -> dict[str, Any]:
    """`shadow_verdict`'s data (events/vocabulary.py)."""
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
