"""kube-scheduler's in-tree plugins by version: its default MultiPoint set, and which it has.

`upstream_default_multi_point` is `getDefaultPlugins` and `applyFeatureGates` of
`pkg/scheduler/apis/config/v1/default_plugins.go` at the version and gates `features`
name, read from each release's source (v1.28.0 to v1.37.2):

- 1.28 to 1.30: the in-tree volume limits EBSLimits, GCEPDLimits and AzureDiskLimits
  around NodeVolumeLimits; 1.31 leaves them out of the default set, 1.32 unregisters them
  (`nodevolumelimits/non_csi.go` deleted; v1 configuration refuses them since).
- 1.30 on: SchedulingGates heads the list (1.28 and 1.29 append it under
  PodSchedulingReadiness, on by default; eventsched lists it first at every version: it
  serves PreEnqueue alone, where the order is not seen).
- 1.37: NodeName before NodeUnschedulable (the order their Filters' statuses take).
- DynamicResourceAllocation (on from 1.34): DynamicResources right before
  DefaultPreemption, weight 2 from 1.35 (it has a Score there), none before.
- NodeDeclaredFeatures (on from 1.36): NodeDeclaredFeatures appended; the gates of the
  workload plugins (off by default) append theirs, DeferredPodScheduling goes before
  NodeResourcesFit.

The set includes the plugins eventsched does not implement (`NOT_IMPLEMENTED`):
`config.pluginsets.defaults` leaves them out, and `left_out` names them so that a
configuration can say what its default profile lacks (`SchedulerConfig.notes`: a
comment at the head of `config check`'s output, a line of `run`'s log). GangScheduling is keyed by
GenericWorkload at every version: 1.35 and 1.36 read a gate named GangScheduling, which
the gate table (from the 1.37 binary's) does not know.
"""

from __future__ import annotations

from eventsched.framework import Features, PluginRef

#: kube-scheduler v1.28's default MultiPoint set (`getDefaultPlugins`), with weights, as
#: eventsched has always listed it (SchedulingGates first; see the module).
DEFAULT_MULTI_POINT: tuple[PluginRef, ...] = (
    PluginRef("SchedulingGates"),
    PluginRef("PrioritySort"),
    PluginRef("NodeUnschedulable"),
    PluginRef("NodeName"),
    PluginRef("TaintToleration", 3),
    PluginRef("NodeAffinity", 2),
    PluginRef("NodePorts"),
    PluginRef("NodeResourcesFit", 1),
    PluginRef("VolumeRestrictions"),
    PluginRef("EBSLimits"),
    PluginRef("GCEPDLimits"),
    PluginRef("NodeVolumeLimits"),
    PluginRef("AzureDiskLimits"),
    PluginRef("VolumeBinding"),
    PluginRef("VolumeZone"),
    PluginRef("PodTopologySpread", 2),
    PluginRef("InterPodAffinity", 2),
    PluginRef("DefaultPreemption"),
    PluginRef("NodeResourcesBalancedAllocation", 1),
    PluginRef("ImageLocality", 1),
    PluginRef("DefaultBinder"),
)

IN_TREE_VOLUME_LIMITS = ("EBSLimits", "GCEPDLimits", "AzureDiskLimits")

#: kube-scheduler plugins eventsched does not have yet (docs/status.md).
#: Disabling one is accepted (it never runs); configuring one is a warning;
#: enabling one is an error, because the profile would not do what it says.
NOT_IMPLEMENTED: frozenset[str] = frozenset(
    {
        "DynamicResources",
        "GangScheduling",
        "TopologyPlacementGenerator",
        "PodGroupPodsCount",
        "DeferredPodScheduling",
    }
)

#: In-tree plugins not every version eventsched decides as registers (`NewInTreeRegistry`
#: of `pkg/scheduler/framework/plugins/registry.go`): name to the first and last minor
#: version that has it (None: still there in 1.37).
VERSIONS_OF: dict[str, tuple[int, int | None]] = {
    "EBSLimits": (28, 31),
    "GCEPDLimits": (28, 31),
    "AzureDiskLimits": (28, 31),
    "CinderLimits": (28, 31),
    "NodeDeclaredFeatures": (35, None),
    "GangScheduling": (35, None),
    "TopologyPlacementGenerator": (36, None),
    "PodGroupPodsCount": (36, None),
    "DeferredPodScheduling": (37, None),
}


def upstream_default_multi_point(features: Features) -> tuple[PluginRef, ...]:
    """kube-scheduler's default MultiPoint set at `features.version` with its gates, the
    plugins eventsched lacks included (see the module)."""
    plugins = list(DEFAULT_MULTI_POINT)
    if features.since("1.31"):
        plugins = [p for p in plugins if p.name not in IN_TREE_VOLUME_LIMITS]
    if features.since("1.37"):
        names = [p.name for p in plugins]
        i, j = names.index("NodeUnschedulable"), names.index("NodeName")
        plugins[i], plugins[j] = plugins[j], plugins[i]
    if features.since("1.35") and features.node_declared_features:
        plugins.append(PluginRef("NodeDeclaredFeatures"))
    if features.since("1.37") and features.in_place_pod_vertical_scaling_scheduler_preemption:
        _insert_before(plugins, "NodeResourcesFit", PluginRef("DeferredPodScheduling"))
    if features.dynamic_resource_allocation:
        weight = 2 if features.since("1.35") else 0
        _insert_before(plugins, "DefaultPreemption", PluginRef("DynamicResources", weight))
    if features.since("1.35") and features.generic_workload:
        plugins.append(PluginRef("GangScheduling"))
    if features.since("1.36") and features.topology_aware_workload_scheduling:
        plugins += [PluginRef("TopologyPlacementGenerator"), PluginRef("PodGroupPodsCount", 1)]
    return tuple(plugins)


def _insert_before(plugins: list[PluginRef], anchor: str, plugin: PluginRef) -> None:
    """`slices.Insert` before `anchor`, or at the end when the set lacks it."""
    names = [p.name for p in plugins]
    plugins.insert(names.index(anchor) if anchor in names else len(plugins), plugin)


def left_out(features: Features) -> tuple[str, ...]:
    """The plugins of kube-scheduler's default profile at `features` eventsched lacks."""
    return tuple(p.name for p in upstream_default_multi_point(features) if not_implemented(p))


def not_implemented(plugin: PluginRef) -> bool:
    return plugin.name in NOT_IMPLEMENTED


def has_plugin(name: str, features: Features) -> bool:
    """Whether kube-scheduler at `features.version` registers the in-tree plugin `name`
    (True for every name not in VERSIONS_OF: eventsched's own, and those every version has)."""
    span = VERSIONS_OF.get(name)
    if span is None:
        return True
    first, last = span
    minor = int(features.version.split(".")[1])
    return first <= minor and (last is None or minor <= last)


def absent_plugin_problem(name: str, features: Features) -> str:
    """Why a configuration at `features.version` may not name `name`, in one line."""
    first, last = VERSIONS_OF[name]
    if last is None:
        span = f"kube-scheduler 1.{first} and later have it"
    else:
        span = f"kube-scheduler 1.{first} to 1.{last} had it"
    return (
        f"kube-scheduler {features.version} has no plugin {name} ({span}); remove it, or "
        f"decide as a version that has it (--kubernetes-version)"
    )


def left_out_notes(
    features: Features, where: str, disabled: frozenset[str] = frozenset()
) -> tuple[str, ...]:
    """What kube-scheduler's default profile at `features` has and `where` runs without,
    because eventsched does not implement it (DynamicResources from 1.34); none for what
    its `plugins.multiPoint` disables. `config check` prints them, `run` logs them."""
    if "*" in disabled:
        return ()
    return tuple(
        f"{where}: kube-scheduler {features.version}'s default profile has {name}, which "
        f"eventsched does not implement yet: the profile runs without it (disable it in "
        f"plugins.multiPoint to say so)"
        for name in left_out(features)
        if name not in disabled
    )
