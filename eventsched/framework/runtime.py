"""The runtime of one profile: builds its plugins and runs each extension point.

Like kube-scheduler's `frameworkImpl`, it knows nothing of queues, caches or
the API; it turns plugin results into statuses, and a plugin that raises
into an Error status naming it, so one bad plugin never stops the loop.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar, cast

import numpy as np
import structlog

from eventsched.framework.adapters import filter_rows, score_rows
from eventsched.framework.cycle_state import CycleState
from eventsched.framework.handle import Handle
from eventsched.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    AnnotationReader,
    BatchFilterPlugin,
    BatchScorePlugin,
    EnqueueExtensions,
    QueueSortPlugin,
    ScoreExtensions,
    implements,
)
from eventsched.framework.profile import Profile
from eventsched.framework.registry import PluginArgsError, Registry
from eventsched.framework.sink import DecisionSink
from eventsched.framework.status import Code, Status
from eventsched.framework.types import (
    WILDCARD_EVENT,
    ClusterEvent,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
)
from eventsched.framework.waiting import WaitingPod
from eventsched.model import Indexes, IntArray, NodeTable, Pod
from eventsched.model.pod import HOST_PORTS, POD_AFFINITY, POD_ANTI_AFFINITY, TOPOLOGY_SPREAD

log = structlog.get_logger(__name__)

#: The kube-scheduler plugin that honours each field a pod may set (Pod.uses).
HONOURED_BY: dict[str, str] = {
    POD_AFFINITY: "InterPodAffinity",
    POD_ANTI_AFFINITY: "InterPodAffinity",
    TOPOLOGY_SPREAD: "PodTopologySpread",
    HOST_PORTS: "NodePorts",
}


class IgnoredField(NamedTuple):
    field: str
    #: The plugin that would honour it, not in the profile.
    plugin: str


#: kube-scheduler's `maxTimeout` for Permit waits.
MAX_PERMIT_TIMEOUT = 15 * 60.0


class ProfileError(ValueError):
    """A profile that cannot be built: names the plugin and extension point at fault."""


@dataclass(slots=True)
class Rejection:
    """Rows one Filter plugin rejected: row `rows[i]` failed with `statuses[slots[i]]`.

    Arrays, not an object per node: an unschedulable pod in a 5,000-node
    cluster is 5,000 rejections, and the hot path must not build them one by one.
    """

    plugin: str
    rows: Indexes
    slots: IntArray
    statuses: list[Status]

    def __len__(self) -> int:
        return len(self.rows)

    def keep(self, mask: np.ndarray) -> Rejection:
        return Rejection(self.plugin, self.rows[mask], self.slots[mask], self.statuses)

    def counts(self) -> IntArray:
        return np.bincount(self.slots, minlength=len(self.statuses))

    def status_of(self) -> list[tuple[int, Status]]:
        return [(int(r), self.statuses[int(k)]) for r, k in zip(self.rows, self.slots, strict=True)]


@dataclass(slots=True)
class ScoreTable:
    """Scores of the feasible rows: one line per score plugin, totals weighted and summed."""

    rows: Indexes
    plugins: list[str]
    weights: list[int]
    raw: IntArray  # plugins x rows
    normalized: IntArray  # plugins x rows
    totals: IntArray  # rows

    def weighted(self) -> IntArray:
        return self.normalized * np.asarray(self.weights, dtype=np.int64)[:, None]


#: (extension point, status code label, profile, seconds): what the scheduler's
#: `scheduler_framework_extension_point_duration_seconds` histogram records.
ExtensionPointObserver = Callable[[str, str, str, float], None]

_F = TypeVar("_F", bound=Callable[..., Any])


def _status_in(result: object) -> Status:
    if isinstance(result, Status):
        return result
    if isinstance(result, tuple):
        for item in result:
            if isinstance(item, Status):
                return item
    return Status()


def _timed(point: str) -> Callable[[_F], _F]:
    """Time one extension point for the observer, as kube-scheduler's runtime does."""

    def wrap(method: _F) -> _F:
        @functools.wraps(method)
        def timed(self: Framework, *args: Any, **kwargs: Any) -> Any:
            observe = self.observe
            if observe is None:
                return method(self, *args, **kwargs)
            started = time.perf_counter()
            result = method(self, *args, **kwargs)
            observe(point, _status_in(result).code.label, self.name, time.perf_counter() - started)
            return result

        return cast(_F, timed)

    return wrap


class Framework:
    #: Set by the scheduler to export extension-point latencies; None costs nothing.
    observe: ExtensionPointObserver | None = None

    def __init__(self, profile: Profile, registry: Registry, handle: Handle) -> None:
        self.profile = profile
        self.handle = handle
        self.instances: dict[str, object] = {}
        for name in profile.plugin_names():
            args = profile.plugin_args.get(name, {})
            try:
                self.instances[name] = registry.factory(name)(args, handle)
            except PluginArgsError:
                raise
            except (TypeError, ValueError) as exc:
                raise PluginArgsError("", f"plugin {name}: {exc}") from exc
        self._points: dict[str, list[object]] = {}
        for point, refs in profile.plugins.items():
            plugins = []
            for ref in refs:
                plugin = self.instances[ref.name]
                if not implements(plugin, point):
                    raise ProfileError(
                        f"profile {profile.scheduler_name}: plugin {ref.name} does not "
                        f"implement the {point} extension point"
                    )
                plugins.append(plugin)
            self._points[point] = plugins
        self.score_weights = {ref.name: (ref.weight or 1) for ref in profile.at("score")}
        # isinstance on runtime-checkable protocols is slow; decide each plugin's form once.
        self._batch_filter = {
            n for n, p in self.instances.items() if isinstance(p, BatchFilterPlugin)
        }
        self._batch_score = {
            n for n, p in self.instances.items() if isinstance(p, BatchScorePlugin)
        }
        self._normalizes = {n for n, p in self.instances.items() if isinstance(p, ScoreExtensions)}
        sorters = self._points.get("queueSort", [])
        if len(sorters) != 1:
            raise ProfileError(
                f"profile {profile.scheduler_name}: exactly one queueSort plugin must be enabled "
                f"(got {len(sorters)})"
            )
        self.queue_sort: QueueSortPlugin = sorters[0]  # type: ignore[assignment]

    @property
    def name(self) -> str:
        return self.profile.scheduler_name

    def plugins_at(self, point: str) -> list[object]:
        return self._points.get(point, [])

    def has_score_plugins(self) -> bool:
        return bool(self._points.get("score"))

    def has_filter_plugins(self) -> bool:
        return bool(self._points.get("filter"))

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
        return [
            IgnoredField(field, HONOURED_BY[field])
            for field in pod.uses
            if field in HONOURED_BY and HONOURED_BY[field] not in self.instances
        ]

    def annotations_read(self) -> frozenset[str]:
        """The pod annotation keys this profile's plugins read (all others go unlogged)."""
        keys: set[str] = set()
        for plugin in self.instances.values():
            if isinstance(plugin, AnnotationReader):
                keys.update(plugin.annotations_read())
        return frozenset(keys)

    # -- queueing ---------------------------------------------------------------

    @_timed("PreEnqueue")
    def run_pre_enqueue(self, pod: Pod, sink: DecisionSink | None = None) -> Status:
        """PreEnqueue in order; what a plugin records about the pod goes to `sink`."""
        self.handle.enqueue_sink = sink
        try:
            for plugin in self.plugins_at("preEnqueue"):
                status = self._call(plugin, "pre_enqueue", pod)
                if not status.is_success:
                    return status
            return Status()
        finally:
            self.handle.enqueue_sink = None

    # -- filtering --------------------------------------------------------------

    @_timed("PreFilter")
    def run_pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status, set[str]]:
        """PreFilter in order; stops at the first rejection. Returns the merged node subset."""
        merged: PreFilterResult | None = None
        narrowing: list[str] = []
        for plugin in self.plugins_at("preFilter"):
            name = plugin.name  # type: ignore[attr-defined]
            try:
                result, status = plugin.pre_filter(state, pod, table)  # type: ignore[attr-defined]
            except Exception as exc:  # a plugin's bug must not stop the loop
                log.exception("plugin failed", plugin=name, point="PreFilter")
                return None, Status.as_error(exc, name), set()
            status = (status or Status()).with_plugin(name)
            if status.is_skip:
                state.skip_filter.add(name)
                continue
            if not status.is_success:
                if status.is_rejected:
                    return None, status, {name}
                return (
                    None,
                    Status(
                        Code.ERROR,
                        (f"running PreFilter plugin {name}: {status.message}",),
                        name,
                        status.error,
                    ),
                    set(),
                )
            if result is not None and result.node_names is not None:
                narrowing.append(name)
                merged = result.merge(merged) if merged is not None else result
                if not merged.node_names:
                    message = (
                        f"node(s) didn't satisfy plugin {narrowing[0]}"
                        if len(narrowing) == 1
                        else f"node(s) didn't satisfy plugin(s) {_go_list(narrowing)} simultaneously"
                    )
                    return None, Status.unresolvable(message, plugin=name), set(narrowing)
        return merged, Status(), set(narrowing)

    @_timed("Filter")
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
        for plugin in self.plugins_at("filter"):
            name = plugin.name  # type: ignore[attr-defined]
            if name in state.skip_filter or len(remaining) == 0:
                continue
            try:
                if name in self._batch_filter:
                    result = plugin.filter_batch(state, pod, table, remaining)  # type: ignore[attr-defined]
                else:
                    result = filter_rows(plugin, state, pod, table, remaining)  # type: ignore[arg-type]
            except Exception as exc:
                log.exception("plugin failed", plugin=name, point="Filter")
                return remaining[:0], rejections, Status.as_error(exc, name)
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
        return remaining, rejections, Status()

    @_timed("PostFilter")
    def run_post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """PostFilter in order until one makes the pod schedulable (kube-scheduler semantics)."""
        messages: list[str] = []
        for plugin in self.plugins_at("postFilter"):
            name = plugin.name  # type: ignore[attr-defined]
            try:
                result, status = plugin.post_filter(state, pod, statuses)  # type: ignore[attr-defined]
            except Exception as exc:
                log.exception("plugin failed", plugin=name, point="PostFilter")
                return None, Status.as_error(exc, name)
            status = (status or Status()).with_plugin(name)
            if status.is_success:
                return result, status
            if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return result, status
            if not status.is_rejected:
                return None, status
            messages.extend(status.reasons)
        return None, Status.unschedulable(*messages)

    # -- scoring ----------------------------------------------------------------

    @_timed("PreScore")
    def run_pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> Status:
        for plugin in self.plugins_at("preScore"):
            name = plugin.name  # type: ignore[attr-defined]
            status = self._call(plugin, "pre_score", state, pod, table, rows)
            if status.is_skip:
                state.skip_score.add(name)
            elif not status.is_success:
                return Status(
                    Code.ERROR,
                    (f"running PreScore plugin {name}: {status.message}",),
                    name,
                    status.error,
                )
        return Status()

    @_timed("Score")
    def run_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> tuple[ScoreTable | None, Status]:
        """Score, NormalizeScore and weights; any score outside 0..100 is an Error, as upstream."""
        plugins = [p for p in self.plugins_at("score") if p.name not in state.skip_score]  # type: ignore[attr-defined]
        names = [p.name for p in plugins]  # type: ignore[attr-defined]
        raw = np.zeros((len(plugins), len(rows)), dtype=np.int64)
        normalized = np.zeros_like(raw)
        for i, plugin in enumerate(plugins):
            name = names[i]
            try:
                if name in self._batch_score:
                    scores = np.asarray(plugin.score_batch(state, pod, table, rows), dtype=np.int64)  # type: ignore[attr-defined]
                else:
                    scores = score_rows(plugin, state, pod, table, rows)  # type: ignore[arg-type]
                raw[i] = scores
                normal = scores.copy()
                if name in self._normalizes:
                    normal = np.asarray(
                        plugin.normalize_score(state, pod, normal, rows),  # type: ignore[attr-defined]
                        dtype=np.int64,
                    )
            except Exception as exc:
                log.exception("plugin failed", plugin=name, point="Score")
                return None, Status.as_error(exc, name)
            if len(normal) and (normal.min() < MIN_NODE_SCORE or normal.max() > MAX_NODE_SCORE):
                bad = int(normal[(normal < MIN_NODE_SCORE) | (normal > MAX_NODE_SCORE)][0])
                return None, Status.as_error(
                    f"plugin {name!r} returns an invalid score {bad}, it should in the range of "
                    f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                    name,
                )
            normalized[i] = normal
        weights = [self.score_weights[n] for n in names]
        table_ = ScoreTable(
            rows, names, weights, raw, normalized, np.zeros(len(rows), dtype=np.int64)
        )
        table_.totals = table_.weighted().sum(axis=0) if len(names) else table_.totals
        return table_, Status()

    # -- reserve, permit, bind --------------------------------------------------

    @_timed("Reserve")
    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for plugin in self.plugins_at("reserve"):
            status = self._call(plugin, "reserve", state, pod, node_name)
            if not status.is_success:
                if status.is_rejected:
                    return status
                return Status(
                    Code.ERROR,
                    (f"running Reserve plugin {status.plugin}: {status.message}",),
                    status.plugin,
                    status.error,
                )
        return Status()

    @_timed("Unreserve")
    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Every Reserve plugin's Unreserve, in reverse order; must not fail."""
        for plugin in reversed(self.plugins_at("reserve")):
            try:
                plugin.unreserve(state, pod, node_name)  # type: ignore[attr-defined]
            except Exception:
                log.exception("unreserve failed", plugin=plugin.name, pod=pod.key)  # type: ignore[attr-defined]

    @_timed("Permit")
    def run_permit(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[Status, dict[str, float]]:
        """Permit in order. Wait from any plugin parks the pod in the waiting map."""
        waits: dict[str, float] = {}
        for plugin in self.plugins_at("permit"):
            name = plugin.name  # type: ignore[attr-defined]
            try:
                status, timeout = plugin.permit(state, pod, node_name)  # type: ignore[attr-defined]
            except Exception as exc:
                log.exception("plugin failed", plugin=name, point="Permit")
                return Status.as_error(exc, name), waits
            status = (status or Status()).with_plugin(name)
            if status.is_success:
                continue
            if status.is_rejected:
                return status, waits
            if status.is_wait:
                waits[name] = min(max(float(timeout), 0.0), MAX_PERMIT_TIMEOUT)
                continue
            return Status(
                Code.ERROR, (f"running Permit plugin {name}: {status.message}",), name, status.error
            ), waits
        if waits:
            self.handle.waiting_pods.add(
                WaitingPod(pod, node_name, waits, clock=self.handle.monotonic)
            )
            return Status(
                Code.WAIT, ("one or more plugins asked to wait and no plugin rejected pod",)
            ), waits
        return Status(), waits

    def wait_on_permit(self, pod: Pod) -> Status:
        waiting = self.handle.waiting_pods.get(pod.uid)
        if waiting is None:
            return Status()
        try:
            return waiting.wait()
        finally:
            self.handle.waiting_pods.remove(pod.uid)

    @_timed("PreBind")
    def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for plugin in self.plugins_at("preBind"):
            status = self._call(plugin, "pre_bind", state, pod, node_name)
            if status.is_skip:
                continue
            if not status.is_success:
                return status
        return Status()

    @_timed("Bind")
    def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """The first Bind plugin that does not Skip binds the pod."""
        for plugin in self.plugins_at("bind"):
            status = self._call(plugin, "bind", state, pod, node_name)
            if status.is_skip:
                continue
            return status
        return Status(Code.SKIP, ("all bind plugins skipped",))

    @_timed("PostBind")
    def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for plugin in self.plugins_at("postBind"):
            self._call(plugin, "post_bind", state, pod, node_name)

    def _call(self, plugin: object, method: str, *args: object) -> Status:
        name = plugin.name  # type: ignore[attr-defined]
        try:
            status = getattr(plugin, method)(*args)
        except Exception as exc:
            log.exception("plugin failed", plugin=name, point=method)
            return Status.as_error(exc, name)
        return (status if isinstance(status, Status) else Status()).with_plugin(name)


def _go_list(items: list[str]) -> str:
    """How Go's %v prints a []string: [a b c]."""
    return "[" + " ".join(sorted(items)) + "]"
