"""Which plugins run at which extension point: kube-scheduler's v1 defaulting and MultiPoint expansion.

Two upstream steps, kept apart as upstream keeps them:

1. `merge_plugin_set` is `mergePluginSet` of `pkg/scheduler/apis/config/v1/default_plugins.go`:
   the user's set for one point is merged over the defaults (a re-configured
   default keeps its place and takes the user's weight; `disabled: "*"`
   drops every default at that point).
2. `expand` is `expandMultiPointPlugins` of `pkg/scheduler/framework/runtime/framework.go`:
   a MultiPoint plugin runs at every point it implements, unless disabled
   there; a plugin also named at the specific point keeps that entry (an
   override), and the order is overrides, then MultiPoint, then the rest.

The result is the resolved `Profile.plugins` the runtime consumes, so what
`config check` prints is exactly what runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from eventsched.config import upstreamplugins
from eventsched.framework import EXTENSION_POINTS, Features, PluginRef
from eventsched.framework.features import LEGACY

MULTI_POINT = "multiPoint"
#: The v1 `Plugins` fields, in the order kube-scheduler documents them.
POINTS: tuple[str, ...] = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)
assert set(POINTS) == set(EXTENSION_POINTS)

#: kube-scheduler v1.28's default MultiPoint set, and the plugins eventsched lacks
#: (config/upstreamplugins.py has every version's).
DEFAULT_MULTI_POINT = upstreamplugins.DEFAULT_MULTI_POINT
UPSTREAM_NOT_IMPLEMENTED = upstreamplugins.NOT_IMPLEMENTED

#: The plugins kubernetes-sigs/scheduler-plugins v0.28.9 registers (cmd/scheduler/main.go).
#: A configuration written for it that enables one eventsched lacks is refused by name.
SCHEDULER_PLUGINS: tuple[str, ...] = (
    "CapacityScheduling",
    "Coscheduling",
    "LoadVariationRiskBalancing",
    "NetworkOverhead",
    "TopologicalSort",
    "NodeResourcesAllocatable",
    "NodeResourceTopologyMatch",
    "PreemptionToleration",
    "TargetLoadPacking",
    "LowRiskOverCommitment",
    "SySched",
    "PodState",
    "QOSSort",
)


@dataclass(frozen=True, slots=True)
class Entry:
    """One `enabled` item, with where it came from for error messages."""

    name: str
    weight: int | None = None
    path: str = ""


@dataclass(frozen=True, slots=True)
class PluginSet:
    enabled: tuple[Entry, ...] = ()
    disabled: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PluginSets:
    """A profile's `plugins` field: one set per point plus MultiPoint."""

    sets: dict[str, PluginSet] = field(default_factory=dict)

    def at(self, point: str) -> PluginSet:
        return self.sets.get(point, PluginSet())


class PluginSetError(ValueError):
    """A resolution problem; `path` is inside the profile (e.g. `plugins.filter.enabled[1]`)."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}")


def defaults(features: Features = LEGACY) -> PluginSets:
    """kube-scheduler's default plugin sets at the version and gates `features` name, less
    the plugins eventsched does not implement (`upstreamplugins.left_out` names them)."""
    multi = upstreamplugins.upstream_default_multi_point(features)
    return PluginSets(
        {
            MULTI_POINT: PluginSet(
                tuple(
                    Entry(r.name, r.weight or None)
                    for r in multi
                    if not upstreamplugins.not_implemented(r)
                )
            )
        }
    )


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    disabled = tuple(custom.disabled) + tuple(default.disabled)
    custom_index = {e.name: i for i, e in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[Entry] = []
    if "*" not in disabled:
        for entry in default.enabled:
            if entry.name in disabled:
                continue
            index = custom_index.get(entry.name)
            if index is not None:
                entry = custom.enabled[index]
                replaced.add(index)
            enabled.append(entry)
    enabled.extend(e for i, e in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(tuple(enabled), disabled)


def merge(default: PluginSets, custom: PluginSets) -> PluginSets:
    points = (MULTI_POINT, *POINTS)
    return PluginSets({p: merge_plugin_set(default.at(p), custom.at(p)) for p in points})


def expand(
    merged: PluginSets, implements: Callable[[str, str], bool]
) -> dict[str, tuple[PluginRef, ...]]:
    """Per point, the plugins that run there, in order, with score weights (0 means 1)."""
    multi = merged.at(MULTI_POINT).enabled
    weights = _score_weights([*merged.at("score").enabled, *multi], implements)
    resolved: dict[str, tuple[PluginRef, ...]] = {}
    for point in POINTS:
        names = _point_plugins(point, merged.at(point), multi, implements)
        if names:
            resolved[point] = tuple(
                PluginRef(n, weights.get(n, 1) if point == "score" else 0) for n in names
            )
    return resolved


def _point_plugins(
    point: str, own: PluginSet, multi: Sequence[Entry], implements: Callable[[str, str], bool]
) -> list[str]:
    enabled: list[str] = []
    for entry in own.enabled:
        if not implements(entry.name, point):
            raise PluginSetError(entry.path, f"plugin {entry.name} does not extend {point}")
        if entry.name in enabled:
            raise PluginSetError(entry.path, f"plugin {entry.name} is already enabled at {point}")
        enabled.append(entry.name)
    if "*" in own.disabled:
        return enabled
    overrides: list[str] = []
    from_multi: list[str] = []
    for entry in multi:
        if not implements(entry.name, point) or entry.name in own.disabled:
            continue
        if entry.name in enabled:
            overrides.append(entry.name)
            continue
        if entry.name in from_multi:
            raise PluginSetError(
                entry.path, f"plugin {entry.name} is already enabled by multiPoint"
            )
        from_multi.append(entry.name)
    rest = [n for n in enabled if n not in overrides]
    return [n for n in enabled if n in overrides] + from_multi + rest


def _score_weights(
    entries: Sequence[Entry], implements: Callable[[str, str], bool]
) -> dict[str, int]:
    """The score point's weight wins over MultiPoint's; zero or unset means 1, as upstream."""
    weights: dict[str, int] = {}
    for entry in entries:
        if entry.name in weights or not implements(entry.name, "score"):
            continue
        weights[entry.name] = entry.weight or 1
    return weights
