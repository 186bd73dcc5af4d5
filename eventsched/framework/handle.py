"""What a plugin may reach beyond its arguments: the snapshot, waiting pods, the clock."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from eventsched.framework.sink import DecisionSink
from eventsched.framework.status import Status
from eventsched.framework.waiting import WaitingPods
from eventsched.model import NodeTable, Pod


class Handle:
    """kube-scheduler's `framework.Handle`, trimmed to what our plugins use.

    `record_input` is how a plugin that reads the outside world (Prometheus,
    the clock) puts the value it read into the log, so replay can feed it back.
    """

    def __init__(
        self,
        table: NodeTable | None = None,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.table = table if table is not None else NodeTable()
        self.waiting_pods = WaitingPods()
        self.clock = clock
        self.monotonic = monotonic
        self.sink: DecisionSink | None = None
        #: Posts a Binding; set by the scheduler to its cluster adapter, used by DefaultBinder.
        self.bind: Callable[[Pod, str], Status] | None = None

    def record_input(self, plugin: str, key: str, value: Mapping[str, Any]) -> None:
        if self.sink is not None:
            self.sink.record("input_recorded", {"key": key, "value": dict(value)}, plugin=plugin)
