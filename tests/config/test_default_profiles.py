"""The default profile at each version (config/upstreamplugins.py, config/defaults.py): upstream's
MultiPoint set in upstream's order with its weights, less what eventsched does not implement
(named), and plugin names a version's kube-scheduler does not have refused naming the version."""

from __future__ import annotations

from pathlib import Path

import pytest

from eventsched.cli.main import main
from eventsched.config.defaults import default_profile
from eventsched.config.featuregates import SUPPORTED, features_for
from eventsched.config.file import load_config, read_config
from eventsched.config.pluginsets import defaults, expand
from eventsched.config.types import ConfigError
from eventsched.config.upstreamplugins import left_out, upstream_default_multi_point
from eventsched.framework import Features, Handle, implements
from eventsched.plugins import full_registry

#: `getDefaultPlugins` + `applyFeatureGates` (pkg/scheduler/apis/config/v1/default_plugins.go)
#: with each version's default gates: (name, weight), 0 for none. v1.28 appends
#: SchedulingGates (PodSchedulingReadiness); eventsched lists it first (PreEnqueue only).
UPSTREAM = {
    "1.28": [
        ("SchedulingGates", 0),
        ("PrioritySort", 0),
        ("NodeUnschedulable", 0),
        ("NodeName", 0),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodePorts", 0),
        ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0),
        ("EBSLimits", 0),
        ("GCEPDLimits", 0),
        ("NodeVolumeLimits", 0),
        ("AzureDiskLimits", 0),
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("DefaultBinder", 0),
    ],
    "1.34": [
        ("SchedulingGates", 0),
        ("PrioritySort", 0),
        ("NodeUnschedulable", 0),
        ("NodeName", 0),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodePorts", 0),
        ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0),
        ("NodeVolumeLimits", 0),
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DynamicResources", 0),
        ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("DefaultBinder", 0),
    ],
    "1.37": [
        ("SchedulingGates", 0),
        ("PrioritySort", 0),
        ("NodeName", 0),
        ("NodeUnschedulable", 0),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodePorts", 0),
        ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0),
        ("NodeVolumeLimits", 0),
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DynamicResources", 2),
        ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("DefaultBinder", 0),
        ("NodeDeclaredFeatures", 0),
    ],
}
NOT_IMPLEMENTED = {"1.28": (), "1.34": ("DynamicResources",), "1.37": ("DynamicResources",)}


@pytest.mark.parametrize("version", sorted(UPSTREAM))
def test_the_default_set_is_upstreams_in_upstreams_order_with_its_weights(version: str) -> None:
    features = features_for(version)
    assert [(p.name, p.weight) for p in upstream_default_multi_point(features)] == (
        UPSTREAM[version]
    )
    assert left_out(features) == NOT_IMPLEMENTED[version]
    ours = [(e.name, e.weight or 0) for e in defaults(features).at("multiPoint").enabled]
    assert ours == [p for p in UPSTREAM[version] if p[0] not in NOT_IMPLEMENTED[version]]


def _expanded_with_the_plugins(features: Features) -> dict[str, object]:
    registry = full_registry()

    def implements_at(name: str, point: str) -> bool:
        return implements(registry.factory(name)({}, Handle(), features), point)

    return dict(expand(defaults(features), implements_at))


@pytest.mark.parametrize("version", SUPPORTED)
def test_the_hand_written_points_are_the_plugins_own_at_every_version(version: str) -> None:
    features = features_for(version)
    assert dict(default_profile(features=features).plugins) == (
        _expanded_with_the_plugins(features)
    )


def test_the_gates_add_and_remove_default_plugins() -> None:
    # applyFeatureGates: DynamicResourceAllocation at 1.28 inserts DynamicResources (no
    # weight) before DefaultPreemption; NodeDeclaredFeatures off at 1.36 leaves it out.
    dra = features_for("1.28", {"DynamicResourceAllocation": True})
    names = [p.name for p in upstream_default_multi_point(dra)]
    assert names[names.index("DefaultPreemption") - 1] == "DynamicResources"
    assert left_out(dra) == ("DynamicResources",)
    on = features_for("1.36")
    off = features_for("1.36", {"NodeDeclaredFeatures": False})
    assert "NodeDeclaredFeatures" in default_profile(features=on).plugin_names()
    assert "NodeDeclaredFeatures" not in default_profile(features=off).plugin_names()
    # The workload gates add plugins eventsched lacks: named, left out.
    workload = features_for("1.37", {"GenericWorkload": True})
    assert left_out(workload) == ("DynamicResources", "GangScheduling")


def test_node_name_precedes_node_unschedulable_from_1_37() -> None:
    # default_plugins.go v1.37.2 lists NodeName first: its Filter's status is the node's.
    assert default_profile(features=features_for("1.36")).at("filter")[0].name == (
        "NodeUnschedulable"
    )
    assert default_profile(features=features_for("1.37")).at("filter")[0].name == "NodeName"


def _write(tmp_path: Path, plugins: str, plugin_config: str = "") -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- schedulerName: s\n"
        f"  plugins: {plugins}\n" + (f"  pluginConfig: {plugin_config}\n" if plugin_config else "")
    )
    return path


def test_a_plugin_the_version_does_not_have_is_refused_naming_the_version(
    tmp_path: Path,
) -> None:
    path = _write(tmp_path, "{filter: {enabled: [{name: EBSLimits}]}}")
    load_config(path, full_registry(), features_for("1.31"))  # 1.31 still has it
    with pytest.raises(ConfigError) as refused:
        load_config(path, full_registry(), features_for("1.37"))
    assert refused.value.field == "profiles[0].plugins.filter.enabled[0].name"
    assert refused.value.problem.startswith(
        "kube-scheduler 1.37 has no plugin EBSLimits (kube-scheduler 1.28 to 1.31 had it)"
    )
    assert "\n" not in str(refused.value)
    ndf = _write(tmp_path, "{multiPoint: {enabled: [{name: NodeDeclaredFeatures}]}}")
    with pytest.raises(ConfigError, match=r"kube-scheduler 1\.34 has no plugin NodeDeclared"):
        load_config(ndf, full_registry(), features_for("1.34"))
    args = _write(tmp_path, "{}", "[{name: CinderLimits, args: {}}]")
    with pytest.raises(ConfigError, match=r"kube-scheduler 1\.34 has no plugin CinderLimits"):
        load_config(args, full_registry(), features_for("1.34"))


def test_disabling_a_plugin_the_version_does_not_have_changes_nothing(tmp_path: Path) -> None:
    path = _write(tmp_path, "{multiPoint: {disabled: [{name: EBSLimits}, {name: GCEPDLimits}]}}")
    config = load_config(path, full_registry(), features_for("1.37"))
    assert dict(config.profiles[0].plugins) == dict(
        default_profile("s", features_for("1.37")).plugins
    )


def test_the_default_profile_says_what_it_runs_without(tmp_path: Path) -> None:
    features = features_for("1.37")
    config = read_config(None, full_registry(), features)
    assert config.warnings == ()
    assert config.notes == (
        "the default profile: kube-scheduler 1.37's default profile has DynamicResources, "
        "which eventsched does not implement yet: the profile runs without it (disable it "
        "in plugins.multiPoint to say so)",
    )
    assert read_config(None, full_registry(), features_for("1.28")).notes == ()
    silent = _write(tmp_path, "{multiPoint: {disabled: [{name: DynamicResources}]}}")
    assert load_config(silent, full_registry(), features).notes == ()
    said = _write(tmp_path, "{}")
    (note,) = load_config(said, full_registry(), features).notes
    assert note.startswith(f"{said}: profiles[0]: kube-scheduler 1.37's default profile")


def test_config_check_says_it_in_a_comment_that_loads_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "{}")
    assert main(["config", "check", str(path), "--kubernetes-version", "1.37"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    first, second = out.splitlines()[:2]
    assert first.startswith("# deciding as Kubernetes 1.37; feature gates eventsched reads: ")
    assert "PodLevelResources=true" in first
    assert second.startswith(f"# {path}: profiles[0]: kube-scheduler 1.37's default profile has ")
    again = tmp_path / "again.yaml"
    again.write_text(out)
    load_config(again, full_registry(), features_for("1.37"))
