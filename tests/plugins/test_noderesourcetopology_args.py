"""NodeResourceTopologyMatchArgs and the topology manager's configuration, against
scheduler-plugins v0.28.9: apis/config/v1/defaults_test.go ("empty config
NodeResourceTopologyMatchArgs"), apis/config/validation/validation_plugingargs_test.go
(TestValidateNodeResourceTopologyMatchArgs), pkg/noderesourcetopology/config_test.go
(TestConfigFromAttributes, TestConfigFromPolicies, TestConfigFromNRT) and
pluginhelpers_test.go (TestGetID, TestOnlyNonNUMAResources), with our own values.
"""

from __future__ import annotations

from typing import Any

import pytest

from eventsched.framework import PluginArgsError
from eventsched.plugins import full_registry
from eventsched.plugins.noderesourcetopology.args import TopologyMatchArgs, parse_args
from eventsched.plugins.noderesourcetopology.numa import (
    NUMANode,
    TopologyManagerConfig,
    numa_nodes,
    only_non_numa_resources,
    topology_manager_config,
    zone_id,
)
from eventsched.plugins.noderesourcetopology.topology import NodeResourceTopology
from tests.plugins.nrt import nrt, zone


def test_the_plugin_is_registered() -> None:
    assert "NodeResourceTopologyMatch" in full_registry()


def test_empty_args_default() -> None:
    # upstream: defaults_test.go "empty config NodeResourceTopologyMatchArgs"
    assert parse_args({}) == TopologyMatchArgs("LeastAllocated", (("cpu", 1), ("memory", 1)))


@pytest.mark.parametrize(
    ("raw", "strategy", "resources"),
    [
        ({"type": "MostAllocated"}, "MostAllocated", (("cpu", 1), ("memory", 1))),
        (
            {"type": "BalancedAllocation", "resources": []},
            "BalancedAllocation",
            (("cpu", 1), ("memory", 1)),
        ),
        (
            {
                "type": "LeastNUMANodes",
                "resources": [{"name": "cpu", "weight": 0}, {"name": "x/y", "weight": 5}],
            },
            "LeastNUMANodes",
            (("cpu", 1), ("x/y", 5)),
        ),
        (
            {"type": "LeastAllocated", "resources": [{"name": "memory"}]},
            "LeastAllocated",
            (("memory", 1),),
        ),
    ],
)
def test_scoring_strategy_defaults(raw: dict[str, Any], strategy: str, resources: Any) -> None:
    # upstream: SetDefaults_NodeResourceTopologyMatchArgs (resources default, weight 0 -> 1)
    args = parse_args({"scoringStrategy": raw, "cacheResyncPeriodSeconds": 0})
    assert (args.strategy, args.resources) == (strategy, resources)
    assert dict(args.weights) == dict(resources)


@pytest.mark.parametrize(
    ("args", "field", "message"),
    [
        # upstream: "incorrect config, wrong ScoringStrategy type"
        (
            {"scoringStrategy": {"type": "not existent"}},
            "scoringStrategy.type",
            'Invalid value: "not existent": invalid ScoringStrategyType',
        ),
        # a scoringStrategy without type is not defaulted: "" is invalid
        (
            {"scoringStrategy": {"resources": [{"name": "cpu"}]}},
            "scoringStrategy.type",
            'Invalid value: "": invalid ScoringStrategyType',
        ),
        (
            {"scoringStrategy": "LeastAllocated"},
            "scoringStrategy",
            "must be a map with type and resources",
        ),
        (
            {"scoringStrategy": {"type": "LeastAllocated", "kind": 1}},
            "scoringStrategy.kind",
            "unknown field; scoringStrategy takes type, resources",
        ),
        (
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "cpu", "weight": "2"}],
                }
            },
            "scoringStrategy.resources[0].weight",
            "must be an integer (got '2')",
        ),
        (
            {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "w": 2}]}},
            "scoringStrategy.resources[0].w",
            "unknown field; takes name, weight",
        ),
        (
            {"cacheResyncPeriodSeconds": "5s"},
            "cacheResyncPeriodSeconds",
            "must be an integer number of seconds (got '5s')",
        ),
        (
            {"discardReservedNodes": "yes"},
            "discardReservedNodes",
            "must be true or false (got 'yes')",
        ),
        (
            {"cache": {}},
            "cache",
            "unknown field; NodeResourceTopologyMatch takes scoringStrategy, "
            "cacheResyncPeriodSeconds, discardReservedNodes",
        ),
    ],
)
def test_invalid_args(args: dict[str, Any], field: str, message: str) -> None:
    # upstream: TestValidateNodeResourceTopologyMatchArgs, and strict decoding
    with pytest.raises(PluginArgsError) as caught:
        parse_args(args)
    assert (caught.value.field, caught.value.problem) == (field, message)


@pytest.mark.parametrize("args", [{"cacheResyncPeriodSeconds": 5}, {"discardReservedNodes": True}])
def test_the_caches_eventsched_does_not_implement_are_refused(args: dict[str, Any]) -> None:
    # ours: only the passthrough cache (upstream's default) is implemented
    with pytest.raises(PluginArgsError, match="passthrough"):
        parse_args(args)
    # a negative period is upstream's passthrough too (CacheResyncPeriodSeconds <= 0)
    assert parse_args({"cacheResyncPeriodSeconds": -1}).cache_resync_period_seconds == -1


def topology(
    attributes: list[tuple[str, str]] | None = None, policies: list[str] | None = None
) -> NodeResourceTopology:
    return NodeResourceTopology("n", (), tuple(attributes or ()), tuple(policies or ()))


@pytest.mark.parametrize(
    ("case", "attributes", "policies", "policy", "scope"),
    [
        # TestConfigFromAttributes (on top of the defaults none/container)
        ("nil", None, None, "none", "container"),
        ("no-policy", [("topologyManagerScope", "pod")], None, "none", "pod"),
        ("no-scope", [("topologyManagerPolicy", "restricted")], None, "restricted", "container"),
        (
            "complete-case-1",
            [("topologyManagerPolicy", "best-effort"), ("topologyManagerScope", "pod")],
            None,
            "best-effort",
            "pod",
        ),
        (
            "error-case-1",
            [("topologyManagerPolicy", "bogus"), ("topologyManagerScope", "pod")],
            None,
            "none",
            "pod",
        ),
        (
            "error-case-2",
            [("topologyManagerPolicy", "single-numa-node"), ("topologyManagerScope", "node")],
            None,
            "single-numa-node",
            "container",
        ),
        # TestConfigFromPolicies
        ("single-numa-pod", None, ["SingleNUMANodePodLevel"], "single-numa-node", "pod"),
        (
            "single-numa-container",
            None,
            ["SingleNUMANodeContainerLevel"],
            "single-numa-node",
            "container",
        ),
        ("restricted-container", None, ["RestrictedContainerLevel"], "restricted", "container"),
        (
            "skip-policies",
            None,
            ["BestEffortPodLevel", "SingleNUMANodeContainerLevel"],
            "best-effort",
            "pod",
        ),
        ("error-unknown-policy", None, ["BogusLevel"], "none", "container"),
        # TestConfigFromNRT: attributes override the deprecated policies
        (
            "attributes-overrides-policy-partial",
            [("topologyManagerScope", "container")],
            ["SingleNUMANodePodLevel"],
            "single-numa-node",
            "container",
        ),
        (
            "attributes-overrides-policy-full",
            [("topologyManagerPolicy", "restricted"), ("topologyManagerScope", "container")],
            ["SingleNUMANodePodLevel"],
            "restricted",
            "container",
        ),
        # ours: a later valid attribute wins
        (
            "ours: last wins",
            [("topologyManagerScope", "pod"), ("topologyManagerScope", "container")],
            None,
            "none",
            "container",
        ),
    ],
)
def test_topology_manager_config(
    case: str, attributes: Any, policies: Any, policy: str, scope: str
) -> None:
    assert topology_manager_config(topology(attributes, policies)) == TopologyManagerConfig(
        policy, scope
    )


@pytest.mark.parametrize(
    ("name", "wanted"),
    [
        # TestGetID
        ("node-1", 1),
        ("node-10", 10),
        ("node0", None),
        ("zone-10", None),
        ("node-a10a", None),
        ("node-10a", None),
        ("node-10123412415115114", None),
        # ours: 63 is the last id, 64 is out of range
        ("node-63", 63),
        ("node-64", None),
        ("node- 1", None),
    ],
)
def test_zone_id(name: str, wanted: int | None) -> None:
    assert zone_id(name) == wanted


def test_numa_nodes_take_node_zones_with_valid_ids_and_their_costs() -> None:
    # ours: createNUMANodeList
    t = nrt(
        "n",
        zone(0, {"cpu": 2, "memory": "1Gi"}, {0: 10, 1: 20}),
        {"name": "socket-0", "type": "Socket", "resources": []},
        zone("node-x", {"cpu": 2}),
        zone(1, {"cpu": "1500m", "vendor.com/dev": 3}, {0: 20, 1: 10}),
    )
    assert numa_nodes(t) == [
        NUMANode(0, {"cpu": 2000, "memory": 2**30}, {0: 10, 1: 20}),
        NUMANode(1, {"cpu": 1500, "vendor.com/dev": 3}, {0: 20, 1: 10}),
    ]


def test_only_non_numa_resources() -> None:
    # upstream: TestOnlyNonNUMAResources
    cells = [NUMANode(0, {"cpu": 1, "memory": 1}), NUMANode(1, {"cpu": 1, "vendor.com/nic": 1})]
    assert not only_non_numa_resources(cells, {"cpu": 1})
    assert not only_non_numa_resources(cells, {"vendor.com/nic": 0, "vendor.com/gpu": 1})
    assert only_non_numa_resources(cells, {"vendor.com/gpu": 1, "ephemeral-storage": 1})
    assert only_non_numa_resources(cells, {})
