"""Kubernetes versions and kube-scheduler's feature gates: parsing, per-version defaults,
refusals (eventsched/config/featuregates.py), and what a profile's record keeps of them."""

from __future__ import annotations

import pytest

from eventsched.config.featuregates import (
    SUPPORTED,
    VersionError,
    effective_gates,
    features_for,
    gate_specs,
    graduated,
    parse_feature_gates,
    parse_version,
)
from eventsched.config.file import read_config
from eventsched.framework import Features, Profile
from eventsched.framework.features import LEGACY
from eventsched.plugins import full_registry


@pytest.mark.parametrize(
    ("text", "minor"),
    [("1.37", "1.37"), ("v1.37.2", "1.37"), ("1.34.4", "1.34"), ("v1.32.9-eks-4f4795d", "1.32")],
)
def test_a_version_is_its_minor(text: str, minor: str) -> None:
    assert parse_version(text) == minor


@pytest.mark.parametrize("text", ["1.27", "1.38", "v2.0.0"])
def test_a_version_outside_the_range_is_refused_naming_the_range(text: str) -> None:
    with pytest.raises(VersionError) as refused:
        parse_version(text)
    message = str(refused.value)
    assert message.startswith("--kubernetes-version: Kubernetes ")
    assert f"decides as Kubernetes {SUPPORTED[0]} to {SUPPORTED[-1]}" in message


@pytest.mark.parametrize("text", ["", "latest", "1", "1.x"])
def test_a_version_that_is_none_is_refused(text: str) -> None:
    with pytest.raises(VersionError, match=r"is not a Kubernetes version; give one such as 1\.37"):
        parse_version(text)


def test_feature_gates_read_as_kube_scheduler_reads_them() -> None:
    # Go's strconv.ParseBool spellings, spaces around pairs, an empty pair.
    assert parse_feature_gates("A=true, B=F,,C=1 , D=False") == {
        "A": True,
        "B": False,
        "C": True,
        "D": False,
    }


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("PodLevelResources", "malformed pair 'PodLevelResources', expect Name=true|false"),
        ("PodLevelResources=yes", "invalid value of PodLevelResources: 'yes'"),
    ],
)
def test_a_malformed_gate_is_refused(text: str, problem: str) -> None:
    with pytest.raises(VersionError, match=problem):
        parse_feature_gates(text)


def test_an_unknown_gate_is_refused_with_kube_schedulers_words() -> None:
    with pytest.raises(VersionError) as refused:
        effective_gates("1.37", {"PodLevelResource": True})
    assert "unrecognized feature gate: PodLevelResource" in str(refused.value)


def test_a_locked_gate_cannot_be_set_against_its_lock() -> None:
    # InPlacePodVerticalScaling went GA and locked in 1.35 (pkg/features/kube_features.go).
    with pytest.raises(VersionError) as refused:
        effective_gates("1.37", {"InPlacePodVerticalScaling": False})
    assert (
        "cannot set feature gate InPlacePodVerticalScaling to false, feature is locked to true"
        in (str(refused.value))
    )
    # Set to its locked value, it is accepted; before the lock, either value is.
    assert effective_gates("1.37", {"InPlacePodVerticalScaling": True})["InPlacePodVerticalScaling"]
    assert not effective_gates("1.34", {"InPlacePodVerticalScaling": False})[
        "InPlacePodVerticalScaling"
    ]


@pytest.mark.parametrize(
    ("version", "pod_level", "resize"),
    [
        # PodLevelResources: alpha 1.32, beta (on) 1.34; InPlacePodVerticalScaling: alpha
        # 1.27, beta (on) 1.33, GA 1.35 (pkg/features/kube_features.go, v1.37.2).
        ("1.28", False, False),
        ("1.32", False, False),
        ("1.33", False, True),
        ("1.34", True, True),
        ("1.37", True, True),
    ],
)
def test_each_version_takes_upstreams_defaults(version: str, pod_level: bool, resize: bool) -> None:
    features = features_for(version)
    assert features.version == version
    assert features.pod_level_resources is pod_level
    assert features.in_place_pod_vertical_scaling is resize


def test_a_gate_unknown_before_its_version_is_unknown_at_it() -> None:
    assert "NodeDeclaredFeatures" in gate_specs("1.35")
    assert "NodeDeclaredFeatures" not in gate_specs("1.34")
    with pytest.raises(VersionError, match="unrecognized feature gate: NodeDeclaredFeatures"):
        effective_gates("1.34", {"NodeDeclaredFeatures": True})


def test_all_beta_turns_every_unlocked_beta_gate() -> None:
    gates = effective_gates("1.34", {"AllBeta": False})
    assert gates["PodLevelResources"] is False
    assert effective_gates("1.34", {"AllBeta": False, "PodLevelResources": True})[
        "PodLevelResources"
    ]


def test_features_override_the_versions_defaults() -> None:
    features = features_for("1.37", {"PodLevelResources": False})
    assert features.pod_level_resources is False
    assert features.in_place_pod_vertical_scaling is True


def test_a_profile_record_keeps_the_version_and_gates_and_replay_reads_them_back() -> None:
    features = features_for("1.37", {"PodLevelResources": False})
    profile = Profile("p", features=features)
    record = profile.to_record()
    assert record["kubernetesVersion"] == "1.37"
    assert record["featureGates"]["PodLevelResources"] is False
    assert Profile.from_record(record) == profile


def test_a_record_without_a_version_decides_as_v1_28() -> None:
    legacy = Profile("p")
    record = legacy.to_record()
    # What a log written before versions holds: no version, no gates, the same digest.
    assert "kubernetesVersion" not in record and "featureGates" not in record
    assert Profile.from_record(record).features == LEGACY
    assert Features.from_record({"kubernetesVersion": "1.37", "featureGates": {"Nope": True}}) == (
        LEGACY.with_gates("1.37", {})
    )


def test_every_profile_of_a_configuration_decides_as_its_version(tmp_path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: a\n- schedulerName: b\n"
    )
    features = features_for("1.34")
    config = read_config(path, full_registry(), features)
    assert config.features == features
    assert {p.features for p in config.profiles} == {features}
    default = read_config(None, full_registry(), features)
    assert [p.features for p in default.profiles] == [features]


@pytest.mark.parametrize(
    ("version", "sidecars", "pod_level_resize"),
    [
        # SidecarContainers: alpha 1.28, beta (on) 1.29, GA locked 1.33, gone by 1.37 (then
        # always on: graduated). InPlacePodLevelResourcesVerticalScaling: alpha 1.35, beta
        # (on) 1.36 (pkg/features/kube_features.go, v1.34.4 and v1.37.2).
        ("1.28", False, False),
        ("1.29", True, False),
        ("1.34", True, False),
        ("1.35", True, False),
        ("1.36", True, True),
        ("1.37", True, True),
    ],
)
def test_the_accounting_gates_take_upstreams_defaults(
    version: str, sidecars: bool, pod_level_resize: bool
) -> None:
    features = features_for(version)
    assert features.sidecar_containers is sidecars
    assert features.in_place_pod_level_resources_vertical_scaling is pod_level_resize


def test_a_gate_removed_after_ga_is_on_and_cannot_be_set() -> None:
    assert "SidecarContainers" not in gate_specs("1.37")
    assert graduated("SidecarContainers", "1.37")
    assert not graduated("SidecarContainers", "1.34")  # still a gate there
    assert not graduated("InPlacePodLevelResourcesVerticalScaling", "1.34")  # not yet one
    with pytest.raises(VersionError, match="unrecognized feature gate: SidecarContainers"):
        features_for("1.37", {"SidecarContainers": False})
