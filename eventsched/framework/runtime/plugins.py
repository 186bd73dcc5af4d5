"""A profile's plugins per extension point, typed as each point calls them.

As kube-scheduler's `frameworkImpl` keeps `preFilterPlugins []PreFilterPlugin`,
`filterPlugins []FilterPlugin` and so on, `PluginSet` holds one typed list
per point, built once from the profile. Filter and Score plugins written per
node are wrapped here into the batch form the runtime calls, so the runtime
never asks at run time which form a plugin has.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eventsched.framework.adapters import filter_rows, score_rows
from eventsched.framework.cycle_state import CycleState
from eventsched.framework.interface import (
    BatchFilterPlugin,
    BatchScorePlugin,
    BindPlugin,
    FilterPlugin,
    PermitPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
    implements,
)
from eventsched.framework.profile import Profile
from eventsched.framework.types import BatchFilterResult
from eventsched.model import Indexes, IntArray, NodeTable, Pod


class ProfileError(ValueError):
    """A profile that cannot be built: names the plugin and extension point at fault."""


BatchFilter = Callable[[CycleState, Pod, NodeTable, Indexes], BatchFilterResult]
BatchScore = Callable[[CycleState, Pod, NodeTable, Indexes], IntArray]
Normalize = Callable[[CycleState, Pod, IntArray, Indexes], IntArray]


@dataclass(frozen=True, slots=True)
class FilterEntry:
    """A Filter plugin, called in batch form whichever form it was written in."""

    name: str
    run: BatchFilter


@dataclass(frozen=True, slots=True)
class ScoreEntry:
    """A Score plugin with its weight and its NormalizeScore (None when it has none)."""

    name: str
    weight: int
    run: BatchScore
    normalize: Normalize | None


@dataclass(slots=True)
class PluginSet:
    queue_sort: QueueSortPlugin
    pre_enqueue: list[PreEnqueuePlugin] = field(default_factory=list)
    pre_filter: list[PreFilterPlugin] = field(default_factory=list)
    filter: list[FilterEntry] = field(default_factory=list)
    post_filter: list[PostFilterPlugin] = field(default_factory=list)
    pre_score: list[PreScorePlugin] = field(default_factory=list)
    score: list[ScoreEntry] = field(default_factory=list)
    reserve: list[ReservePlugin] = field(default_factory=list)
    permit: list[PermitPlugin] = field(default_factory=list)
    pre_bind: list[PreBindPlugin] = field(default_factory=list)
    bind: list[BindPlugin] = field(default_factory=list)
    post_bind: list[PostBindPlugin] = field(default_factory=list)

    @classmethod
    def build(cls, profile: Profile, instances: Mapping[str, object]) -> PluginSet:
        """Each enabled plugin at each point of `profile`; ProfileError names a mismatch."""
        at = _Lookup(profile, instances)
        sorters = at.point("queueSort", QueueSortPlugin)
        if len(sorters) != 1:
            raise ProfileError(
                f"profile {profile.scheduler_name}: exactly one queueSort plugin must be enabled "
                f"(got {len(sorters)})"
            )
        return cls(
            queue_sort=sorters[0],
            pre_enqueue=at.point("preEnqueue", PreEnqueuePlugin),
            pre_filter=at.point("preFilter", PreFilterPlugin),
            filter=[_filter_entry(name, plugin) for name, plugin in at.named("filter")],
            post_filter=at.point("postFilter", PostFilterPlugin),
            pre_score=at.point("preScore", PreScorePlugin),
            score=[
                _score_entry(name, plugin, ref_weight)
                for (name, plugin), ref_weight in zip(
                    at.named("score"), [r.weight or 1 for r in profile.at("score")], strict=True
                )
            ],
            reserve=at.point("reserve", ReservePlugin),
            permit=at.point("permit", PermitPlugin),
            pre_bind=at.point("preBind", PreBindPlugin),
            bind=at.point("bind", BindPlugin),
            post_bind=at.point("postBind", PostBindPlugin),
        )


class _Lookup:
    def __init__(self, profile: Profile, instances: Mapping[str, object]) -> None:
        self.profile = profile
        self.instances = instances

    def named(self, point: str) -> list[tuple[str, object]]:
        found = []
        for ref in self.profile.at(point):
            plugin = self.instances[ref.name]
            if not implements(plugin, point):
                raise ProfileError(
                    f"profile {self.profile.scheduler_name}: plugin {ref.name} does not "
                    f"implement the {point} extension point"
                )
            found.append((ref.name, plugin))
        return found

    def point(self, point: str, kind: Any) -> list[Any]:
        """The plugins at `point`, each checked to be a `kind` (its protocol)."""
        plugins = []
        for _, plugin in self.named(point):
            assert isinstance(plugin, kind)
            plugins.append(plugin)
        return plugins


def _filter_entry(name: str, plugin: object) -> FilterEntry:
    if isinstance(plugin, BatchFilterPlugin):
        return FilterEntry(name, plugin.filter_batch)
    assert isinstance(plugin, FilterPlugin)
    per_node = plugin

    def batch(state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> BatchFilterResult:
        return filter_rows(per_node, state, pod, table, rows)

    return FilterEntry(name, batch)


def _score_entry(name: str, plugin: object, weight: int) -> ScoreEntry:
    normalize = plugin.normalize_score if isinstance(plugin, ScoreExtensions) else None
    if isinstance(plugin, BatchScorePlugin):
        return ScoreEntry(name, weight, plugin.score_batch, normalize)
    assert isinstance(plugin, ScorePlugin)
    per_node = plugin

    def batch(state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> IntArray:
        return score_rows(per_node, state, pod, table, rows)

    return ScoreEntry(name, weight, batch, normalize)
