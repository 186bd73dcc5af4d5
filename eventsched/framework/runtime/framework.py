"""The runtime of one profile: builds its plugins and runs each extension point.

Like kube-scheduler's `frameworkImpl`, it knows nothing of queues, caches or
the API; it turns plugin results into statuses, and a plugin that raises
into an Error status naming it, so one bad plugin never stops the loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import structlog

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.extenders.client import HTTPExtender
from eventsched.framework.handle import Handle
from eventsched.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    AnnotationReader,
    EnqueueExtensions,
    PodCountingPreFilter,
    PreemptionPlugin,
    RequestedOnlyFilter,
    UsesExtenders,
    UsesFilters,
)
from eventsched.framework.profile import Profile
from eventsched.framework.registry import PluginArgsError, Registry
from eventsched.framework.runtime import nominated
from eventsched.framework.runtime.bindingpoints import BindingPoints, running_error
from eventsched.framework.runtime.guarded import PluginFailed
from eventsched.framework.runtime.ignored import IgnoredField, ignored_fields
from eventsched.framework.runtime.instrumented import PluginCaller, PluginMetrics
from eventsched.framework.runtime.observers import FrameworkObservers
from eventsched.framework.runtime.plugins import PluginSet
from eventsched.framework.runtime.prefilter import run_pre_filter_plugins
from eventsched.framework.runtime.results import Rejection, ScoreTable
from eventsched.framework.runtime.scores import invalid_score, scored
from eventsched.framework.runtime.timing import ExtensionPointObserver, timed
from eventsched.framework.sink import DecisionSink
from eventsched.framework.status import SUCCESS, Code, Status
from eventsched.framework.types import (
    WILDCARD_EVENT,
    ClusterEvent,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
)
from eventsched.model import Indexes, NodeTable, Pod

log = structlog.get_logger(__name__)


class Framework:
    """One profile's plugins and the extension points that run them.

    Its parts are built here from what it is given: the `PluginSet`, one `PluginCaller`
    (every plugin call, guarded, counted and sampled for `observers.plugin_metrics`) and
    the `BindingPoints` the binding cycle's points delegate to. Every extension point is
    timed here for `observers.observe`.
    """

    __slots__ = (
        "_call",
        "_evaluated",
        "_names",
        "_requested_only",
        "_run",
        "binding",
        "calls",
        "counting_pre_filters",
        "extenders",
        "handle",
        "instances",
        "observe",
        "plugins",
        "profile",
        "queue_sort",
    )

    def __init__(
        self,
        profile: Profile,
        registry: Registry,
        handle: Handle,
        observers: FrameworkObservers | None = None,
    ) -> None:
        self.profile = profile
        self.handle = handle
        self.instances: dict[str, object] = {}
        for name in profile.plugin_names():
            args = profile.plugin_args.get(name, {})
            try:
                self.instances[name] = registry.factory(name)(args, handle, profile.features)
            except PluginArgsError:
                raise
            except (TypeError, ValueError) as exc:
                raise PluginArgsError("", f"plugin {name}: {exc}") from exc
        self.plugins = PluginSet.build(profile, self.instances)
        observers = observers or FrameworkObservers()
        #: Each extension point's latency (read by `timed`); None costs nothing.
        self.observe: ExtensionPointObserver | None = observers.observe
        self.calls = PluginCaller(observers.plugin_metrics, profile.scheduler_name)
        #: The caller's methods, looked up once: every plugin call goes through them.
        self._call = self.calls.call
        self._run = self.calls.run
        self._evaluated = self.calls.evaluated
        self.binding = BindingPoints(
            self.plugins, handle, self.calls, observers.observe_permit_wait
        )
        #: The configuration's extenders, called by the scheduling and binding cycles.
        self.extenders = tuple(HTTPExtender(config) for config in profile.extenders)
        for plugin in self.instances.values():
            if isinstance(plugin, UsesFilters):
                plugin.use_filters(self)
            if isinstance(plugin, UsesExtenders):
                plugin.use_extenders(self.extenders)
        #: PreFilter plugins whose state counts placed pods, found once, not in every cycle.
        self.counting_pre_filters: list[PodCountingPreFilter] = [
            p for p in self.plugins.pre_filter if isinstance(p, PodCountingPreFilter)
        ]
        self._requested_only = {
            name
            for name, p in self.instances.items()
            if isinstance(p, RequestedOnlyFilter) and p.filter_reads_requested_only
        }
        self.queue_sort = self.plugins.queue_sort
        self._names = {point: [r.name for r in refs] for point, refs in profile.plugins.items()}

    @property
    def plugin_metrics(self) -> PluginMetrics | None:
        """Per-plugin evaluations and sampled durations (`observers.plugin_metrics`);
        settable, for a test that counts one framework's plugin calls."""
        return self.calls.metrics

    @plugin_metrics.setter
    def plugin_metrics(self, metrics: PluginMetrics | None) -> None:
        self.calls.metrics = metrics

    @property
    def name(self) -> str:
        return self.profile.scheduler_name

    def plugins_at(self, point: str) -> list[str]:
        """The names of the plugins enabled at `point`, in order (do not modify)."""
        return self._names.get(point, [])

    def has_score_plugins(self) -> bool:
        return bool(self.plugins.score)

    def has_filter_plugins(self) -> bool:
        return bool(self.plugins.filter)

    def queue_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.queue_sort.less(a, b)

    def events_to_register(self) -> dict[str, list[ClusterEvent]]:
        """Plugin name to the cluster events that may make its rejections go away."""
        events: dict[str, list[ClusterEvent]] = {}
        for name, plugin in self.instances.items():
            if isinstance(plugin, EnqueueExtensions):
                events[name] = list(plugin.events_to_register())
            else:
                events[name] = [WILDCARD_EVENT]
        return events

    def ignored_fields(self, pod: Pod) -> list[IgnoredField]:
        """The fields `pod` sets that no plugin of this profile honours (placed as if absent)."""
        return ignored_fields(pod, self.instances)

    def annotations_read(self) -> frozenset[str]:
        """The pod annotation keys this profile's plugins read (all others go unlogged)."""
        keys: set[str] = set()
        for plugin in self.instances.values():
            if isinstance(plugin, AnnotationReader):
                keys.update(plugin.annotations_read())
        return frozenset(keys)

    # -- queueing ---------------------------------------------------------------

    @timed("PreEnqueue")
    def run_pre_enqueue(self, pod: Pod, sink: DecisionSink | None = None) -> Status:
        """PreEnqueue in order; what a plugin records about the pod goes to `sink`."""
        self.handle.enqueue_sink = sink
        try:
            for plugin in self.plugins.pre_enqueue:
                status = self._run(None, "PreEnqueue", plugin.name, plugin.pre_enqueue, pod)
                if not status.is_success:
                    return status
            return SUCCESS
        finally:
            self.handle.enqueue_sink = None

    # -- filtering --------------------------------------------------------------

    @timed("PreFilter")
    def run_pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status, set[str]]:
        """PreFilter in order (prefilter.py: what stops the loop depends on the version).
        Returns the merged node subset, the status and the plugins that narrowed it."""
        return run_pre_filter_plugins(
            self.plugins.pre_filter,
            self._call,
            self._evaluated,
            state,
            pod,
            table,
            unschedulable_continues=self.profile.features.since("1.34"),
        )

    @timed("Filter")
    def run_filter(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> tuple[Indexes, list[Rejection], Status]:
        """Every Filter plugin over `rows`, each seeing only the rows earlier ones passed.

        Returns the passing rows in the order given, the first rejection of
        each failing row (as kube-scheduler stops at a node's first failing
        plugin), and an Error status if a plugin errored.
        """
        remaining = rows
        rejections: list[Rejection] = []
        for entry in self.plugins.filter:
            name = entry.name
            if name in state.skip_filter or len(remaining) == 0:
                continue
            passed = remaining
            self._evaluated(name, "Filter", len(passed))
            try:
                result = self._call(state, "Filter", name, entry.run, state, pod, table, passed)
            except PluginFailed as failed:
                return remaining[:0], rejections, failed.status
            if result.all_passed:
                continue
            failing = result.verdict >= 0
            if not failing.any():
                continue
            statuses = [st.with_plugin(name) for st in result.statuses]
            slots = result.verdict[failing]
            for k in np.unique(slots):
                if statuses[int(k)].code == Code.ERROR:
                    return remaining[:0], rejections, statuses[int(k)]
            rejections.append(Rejection(name, remaining[failing], slots, statuses))
            remaining = remaining[~failing]
        return remaining, rejections, SUCCESS

    def judged_by_requested_only(self, state: CycleState) -> bool:
        """Whether every Filter that runs for this attempt's pod is a RequestedOnlyFilter."""
        skipped = state.skip_filter
        return all(e.name in self._requested_only or e.name in skipped for e in self.plugins.filter)

    def run_filter_with_nominated_pods(
        self,
        state: CycleState,
        pod: Pod,
        table: NodeTable,
        node_name: str,
        removed: Sequence[Pod] = (),
    ) -> Status:
        """`RunFilterPluginsWithNominatedPods` on one node, `removed` taken off it (nominated.py)."""
        return nominated.run_filter_with_nominated_pods(self, state, pod, table, node_name, removed)

    @timed("PostFilter")
    def run_post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """PostFilter in order until one makes the pod schedulable (kube-scheduler semantics):
        else every plugin's reasons, and the last result that nominates (or clears)."""
        messages: list[str] = []
        last: PostFilterResult | None = None
        failed_plugin = ""
        for plugin in self.plugins.post_filter:
            name = plugin.name
            if isinstance(plugin, PreemptionPlugin) and plugin.counts_preemption_attempts:
                state.preemption_attempts += 1
            try:
                result, status = self._call(
                    state, "PostFilter", name, plugin.post_filter, state, pod, statuses
                )
            except PluginFailed as failed:
                return None, failed.status
            status = (status or SUCCESS).with_plugin(name)
            if status.is_success:
                return result, status
            if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return result, status
            if not status.is_rejected:
                return None, status
            if result is not None:
                last = result
            messages.extend(status.reasons)
            failed_plugin = failed_plugin or name
        return last, Status.unschedulable(*messages, plugin=failed_plugin)

    # -- scoring ----------------------------------------------------------------

    @timed("PreScore")
    def run_pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> Status:
        for plugin in self.plugins.pre_score:
            name = plugin.name
            status = self._run(state, "PreScore", name, plugin.pre_score, state, pod, table, rows)
            if status.is_skip:
                state.skip_score.add(name)
                continue
            self._evaluated(name, "PreScore", 1)
            if not status.is_success:
                return running_error("PreScore", name, status)
        return SUCCESS

    @timed("Score")
    def run_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> tuple[ScoreTable | None, Status]:
        """Score, NormalizeScore and weights; any score outside 0..100 is an Error, as upstream."""
        entries = [e for e in self.plugins.score if e.name not in state.skip_score]
        raw = np.zeros((len(entries), len(rows)), dtype=np.int64)
        normalized = np.zeros_like(raw)
        for i, entry in enumerate(entries):
            self._evaluated(entry.name, "Score", len(rows))
            try:
                raw[i], normal = self._call(
                    state, "Score", entry.name, scored, entry, state, pod, table, rows
                )
            except PluginFailed as failed:
                return None, failed.status
            normalized[i] = raw[i] if normal is None else normal
        if normalized.size and (
            normalized.min() < MIN_NODE_SCORE or normalized.max() > MAX_NODE_SCORE
        ):
            return None, invalid_score(entries, normalized)
        weights = [e.weight for e in entries]
        scores = ScoreTable(
            rows,
            [e.name for e in entries],
            weights,
            raw,
            normalized,
            np.zeros(len(rows), dtype=np.int64),
        )
        if entries:
            scores.totals = np.asarray(weights, dtype=np.int64) @ normalized
        return scores, SUCCESS

    # -- the binding cycle (bindingpoints.py) -------------------------------------------

    @timed("Reserve")
    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return self.binding.run_reserve(state, pod, node_name)

    @timed("Unreserve")
    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Every Reserve plugin's Unreserve, in reverse order; must not fail."""
        self.binding.run_unreserve(state, pod, node_name)

    @timed("Permit")
    def run_permit(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[Status, dict[str, float]]:
        """Permit in order. Wait from any plugin parks the pod in the waiting map."""
        return self.binding.run_permit(state, pod, node_name)

    def wait_on_permit(self, pod: Pod) -> Status:
        return self.binding.wait_on_permit(pod)

    @timed("PreBind")
    def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return self.binding.run_pre_bind(state, pod, node_name)

    @timed("Bind")
    def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """The first Bind plugin that does not Skip binds the pod."""
        return self.binding.run_bind(state, pod, node_name)

    @timed("PostBind")
    def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.binding.run_post_bind(state, pod, node_name)
