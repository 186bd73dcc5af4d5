"""What a Framework reports to: the scheduler's metrics, given when the Framework is built."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from eventsched.framework.runtime.instrumented import PluginMetrics
from eventsched.framework.runtime.timing import ExtensionPointObserver

#: (status code label, seconds) of each WaitOnPermit that waited: what the scheduler's
#: `scheduler_permit_wait_duration_seconds` histogram records.
PermitWaitObserver = Callable[[str, float], None]


@dataclass(frozen=True, slots=True)
class FrameworkObservers:
    """The Framework's three kinds of observations; each None (the default) costs nothing
    and records nothing, as in tests, replay and the benchmarks."""

    #: Each extension point's latency.
    observe: ExtensionPointObserver | None = None
    #: Each WaitOnPermit that waited.
    observe_permit_wait: PermitWaitObserver | None = None
    #: Per-plugin evaluations and sampled durations.
    plugin_metrics: PluginMetrics | None = None
