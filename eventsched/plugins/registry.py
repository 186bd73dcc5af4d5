"""The in-tree plugins by their upstream names."""

from __future__ import annotations

from eventsched.framework import Registry
from eventsched.plugins.defaultbinder import DefaultBinder
from eventsched.plugins.nodeaffinity import NodeAffinity
from eventsched.plugins.nodename import NodeName
from eventsched.plugins.noderesources_fit import NodeResourcesFit
from eventsched.plugins.nodeunschedulable import NodeUnschedulable
from eventsched.plugins.prioritysort import PrioritySort
from eventsched.plugins.schedulinggates import SchedulingGates
from eventsched.plugins.tainttoleration import TaintToleration


def in_tree_registry() -> Registry:
    return Registry(
        {
            plugin.name: plugin
            for plugin in (
                SchedulingGates,
                PrioritySort,
                NodeName,
                NodeUnschedulable,
                TaintToleration,
                NodeAffinity,
                NodeResourcesFit,
                DefaultBinder,
            )
        }
    )
