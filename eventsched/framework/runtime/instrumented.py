"""Per-plugin metrics: `scheduler_plugin_evaluation_total` and, in sampled cycles,
`scheduler_plugin_execution_duration_seconds`.

kube-scheduler v1.28 wraps its PreFilter, Filter, PreScore and Score plugins so that each
call counts one evaluation (a PreFilter or PreScore that answers Skip counts none; Filter
and Score count once per node), and times every plugin at every extension point in 10% of
the scheduling cycles (`pluginMetricsSamplePercent`; the binding cycle's plugins in the
same cycles). eventsched's Filter and Score plugins judge the nodes of an attempt in one
batch, so an evaluation count adds the nodes given to the plugin, and a sampled duration
is the batch's: one observation per plugin and attempt rather than one per node.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, TypeVar

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.runtime.guarded import PluginFailed, failed, guarded
from eventsched.framework.runtime.timing import status_in
from eventsched.framework.status import SUCCESS, Status

#: `pluginMetricsSamplePercent`.
SAMPLE_PERCENT = 10

_T = TypeVar("_T")


class PluginMetrics(Protocol):
    """What the scheduler's metrics take from the runtime (eventsched/metrics)."""

    def plugin_evaluated(self, plugin: str, point: str, profile: str, count: int) -> None: ...

    def plugin_executed(self, plugin: str, point: str, status: str, seconds: float) -> None: ...


class PluginCaller:
    """One profile's plugin calls, guarded, counted and (in sampled cycles) timed: what
    each extension point of its Framework calls a plugin through.

    One caller is shared by the Framework and its binding points, so `metrics` is one
    place for both.
    """

    __slots__ = ("metrics", "profile")

    def __init__(self, metrics: PluginMetrics | None, profile: str) -> None:
        #: Per-plugin evaluations and sampled durations; None: none (tests, replay, bench).
        self.metrics = metrics
        #: The profile's scheduler name, as the evaluation count is labelled.
        self.profile = profile

    def call(
        self,
        state: CycleState | None,
        point: str,
        plugin: str,
        run: Callable[..., _T],
        *args: object,
    ) -> _T:
        """`guarded(point, plugin, run, *args)`, timed when the cycle is sampled (`state`
        None: outside any cycle, as PreEnqueue is, never)."""
        metrics = self.metrics
        if metrics is None or state is None or not state.record_plugin_metrics:
            # `guarded` written inline: most calls are not timed, and each frame counts here.
            try:
                return run(*args)
            except Exception as exc:
                raise failed(point, plugin, exc) from exc
        return _timed_call(metrics, point, plugin, run, *args)

    def run(
        self,
        state: CycleState | None,
        point: str,
        plugin: str,
        run: Callable[..., Status | None],
        *args: object,
    ) -> Status:
        """A plugin's answer as a Status naming it (None is Success); a raise is an Error."""
        try:
            status = self.call(state, point, plugin, run, *args)
        except PluginFailed as failed:
            return failed.status
        return (status if isinstance(status, Status) else SUCCESS).with_plugin(plugin)

    def evaluated(self, plugin: str, point: str, count: int) -> None:
        """Count `count` evaluations of `plugin` at `point` (nodes judged, or one call)."""
        if self.metrics is not None:
            self.metrics.plugin_evaluated(plugin, point, self.profile, count)


def _timed_call(
    metrics: PluginMetrics,
    point: str,
    plugin: str,
    run: Callable[..., _T],
    *args: object,
) -> _T:
    """`guarded(point, plugin, run, *args)`, its duration and status given to `metrics`."""
    started = time.perf_counter()
    try:
        result = guarded(point, plugin, run, *args)
    except PluginFailed as failed:
        metrics.plugin_executed(
            plugin, point, failed.status.code.label, time.perf_counter() - started
        )
        raise
    metrics.plugin_executed(
        plugin, point, status_in(result).code.label, time.perf_counter() - started
    )
    return result
