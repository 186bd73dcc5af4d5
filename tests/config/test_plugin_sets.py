"""Plugin sets resolve as kube-scheduler's v1 defaulting and MultiPoint expansion do."""

from __future__ import annotations

from typing import Any

import pytest

from eventsched.config import default_profile
from eventsched.config.file import ConfigError, parse_config
from eventsched.framework import PluginRef
from eventsched.plugins import full_registry

REGISTRY = full_registry()
HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def resolve(profile: dict[str, Any], **top: Any) -> Any:
    return parse_config({**HEAD, **top, "profiles": [profile]}, "c.yaml", REGISTRY).profiles[0]


def names(refs: tuple[PluginRef, ...]) -> list[str]:
    return [r.name for r in refs]


def test_the_default_multipoint_set_expands_to_the_default_profile() -> None:
    resolved = resolve({"schedulerName": "eventsched"})
    assert dict(resolved.plugins) == dict(default_profile().plugins)


def test_disabling_all_scoring_keeps_filters() -> None:
    # The upstream docs' "no-scoring-scheduler" profile.
    p = resolve(
        {
            "schedulerName": "no-scoring-scheduler",
            "plugins": {
                "preScore": {"disabled": [{"name": "*"}]},
                "score": {"disabled": [{"name": "*"}]},
            },
        }
    )
    assert p.at("score") == () and p.at("preScore") == ()
    assert names(p.at("filter")) == names(default_profile().at("filter"))


def test_a_score_entry_reweights_a_multipoint_default_in_place() -> None:
    p = resolve({"plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}}})
    # An override comes first, then the MultiPoint plugins, as expandMultiPointPlugins orders them.
    assert [(r.name, r.weight) for r in p.at("score")] == [
        ("NodeResourcesFit", 5),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("VolumeBinding", 1),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
    ]


def test_disabled_at_one_point_stays_elsewhere() -> None:
    p = resolve({"plugins": {"score": {"disabled": [{"name": "TaintToleration"}]}}})
    assert "TaintToleration" not in names(p.at("score"))
    assert "TaintToleration" in names(p.at("filter"))
    assert "TaintToleration" in names(p.at("preScore"))


def test_multipoint_disable_removes_a_default_everywhere() -> None:
    p = resolve({"plugins": {"multiPoint": {"disabled": [{"name": "TaintToleration"}]}}})
    assert all("TaintToleration" not in names(refs) for refs in p.plugins.values())


def test_zero_or_missing_weight_means_one() -> None:
    p = resolve(
        {"plugins": {"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": 0}]}}}
    )
    assert dict((r.name, r.weight) for r in p.at("score"))["TaintToleration"] == 1


def test_percentage_profile_wins_over_global() -> None:
    config = parse_config(
        {
            **HEAD,
            "percentageOfNodesToScore": 40,
            "profiles": [
                {"schedulerName": "a"},
                {"schedulerName": "b", "percentageOfNodesToScore": 70},
            ],
        },
        "c.yaml",
        REGISTRY,
    )
    assert [p.percentage_of_nodes_to_score for p in config.profiles] == [40, 70]


def test_plugin_args_reach_the_profile_without_kind() -> None:
    args = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "NodeResourcesFitArgs",
        "scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}]},
    }
    p = resolve({"pluginConfig": [{"name": "NodeResourcesFit", "args": args}]})
    assert p.plugin_args["NodeResourcesFit"] == {"scoringStrategy": args["scoringStrategy"]}


def test_unimplemented_upstream_plugins_may_be_configured_or_disabled_with_a_warning() -> None:
    config = parse_config(
        {
            **HEAD,
            "profiles": [
                {
                    "plugins": {"multiPoint": {"disabled": [{"name": "DynamicResources"}]}},
                    "pluginConfig": [{"name": "DynamicResources", "args": {}}],
                }
            ],
        },
        "c.yaml",
        REGISTRY,
    )
    assert len(config.warnings) == 1
    assert "DynamicResources is not implemented by eventsched yet" in config.warnings[0]
    assert "DynamicResources" not in config.profiles[0].plugin_args


@pytest.mark.parametrize(
    ("profile", "field", "fix"),
    [
        (
            {"plugins": {"multiPoint": {"enabled": [{"name": "DynamicResources"}]}}},
            "profiles[0].plugins.multiPoint.enabled[0].name",
            "does not implement yet",
        ),
        (
            {"plugins": {"score": {"enabled": [{"name": "NodeName"}]}}},
            "profiles[0].plugins.score.enabled[0].name",
            "does not extend score",
        ),
        (
            {"plugins": {"filter": {"disabled": [{"name": "NodeNmae"}]}}},
            "profiles[0].plugins.filter.disabled[0].name",
            "unknown plugin 'NodeNmae'",
        ),
        (
            {"plugins": {"score": {"enabled": [{"name": "NodeAffinity", "weight": "high"}]}}},
            "profiles[0].plugins.score.enabled[0].weight",
            "0..100",
        ),
        (
            {"plugins": {"queueSort": {"disabled": [{"name": "*"}]}}},
            "profiles[0].plugins.queueSort",
            "exactly one queueSort",
        ),
        (
            {"plugins": {"bind": {"disabled": [{"name": "DefaultBinder"}]}}},
            "profiles[0].plugins.bind",
            "at least one bind plugin",
        ),
        (
            {"plugins": {"filtre": {}}},
            "profiles[0].plugins.filtre",
            "unknown field",
        ),
        (
            {"pluginConfig": [{"name": "NodeResourcesFit"}, {"name": "NodeResourcesFit"}]},
            "profiles[0].pluginConfig[1].name",
            "repeated config for plugin NodeResourcesFit",
        ),
        (
            {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"kind": "FitArgs"}}]},
            "profiles[0].pluginConfig[0].args.kind",
            "NodeResourcesFitArgs",
        ),
        (
            {
                "pluginConfig": [
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Most"}}}
                ]
            },
            "profiles[0].pluginConfig[0].args.scoringStrategy.type",
            "",
        ),
        (
            {"plugins": {"multiPoint": {"enabled": [{"name": "TargetLoadPacking"}]}}},
            "profiles[0].plugins.multiPoint.enabled[0].name",
            "TargetLoadPacking is a scheduler-plugins plugin eventsched does not implement; "
            "of scheduler-plugins' it implements CapacityScheduling, Coscheduling",
        ),
        (
            {"pluginConfig": [{"name": "SySched", "args": {}}]},
            "profiles[0].pluginConfig[0].name",
            "SySched is a scheduler-plugins plugin eventsched does not implement",
        ),
        (
            {"pluginConfig": [{"name": "Mystery", "args": {}}]},
            "profiles[0].pluginConfig[0].name",
            "unknown plugin 'Mystery'",
        ),
        (
            {"percentageOfNodesToScore": 101},
            "profiles[0].percentageOfNodesToScore",
            "0..100",
        ),
    ],
)
def test_profile_errors_name_the_path(profile: dict[str, Any], field: str, fix: str) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve(profile)
    assert caught.value.field == field, str(caught.value)
    assert fix in caught.value.problem


def test_all_profiles_share_one_queue_sort() -> None:
    other = {"schedulerName": "b", "plugins": {"queueSort": {"disabled": [{"name": "*"}]}}}
    with pytest.raises(ConfigError, match="queueSort"):
        parse_config({**HEAD, "profiles": [{"schedulerName": "a"}, other]}, "c.yaml", REGISTRY)


@pytest.mark.parametrize(
    ("extenders", "field", "fix"),
    [
        ([{"urlPrefix": "http://e", "prioritizeVerb": "p"}], "extenders[0].weight", "positive"),
        (
            [
                {"urlPrefix": "http://e", "bindVerb": "b"},
                {"urlPrefix": "http://f", "bindVerb": "b"},
            ],
            "extenders",
            "only one extender can implement bind",
        ),
        (
            [{"urlPrefix": "http://e", "httpTimeout": "soon"}],
            "extenders[0].httpTimeout",
            "duration",
        ),
        (
            [{"urlPrefix": "http://e", "managedResources": [{"name": "cpu"}]}],
            "extenders[0].managedResources[0].name",
            "extended resource",
        ),
        (
            [{"urlPrefix": "http://e", "filterVerbs": "f"}],
            "extenders[0].filterVerbs",
            "unknown field",
        ),
    ],
)
def test_extender_errors(extenders: list[dict[str, Any]], field: str, fix: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({**HEAD, "extenders": extenders}, "c.yaml", REGISTRY)
    assert caught.value.field == field
    assert fix in caught.value.problem


def test_a_valid_extender_is_kept() -> None:
    config = parse_config(
        {
            **HEAD,
            "extenders": [
                {
                    "urlPrefix": "http://127.0.0.1:8888/",
                    "filterVerb": "filter",
                    "prioritizeVerb": "prioritize",
                    "weight": 3,
                    "httpTimeout": "5s",
                    "managedResources": [{"name": "example.com/foo", "ignoredByScheduler": True}],
                }
            ],
        },
        "c.yaml",
        REGISTRY,
    )
    (ext,) = config.extenders
    assert (ext.weight, ext.http_timeout, ext.managed_resources[0].name) == (
        3,
        5.0,
        "example.com/foo",
    )
