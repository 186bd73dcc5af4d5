"""scheduler_perf's `churn` op on a simulated cluster: pods created (and deleted) in the background.

Upstream's `runChurnOp` starts a goroutine on a `time.Ticker` of the op's
interval: the first tick one interval after the op starts, and a tick that
comes while the goroutine is still creating is kept (the ticker's channel
holds one) and the others dropped. Each tick, mode `create` creates one
object from each template (stopping after `number` ticks, never when 0);
mode `recreate` keeps `number` slots per template and, tick `n`, creates
the object of slot `n % number` when it is empty, deletes it when it is
not. Upstream names objects by `generateName`; here `<generateName><index>`
continues the run's pod numbering, so every name is unique. A pod already
gone when its delete comes (preempted, say) is no error here; upstream
would report it.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from eventsched.cluster import SimulatedCluster
from eventsched.model import Pod

if TYPE_CHECKING:
    from eventsched.benchmarks.workloads import Churn

CREATE, RECREATE = "create", "recreate"

#: Builds pod `index` of one template in the churn's namespace.
MakePod = Callable[[str, int], Pod]


class Churner:
    """One `churn` op against `sim`, on its own thread from `start()` to `stop()`."""

    def __init__(
        self,
        sim: SimulatedCluster,
        churn: Churn,
        make_pod: MakePod,
        first_index: int,
    ) -> None:
        if churn.mode not in (CREATE, RECREATE):
            raise ValueError(f"churn mode {churn.mode!r}: not one of {CREATE!r}, {RECREATE!r}")
        if churn.mode == RECREATE and churn.number < 1:
            raise ValueError("churn mode 'recreate' needs number >= 1")
        if churn.interval_ms < 0:
            raise ValueError(f"churn interval {churn.interval_ms} ms: negative")
        self.sim = sim
        self.churn = churn
        self.make_pod = make_pod
        self.next_index = first_index
        #: Pods created and deleted so far (read them after `stop()`).
        self.created = 0
        self.deleted = 0
        #: The ticks handled so far.
        self.ticks = 0
        self._slots: list[list[str | None]] = [[None] * churn.number for _ in churn.templates]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="churn", daemon=True)

    @property
    def interval(self) -> float:
        """Seconds between ticks: upstream's default 500 ms when the op gives 0."""
        return (self.churn.interval_ms or 500) / 1000

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """No more ticks; returns once a tick under way has finished."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the op to end by itself (mode create with a number); True once it has."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        interval = self.interval
        limit = self.churn.number if self.churn.mode == CREATE and self.churn.number else math.inf
        due = time.monotonic() + interval  # the ticker's next tick not yet received
        buffered = False
        while self.ticks < limit:
            if buffered:
                buffered = False
                if self._stop.is_set():
                    return
            else:
                if self._stop.wait(max(0.0, due - time.monotonic())):
                    return
                due += interval
            self.tick()
            now = time.monotonic()
            if now >= due:
                # Ticks came while creating: the channel kept one, the others are dropped.
                buffered = True
                due += interval * (math.floor((now - due) / interval) + 1)

    def tick(self) -> None:
        """One tick of the op: each template once (public for tests that drive it by hand)."""
        count = self.ticks
        self.ticks += 1
        for i, template in enumerate(self.churn.templates):
            if self.churn.mode == CREATE:
                self._create(template)
                continue
            slot = count % self.churn.number
            held = self._slots[i][slot]
            if held is None:
                self._slots[i][slot] = self._create(template)
            else:
                self._delete(held)
                self._slots[i][slot] = None

    def _create(self, template: str) -> str:
        pod = self.make_pod(template, self.next_index)
        self.next_index += 1
        self.created += 1
        return self.sim.add_pod(pod).key

    def _delete(self, key: str) -> None:
        try:
            self.sim.delete_pod(key)
        except KeyError:
            return
        self.deleted += 1
