"""Plugin names to factories: kube-scheduler's in-tree ones by their upstream names, then ours."""

from __future__ import annotations

from typing import Any

from eventsched.framework import Registry
from eventsched.plugins.capacityscheduling import CapacityScheduling
from eventsched.plugins.coscheduling import Coscheduling
from eventsched.plugins.defaultbinder import DefaultBinder
from eventsched.plugins.defaultpreemption import DefaultPreemption
from eventsched.plugins.imagelocality import ImageLocality
from eventsched.plugins.importancesort import ImportanceSort
from eventsched.plugins.interpodaffinity import InterPodAffinity
from eventsched.plugins.networktraffic import NetworkTraffic
from eventsched.plugins.nodeaffinity import NodeAffinity
from eventsched.plugins.nodelabel import NodeLabel
from eventsched.plugins.nodename import NodeName
from eventsched.plugins.nodeports import NodePorts
from eventsched.plugins.noderesources_allocatable import NodeResourcesAllocatable
from eventsched.plugins.noderesources_balanced import NodeResourcesBalancedAllocation
from eventsched.plugins.noderesources_fit import NodeResourcesFit
from eventsched.plugins.noderesourcetopology import NodeResourceTopologyMatch
from eventsched.plugins.nodeunschedulable import NodeUnschedulable
from eventsched.plugins.nodevolumelimits import (
    AzureDiskLimits,
    CinderLimits,
    EBSLimits,
    GCEPDLimits,
    NodeVolumeLimits,
)
from eventsched.plugins.pinnedhost import PinnedHost
from eventsched.plugins.podtopologyspread import PodTopologySpread
from eventsched.plugins.prioritysort import PrioritySort
from eventsched.plugins.randomscore import RandomScore
from eventsched.plugins.schedulinggates import SchedulingGates
from eventsched.plugins.stickynode import StickyNode
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
)

#: eventsched's own plugins (docs/plugins); enabled only where a profile names them.
OWN: tuple[Any, ...] = (
    ImportanceSort,
    RandomScore,
    NetworkTraffic,
    NodeLabel,
    PinnedHost,
    StickyNode,
    Coscheduling,
    CapacityScheduling,
    NodeResourcesAllocatable,
    NodeResourceTopologyMatch,
)


def in_tree_registry() -> Registry:
    return Registry({plugin.name: plugin for plugin in IN_TREE})


def full_registry() -> Registry:
    """Every plugin a configuration may name: what `run`, `simulate` and `config check` use."""
    return in_tree_registry().merge(Registry({plugin.name: plugin for plugin in OWN}))
