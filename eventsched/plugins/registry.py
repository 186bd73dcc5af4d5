"""Plugin names to factories: kube-scheduler's in-tree ones by their upstream names, then ours;
and the custom kinds our plugins declare, declared once to the model (model/customkinds.py)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from eventsched.framework import LEGACY_FEATURES, Features, Handle, Registry
from eventsched.model.customkinds import CUSTOM_KINDS, CustomKind
from eventsched.plugins.defaultbinder import DefaultBinder
from eventsched.plugins.defaultpreemption import DefaultPreemption
from eventsched.plugins.imagelocality import ImageLocality
from eventsched.plugins.interpodaffinity import InterPodAffinity
from eventsched.plugins.nodeaffinity import NodeAffinity
from eventsched.plugins.nodedeclaredfeatures import NodeDeclaredFeatures
from eventsched.plugins.nodename import NodeName
from eventsched.plugins.nodeports import NodePorts
from eventsched.plugins.noderesources_balanced import NodeResourcesBalancedAllocation
from eventsched.plugins.noderesources_fit import NodeResourcesFit
from eventsched.plugins.nodeunschedulable import NodeUnschedulable
from eventsched.plugins.nodevolumelimits import (
    AzureDiskLimits,
    CinderLimits,
    EBSLimits,
    GCEPDLimits,
    NodeVolumeLimits,
)
from eventsched.plugins.podtopologyspread import PodTopologySpread
from eventsched.plugins.prioritysort import PrioritySort
from eventsched.plugins.schedulinggates import SchedulingGates
from eventsched.plugins.tainttoleration import TaintToleration
from eventsched.plugins.volumebinding import VolumeBinding
from eventsched.plugins.volumerestrictions import VolumeRestrictions
from eventsched.plugins.volumezone import VolumeZone

IN_TREE = (
    SchedulingGates,
    PrioritySort,
    NodeName,
    NodeUnschedulable,
    TaintToleration,
    NodeAffinity,
    NodePorts,
    NodeResourcesFit,
    VolumeRestrictions,
    EBSLimits,
    GCEPDLimits,
    NodeVolumeLimits,
    AzureDiskLimits,
    CinderLimits,
    VolumeBinding,
    VolumeZone,
    PodTopologySpread,
    InterPodAffinity,
    DefaultPreemption,
    NodeResourcesBalancedAllocation,
    ImageLocality,
    DefaultBinder,
    NodeDeclaredFeatures,
)

#: eventsched's own plugins (docs/plugins), enabled only where a profile names them: plugin
#: name to the module under eventsched.plugins that defines it, imported when a profile
#: first builds the plugin (a process whose profiles name none of them does not load them).
OWN: dict[str, str] = {
    "ImportanceSort": "importancesort",
    "RandomScore": "randomscore",
    "NetworkTraffic": "networktraffic",
    "NodeLabel": "nodelabel",
    "PinnedHost": "pinnedhost",
    "StickyNode": "stickynode",
    "Coscheduling": "coscheduling",
    "CapacityScheduling": "capacityscheduling",
    "NodeResourcesAllocatable": "noderesources_allocatable",
    "NodeResourceTopologyMatch": "noderesourcetopology",
}


#: The custom resources our plugins read, each declared by its plugin's package as a
#: `CustomKind` (its model type, decoding, informer and CRD file): kind to where, as
#: `module:attribute` under eventsched.plugins. Each is declared to `CUSTOM_KINDS` when
#: this module is imported, so that the cluster adapters, the manifest loader and the fold
#: read it without importing a plugin; its package is imported when it is first looked up.
CUSTOM_KIND_DECLARATIONS: dict[str, str] = {
    "ElasticQuota": "capacityscheduling.elasticquota:ELASTIC_QUOTAS",
    "NodeResourceTopology": "noderesourcetopology.topology:NODE_RESOURCE_TOPOLOGIES",
}


def _loader(where: str) -> Callable[[], CustomKind[Any]]:
    """What loads the CustomKind at `where` (`module:attribute` under eventsched.plugins)."""
    module, _, attribute = where.partition(":")

    def load() -> CustomKind[Any]:
        found = getattr(importlib.import_module(f"eventsched.plugins.{module}"), attribute)
        if not isinstance(found, CustomKind):
            raise TypeError(f"eventsched.plugins.{where} is not a CustomKind")
        return found

    return load


def _declare_custom_kinds() -> None:
    for kind, where in CUSTOM_KIND_DECLARATIONS.items():
        CUSTOM_KINDS.declare(kind, _loader(where))


_declare_custom_kinds()


class Deferred:
    """A plugin factory that imports its plugin's module on first use: called, it builds
    the plugin as the class would; `custom_kinds` is the class's."""

    def __init__(self, name: str, module: str) -> None:
        self.name = name
        self.module = f"eventsched.plugins.{module}"

    def plugin_class(self) -> Any:
        return getattr(importlib.import_module(self.module), self.name)

    def __call__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> Any:
        return self.plugin_class()(args, handle, features)

    @property
    def custom_kinds(self) -> tuple[str, ...]:
        return tuple(getattr(self.plugin_class(), "custom_kinds", ()))


def in_tree_registry() -> Registry:
    return Registry({plugin.name: plugin for plugin in IN_TREE})


def full_registry() -> Registry:
    """Every plugin a configuration may name: what `run`, `simulate` and `config check` use."""
    return in_tree_registry().merge(
        Registry({name: Deferred(name, module) for name, module in OWN.items()})
    )
