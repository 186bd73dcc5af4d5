"""The extension points, one protocol each, with kube-scheduler's meaning.

A plugin is any object with a `name` and the methods of the points it
implements; the runtime finds them with isinstance on these runtime-checkable
protocols, answered once per plugin class (a plugin's points are its class's). Filter and
Score come in two forms: per node (simple to write) and batch over the NodeTable (fast);
the runtime adapts the first to the second.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.status import Status
from eventsched.framework.types import (
    BatchFilterResult,
    ClusterEvent,
    NodeInfo,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
)
from eventsched.model import Indexes, IntArray, NodeTable, Pod

if TYPE_CHECKING:
    from eventsched.framework.extenders.client import HTTPExtender
    from eventsched.framework.runtime.results import Rejection

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0

#: Each protocol's answers so far: plugin class -> whether its instances conform.
_CONFORMING: dict[type, dict[type, bool]] = {}


class _PerClassProtocol(type(Protocol)):  # type: ignore[misc]
    """isinstance on a runtime-checkable protocol, decided once for each class.

    Python 3.11 collects a protocol's members again on every check (about 60 µs for one
    of these), and a scheduler's frameworks check each plugin against a dozen of them as
    they start: 15 ms for each scheduler built. Plugins are classes whose methods and
    `name` every instance has, so the first instance's answer is its class's.
    """

    def __instancecheck__(cls, instance: Any) -> bool:
        answers = _CONFORMING.setdefault(cls, {})
        kind = type(instance)
        answer = answers.get(kind)
        if answer is None:
            answer = answers[kind] = bool(super().__instancecheck__(instance))
        return answer


@runtime_checkable
class Plugin(Protocol, metaclass=_PerClassProtocol):
    name: str


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status | None: ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> Sequence[ClusterEvent]: ...


@runtime_checkable
class AnnotationReader(Plugin, Protocol):
    """A plugin that reads pod annotations names their keys: only those are logged.

    Annotations are often large (`kubectl.kubernetes.io/last-applied-configuration`)
    and change for reasons no decision reads; the scheduler drops every other
    key from the pods it observes, so the log and replay see the same pod.
    """

    def annotations_read(self) -> Collection[str]: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]: ...


@runtime_checkable
class PodCountingPreFilter(Plugin, Protocol):
    """A PreFilter whose state counts the pods placed on nodes (upstream's
    `PreFilterExtensions`, AddPod/RemovePod): InterPodAffinity, PodTopologySpread,
    VolumeRestrictions.

    Preemption and nominated pods change a node's pods within a cycle; the runtime
    then calls `recount` on a clone of the cycle state, with the table changed, and
    the plugin writes its PreFilter state for the changed table.
    """

    def recount(self, state: CycleState, pod: Pod, table: NodeTable) -> Status | None: ...


@runtime_checkable
class RequestedOnlyFilter(Plugin, Protocol):
    """A Filter whose verdict on a node reads only that node and the table's requested
    and allocatable columns: not the pods on it, not other nodes (NodeUnschedulable,
    NodeName, TaintToleration, NodeAffinity, NodeResourcesFit). When every Filter a pod
    meets is one, preemption's dry run judges many nodes at once, with the requests of
    candidate victims taken off their rows (`NodeTable.requested_as`)."""

    filter_reads_requested_only: bool


class FilterRunner(Protocol):
    """What a PostFilter plugin may ask of its profile: kube-scheduler's
    `RunFilterPluginsWithNominatedPods` on one node with some of its pods removed; and
    the batch Filter pass over rows, when only `RequestedOnlyFilter`s judge the pod."""

    def run_filter(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> tuple[Indexes, list[Rejection], Status]: ...

    def judged_by_requested_only(self, state: CycleState) -> bool: ...

    def run_filter_with_nominated_pods(
        self,
        state: CycleState,
        pod: Pod,
        table: NodeTable,
        node_name: str,
        removed: Sequence[Pod] = (),
    ) -> Status: ...


@runtime_checkable
class UsesFilters(Plugin, Protocol):
    """A plugin (DefaultPreemption) that runs its profile's Filter plugins: the
    runtime hands it itself when the profile is built (upstream's Handle is the
    framework)."""

    def use_filters(self, runner: FilterRunner) -> None: ...


@runtime_checkable
class UsesExtenders(Plugin, Protocol):
    """A preempting PostFilter plugin, which calls the extenders' preempt verb on its
    candidates: the runtime hands it the configuration's extenders when the profile is
    built (upstream's `Handle.Extenders()`)."""

    def use_extenders(self, extenders: Sequence[HTTPExtender]) -> None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None: ...


@runtime_checkable
class BatchFilterPlugin(Plugin, Protocol):
    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]: ...


@runtime_checkable
class PreemptionPlugin(Plugin, Protocol):
    """A PostFilter plugin that preempts (DefaultPreemption, CapacityScheduling): each of
    its runs counts one `scheduler_preemption_attempts_total`, as both upstream plugins
    count themselves; another PostFilter (Coscheduling's) counts none."""

    counts_preemption_attempts: bool


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> Status | None: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int: ...


@runtime_checkable
class BatchScorePlugin(Plugin, Protocol):
    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> IntArray: ...


@runtime_checkable
class ScoreExtensions(Plugin, Protocol):
    """NormalizeScore: rescale a plugin's raw scores (in place or returned) to 0..100."""

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: IntArray, rows: Indexes
    ) -> IntArray: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[Status | None, float]: ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


EXTENSION_POINTS: dict[str, type[Any]] = {
    "queueSort": QueueSortPlugin,
    "preEnqueue": PreEnqueuePlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "reserve": ReservePlugin,
    "permit": PermitPlugin,
    "preBind": PreBindPlugin,
    "bind": BindPlugin,
    "postBind": PostBindPlugin,
}
"""Extension point name as in KubeSchedulerConfiguration to the protocol that implements it."""


def implements(plugin: object, point: str) -> bool:
    """Whether `plugin` can serve at `point`; Filter and Score accept either form."""
    if point == "filter":
        return isinstance(plugin, FilterPlugin | BatchFilterPlugin)
    if point == "score":
        return isinstance(plugin, ScorePlugin | BatchScorePlugin)
    return isinstance(plugin, EXTENSION_POINTS[point])
