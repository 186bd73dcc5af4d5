"""NodeResourceTopologyMatchArgs, defaulted and validated as scheduler-plugins v0.28.9 does
(apis/config/v1/defaults.go, apis/config/validation/validation_pluginargs.go).

- `scoringStrategy` unset: LeastAllocated over cpu and memory, weight 1 each. Set
  without `resources` (or with an empty list): cpu and memory are added. A weight
  left out or 0 becomes 1. `type` must be one of the four strategies, else
  `scoringStrategy.type: Invalid value: "<type>": invalid ScoringStrategyType`
  (so a `scoringStrategy` given without `type` is refused too).
- `cacheResyncPeriodSeconds` (default 0) and `discardReservedNodes` (default false)
  choose upstream's NRT cache. eventsched implements the default, the passthrough
  cache (the NodeResourceTopology as the API has it); a positive period (the
  overreserve cache, which needs the Reserve and PostBind points) or
  `discardReservedNodes: true` is refused rather than silently run differently.

The weights only weigh the strategies' per-resource scores: every requested
resource is scored, listed or not, and a resource not listed weighs 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from eventsched.framework import PluginArgsError, check_args, resource_specs
from eventsched.model.resources import CPU, MEMORY

NAME = "NodeResourceTopologyMatch"
LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
BALANCED_ALLOCATION = "BalancedAllocation"
LEAST_NUMA_NODES = "LeastNUMANodes"
STRATEGIES = (MOST_ALLOCATED, BALANCED_ALLOCATION, LEAST_ALLOCATED, LEAST_NUMA_NODES)
DEFAULT_RESOURCES = ((CPU, 1), (MEMORY, 1))
_ARGS = ("scoringStrategy", "cacheResyncPeriodSeconds", "discardReservedNodes")
_STRATEGY_FIELDS = ("type", "resources")


@dataclass(frozen=True, slots=True)
class TopologyMatchArgs:
    strategy: str = LEAST_ALLOCATED
    #: `scoringStrategy.resources` as (name, weight), defaulted.
    resources: tuple[tuple[str, int], ...] = DEFAULT_RESOURCES
    cache_resync_period_seconds: int = 0
    discard_reserved_nodes: bool = False
    #: Resource name to weight (`resourceToWeightMap`; a later entry wins).
    weights: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_RESOURCES))


def parse_args(args: Mapping[str, Any]) -> TopologyMatchArgs:
    check_args(NAME, args, _ARGS)
    strategy, resources = _scoring_strategy(args.get("scoringStrategy"))
    period = args.get("cacheResyncPeriodSeconds")
    period = 0 if period is None else period
    if isinstance(period, bool) or not isinstance(period, int):
        raise PluginArgsError(
            "cacheResyncPeriodSeconds", f"must be an integer number of seconds (got {period!r})"
        )
    if period > 0:
        raise PluginArgsError(
            "cacheResyncPeriodSeconds",
            f"Unsupported value: {period}: eventsched implements only the passthrough cache "
            "(0, the default); the overreserve cache needs the Reserve plugin",
        )
    discard = args.get("discardReservedNodes")
    discard = False if discard is None else discard
    if not isinstance(discard, bool):
        raise PluginArgsError("discardReservedNodes", f"must be true or false (got {discard!r})")
    if discard:
        raise PluginArgsError(
            "discardReservedNodes",
            "Unsupported value: true: eventsched implements only the passthrough cache "
            "(false, the default)",
        )
    return TopologyMatchArgs(strategy, resources, period, discard, dict(resources))


def _scoring_strategy(raw: Any) -> tuple[str, tuple[tuple[str, int], ...]]:
    if raw is None:
        return LEAST_ALLOCATED, DEFAULT_RESOURCES
    if not isinstance(raw, Mapping):
        raise PluginArgsError("scoringStrategy", "must be a map with type and resources")
    unknown = sorted(str(k) for k in raw if k not in _STRATEGY_FIELDS)
    if unknown:
        raise PluginArgsError(
            f"scoringStrategy.{unknown[0]}", "unknown field; scoringStrategy takes type, resources"
        )
    resources = _resources(raw.get("resources"))
    kind = raw.get("type")
    kind = "" if kind is None else kind
    if not isinstance(kind, str) or kind not in STRATEGIES:
        shown = f'"{kind}"' if isinstance(kind, str) else repr(kind)
        raise PluginArgsError(
            "scoringStrategy.type", f"Invalid value: {shown}: invalid ScoringStrategyType"
        )
    return kind, resources


def _resources(raw: Any) -> tuple[tuple[str, int], ...]:
    specs = resource_specs(raw, "scoringStrategy.resources")
    if specs is None:
        return DEFAULT_RESOURCES
    return tuple((spec.name, spec.weight or 1) for spec in specs)
