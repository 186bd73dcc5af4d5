"""kube-scheduler's v1 default profile, restricted to the plugins eventsched has so far.

The default MultiPoint set of the version decided as (config/upstreamplugins.py) expanded
per extension point as kube-scheduler expands it (config/pluginsets.py `expand`), with
each plugin's extension points written out by hand in `POINTS_OF`: config depends on no
concrete plugin, and a test checks the table against the plugins themselves at every
version. At v1.28: the in-tree volume limits EBSLimits, GCEPDLimits and AzureDiskLimits
around NodeVolumeLimits as upstream has them (CinderLimits is registered, not default,
as upstream), and DefaultPreemption at postFilter. What upstream's default profile has
and eventsched does not implement (DynamicResources from 1.34) is left out, and
`upstreamplugins.left_out` names it.
"""

from __future__ import annotations

from eventsched.config.pluginsets import defaults, expand
from eventsched.framework import Features, Profile
from eventsched.framework.features import LEGACY

DEFAULT_SCHEDULER_NAME = "eventsched"

_FILTERING = ("preFilter", "filter")
_SCORING = ("preScore", "score")

#: The extension points each default plugin serves, as eventsched's plugins implement them.
POINTS_OF: dict[str, tuple[str, ...]] = {
    "SchedulingGates": ("preEnqueue",),
    "PrioritySort": ("queueSort",),
    "NodeUnschedulable": ("filter",),
    "NodeName": ("filter",),
    "TaintToleration": ("filter", *_SCORING),
    "NodeAffinity": (*_FILTERING, *_SCORING),
    "NodePorts": _FILTERING,
    "NodeResourcesFit": (*_FILTERING, "score"),
    "VolumeRestrictions": _FILTERING,
    "EBSLimits": _FILTERING,
    "GCEPDLimits": _FILTERING,
    "NodeVolumeLimits": _FILTERING,
    "AzureDiskLimits": _FILTERING,
    "VolumeBinding": (*_FILTERING, *_SCORING, "reserve", "preBind"),
    "VolumeZone": _FILTERING,
    "PodTopologySpread": (*_FILTERING, *_SCORING),
    "InterPodAffinity": (*_FILTERING, *_SCORING),
    "DefaultPreemption": ("postFilter",),
    "NodeResourcesBalancedAllocation": _SCORING,
    "ImageLocality": ("score",),
    "DefaultBinder": ("bind",),
    "NodeDeclaredFeatures": _FILTERING,
}

#: From 1.37 NodeName, NodeUnschedulable and TaintToleration have a PreFilter too (NodeName's
#: names the pod's `spec.nodeName`; the other two Skip only deferred resizes).
_PRE_FILTER_FROM_1_37 = frozenset({"NodeName", "NodeUnschedulable", "TaintToleration"})


def points_of(plugin: str, features: Features) -> tuple[str, ...]:
    """The extension points `plugin` of the default profile serves at `features.version`."""
    points = POINTS_OF[plugin]
    if plugin in _PRE_FILTER_FROM_1_37 and features.since("1.37"):
        return ("preFilter", *points)
    return points


def default_profile(
    scheduler_name: str = DEFAULT_SCHEDULER_NAME, features: Features = LEGACY
) -> Profile:
    """kube-scheduler's default profile under `scheduler_name`, deciding as `features` say."""
    return Profile(
        scheduler_name=scheduler_name,
        features=features,
        plugins=expand(defaults(features), lambda name, point: point in points_of(name, features)),
    )
