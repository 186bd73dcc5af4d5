"""Per-attempt scratch space shared by the plugins of one scheduling and binding cycle."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eventsched.framework.sink import DecisionSink, record_input


class CycleState:
    """Keyed data a plugin writes in one extension point and reads in a later one.

    The scheduling cycle and the binding cycle run on different threads but
    one after the other for a given pod, so no lock is needed; `clone` gives
    PostFilter (preemption) its own copy to experiment on.

    It also carries where the attempt's decisions go (`sink`): a plugin
    records through the state of the attempt it runs in, so a binding cycle
    on a binder thread and the next scheduling cycle on the loop never write
    into each other's batch.
    """

    __slots__ = (
        "_data",
        "attempt",
        "preemption_attempts",
        "record_plugin_metrics",
        "seed",
        "sink",
        "skip_filter",
        "skip_score",
    )

    def __init__(self, attempt: str = "", seed: int = 0, sink: DecisionSink | None = None) -> None:
        self._data: dict[str, Any] = {}
        self.attempt = attempt
        #: Where this attempt's decisions and recorded inputs go; None records nothing.
        self.sink = sink
        #: Randomness a plugin may use; recorded in `attempt_started`, so replay draws the same.
        self.seed = seed
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()
        #: PostFilter runs of preempting plugins in this attempt (the runtime counts them).
        self.preemption_attempts = 0
        #: A sampled cycle: each plugin call's duration is observed (runtime/instrumented.py).
        self.record_plugin_metrics = False

    def record(
        self,
        kind: str,
        data: Mapping[str, Any],
        *,
        node: str | None = None,
        plugin: str | None = None,
    ) -> None:
        """A decision of this attempt (the runtime's, or a plugin's own, e.g. a gang's)."""
        if self.sink is not None:
            self.sink.record(kind, data, node=node, plugin=plugin)

    def record_input(self, plugin: str, key: str, value: Mapping[str, Any]) -> None:
        """A value `plugin` read from outside (Prometheus, a clock, an annotation it
        could not use): in the log, so replay feeds it back (`Handle.recorded_input`)."""
        if self.sink is not None:
            record_input(self.sink, plugin, key, value)

    def read(self, key: str) -> Any:
        try:
            return self._data[key]
        except KeyError:
            raise KeyError(f"{key!r} not found in CycleState") from None

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        copy = CycleState(self.attempt, self.seed, self.sink)
        copy._data = {k: v.clone() if hasattr(v, "clone") else v for k, v in self._data.items()}
        copy.skip_filter = set(self.skip_filter)
        copy.skip_score = set(self.skip_score)
        return copy
