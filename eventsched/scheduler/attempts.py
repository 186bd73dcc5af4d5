"""A scheduling attempt's start, as every driver records it, and its duration.

An attempt gets an id and a seed (the randomness its plugins and the tie-break may use,
so replay draws the same), and its first record, `attempt_started`, says what it starts
from: the pod's attempt count, where the node search starts, the profile's
configuration digest and the node count; an attempt made for an extender call says the
call too. `scheduler_scheduling_attempt_duration_seconds` times an attempt from its
start to its result (scheduled, unschedulable, error), binding included.
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eventsched.framework import CycleState, Framework
from eventsched.metrics import SchedulerMetrics
from eventsched.model import Pod
from eventsched.scheduler.batch import AttemptSink
from eventsched.scheduler.journal import Journal
from eventsched.view import ClusterView


@dataclass(frozen=True, slots=True)
class Drawn:
    """An attempt's id and seed, drawn before it starts (the shadow tries a decision
    before it records it: the same seed gives the same tie-break)."""

    attempt: str
    seed: int


@dataclass(slots=True)
class Started:
    """An attempt begun: where its decisions go, and the state its plugins share."""

    sink: AttemptSink
    state: CycleState


class Attempts:
    """Starts attempts into the journal's pending batch, and times them."""

    def __init__(
        self,
        journal: Journal,
        view: ClusterView,
        digests: Mapping[str, str],
        metrics: SchedulerMetrics | None,
    ) -> None:
        self.journal = journal
        self.view = view
        self.digests = digests
        self.metrics = metrics
        #: The attempts' seeds.
        self.rng = random.Random(secrets.randbits(64))
        #: When each pod's current attempt began (perf_counter).
        self._began: dict[str, float] = {}

    def start(
        self,
        fw: Framework,
        pod: Pod,
        *,
        attempts: int = 1,
        start_index: int = 0,
        extender: Mapping[str, Any] | None = None,
        shadow: Mapping[str, Any] | None = None,
        drawn: Drawn | None = None,
    ) -> Started:
        """A new attempt for `pod` under `fw`, its `attempt_started` in the pending batch.

        `extender`: the call an extender attempt answers (verb and what it carried);
        `shadow`: what another scheduler did that a shadow attempt is compared with;
        `drawn`: its id and seed, drawn already (`draw`).
        """
        drawn = drawn or self.draw()
        attempt, seed = drawn.attempt, drawn.seed
        sink = AttemptSink(self.journal.pending, pod, fw.name, attempt)
        data: dict[str, Any] = {
            "attempts": attempts,
            "startIndex": start_index,
            "seed": seed,
            "configDigest": self.digests[fw.name],
            "nodes": len(self.view.table),
        }
        if extender is not None:
            data["extender"] = extender
        if shadow is not None:
            data["shadow"] = shadow
        sink.record("attempt_started", data)
        return Started(sink, CycleState(attempt, seed, sink))

    def draw(self) -> Drawn:
        """A new attempt's id and seed."""
        return Drawn(secrets.token_hex(8), self.rng.getrandbits(63))

    # -- timing ------------------------------------------------------------------

    def begin(self, uid: str) -> None:
        """The pod's attempt begins now (before its record, as the cycle's own work)."""
        self._began[uid] = time.perf_counter()

    def elapsed(self, uid: str) -> float:
        """Seconds since the pod's attempt began."""
        return time.perf_counter() - self._began[uid]

    def forget(self, uid: str) -> None:
        """The pod is gone: its attempt ends without a result."""
        self._began.pop(uid, None)

    def finished(self, uid: str, profile: str, result: str) -> None:
        """Count an attempt's outcome as kube-scheduler does: scheduled, unschedulable, error."""
        began = self._began.pop(uid, None)
        if self.metrics is None:
            return
        self.metrics.attempt(
            result, profile, None if began is None else time.perf_counter() - began
        )
