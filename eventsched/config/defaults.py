"""kube-scheduler's v1 default profile, restricted to the plugins eventsched has so far.

Order and weights follow `pkg/scheduler/apis/config/v1/default_plugins.go`
expanded per extension point, with the in-tree volume limits EBSLimits,
GCEPDLimits and AzureDiskLimits around NodeVolumeLimits as upstream has them
(CinderLimits is registered, not default, as upstream), and DefaultPreemption
at postFilter.
"""

from __future__ import annotations

from eventsched.framework import Features, PluginRef, Profile
from eventsched.framework.features import LEGACY

DEFAULT_SCHEDULER_NAME = "eventsched"


def default_profile(
    scheduler_name: str = DEFAULT_SCHEDULER_NAME, features: Features = LEGACY
) -> Profile:
    """kube-scheduler's default profile under `scheduler_name`, deciding as `features` say."""
    return Profile(
        scheduler_name=scheduler_name,
        features=features,
        plugins={
            "preEnqueue": (PluginRef("SchedulingGates"),),
            "queueSort": (PluginRef("PrioritySort"),),
            "preFilter": (
                PluginRef("NodeAffinity"),
                PluginRef("NodePorts"),
                PluginRef("NodeResourcesFit"),
                PluginRef("VolumeRestrictions"),
                PluginRef("EBSLimits"),
                PluginRef("GCEPDLimits"),
                PluginRef("NodeVolumeLimits"),
                PluginRef("AzureDiskLimits"),
                PluginRef("VolumeBinding"),
                PluginRef("VolumeZone"),
                PluginRef("PodTopologySpread"),
                PluginRef("InterPodAffinity"),
            ),
            "filter": (
                PluginRef("NodeUnschedulable"),
                PluginRef("NodeName"),
                PluginRef("TaintToleration"),
                PluginRef("NodeAffinity"),
                PluginRef("NodePorts"),
                PluginRef("NodeResourcesFit"),
                PluginRef("VolumeRestrictions"),
                PluginRef("EBSLimits"),
                PluginRef("GCEPDLimits"),
                PluginRef("NodeVolumeLimits"),
                PluginRef("AzureDiskLimits"),
                PluginRef("VolumeBinding"),
                PluginRef("VolumeZone"),
                PluginRef("PodTopologySpread"),
                PluginRef("InterPodAffinity"),
            ),
            "postFilter": (PluginRef("DefaultPreemption"),),
            "preScore": (
                PluginRef("TaintToleration"),
                PluginRef("NodeAffinity"),
                PluginRef("VolumeBinding"),
                PluginRef("PodTopologySpread"),
                PluginRef("InterPodAffinity"),
                PluginRef("NodeResourcesBalancedAllocation"),
            ),
            "score": (
                PluginRef("TaintToleration", 3),
                PluginRef("NodeAffinity", 2),
                PluginRef("NodeResourcesFit", 1),
                PluginRef("VolumeBinding", 1),
                PluginRef("PodTopologySpread", 2),
                PluginRef("InterPodAffinity", 2),
                PluginRef("NodeResourcesBalancedAllocation", 1),
                PluginRef("ImageLocality", 1),
            ),
            "reserve": (PluginRef("VolumeBinding"),),
            "preBind": (PluginRef("VolumeBinding"),),
            "bind": (PluginRef("DefaultBinder"),),
        },
    )
