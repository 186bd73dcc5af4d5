"""NodeDeclaredFeatures (plugins/nodedeclaredfeatures.py, model/nodefeatures.py): what a pod's spec
requires, what a node declares, and the Filter at 1.35, 1.36 and 1.37."""

from __future__ import annotations

from typing import Any

import pytest

from eventsched.config.featuregates import features_for
from eventsched.framework import Code, CycleState
from eventsched.model import Node, NodeTable, Pod
from eventsched.model.nodefeatures import (
    RESTART_ALL_CONTAINERS,
    USER_NAMESPACES_HOST_NETWORK,
    VOLUME_BIND_MOUNT_OPTIONS,
    declared_set,
    required_node_features,
)
from tests.plugins.conftest import plugin, run_filter

V137 = features_for("1.37")
RESTART_RULE = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}


def node(name: str, *declared: str) -> Node:
    return Node.from_manifest(
        {"metadata": {"name": name}, "status": {"declaredFeatures": list(declared)}}
    )


def pod(**spec: Any) -> Pod:
    containers = spec.pop("containers", [{"name": "c"}])
    return Pod.from_manifest(
        {"metadata": {"name": "p", "uid": "u"}, "spec": {"containers": containers, **spec}}
    )


# from component-helpers nodedeclaredfeatures/features/restartallcontainers/
# restart_all_containers_test.go: "init container with rules", "regular container with
# rules", "no rules"; user_namespaces_host_network_test.go: "HostNetwork true, HostUsers
# false", "... HostUsers nil", "... HostUsers true", "HostNetwork false, HostUsers false".
@pytest.mark.parametrize(
    ("spec", "required"),
    [
        ({"initContainers": [{"name": "i", "restartPolicyRules": [RESTART_RULE]}]}, True),
        ({"containers": [{"name": "c", "restartPolicyRules": [RESTART_RULE]}]}, True),
        ({"containers": [{"name": "c", "restartPolicy": "Always"}]}, False),
    ],
)
def test_restart_all_containers_is_required_by_a_rule_that_restarts_all(
    spec: dict[str, Any], required: bool
) -> None:
    assert (RESTART_ALL_CONTAINERS in required_node_features(spec)) is required


@pytest.mark.parametrize(
    ("host_network", "host_users", "required"),
    [(True, False, True), (True, None, False), (True, True, False), (False, False, False)],
)
def test_user_namespaces_host_network_needs_both_fields(
    host_network: bool, host_users: bool | None, required: bool
) -> None:
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "hostNetwork": host_network}
    if host_users is not None:
        spec["hostUsers"] = host_users
    assert (USER_NAMESPACES_HOST_NETWORK in required_node_features(spec)) is required


@pytest.mark.parametrize("kind", ["containers", "initContainers", "ephemeralContainers"])
def test_bind_mount_options_on_any_container_require_the_feature(kind: str) -> None:
    mounts = [{"name": "v", "mountPath": "/v", "bindMountOptions": ["rro"]}]
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    spec[kind] = [{"name": "x", "volumeMounts": mounts}]
    assert required_node_features(spec) == (VOLUME_BIND_MOUNT_OPTIONS,)


# from component-helpers nodedeclaredfeatures/featureset_test.go TestFeatureMapper (TryMap):
# "Empty input", "Single valid feature", "Multiple valid features", "All features",
# "Unknown feature (start)", "(middle)", "(end)"; and the walk's unsorted-list blind spot.
@pytest.mark.parametrize(
    ("declared", "found"),
    [
        ([], set()),
        (["a"], {"a"}),
        (["a", "c"], {"a", "c"}),
        (["a", "b", "c", "d"], {"a", "b", "c", "d"}),
        (["0", "a"], {"a"}),
        (["a", "ab", "b"], {"a", "b"}),
        (["d", "e"], {"d"}),
        (["b", "a"], {"b"}),
    ],
)
def test_declared_features_map_onto_the_registry_as_try_map_does(
    declared: list[str], found: set[str]
) -> None:
    assert declared_set(declared, ("a", "b", "c", "d")) == found


# from plugins/nodedeclaredfeatures/nodedeclaredfeatures_test.go TestFilter: "Node matches
# requirements", "Node does not match requirements", "Node with multiple features, pod
# requires subset", "Node has no declared features", "Node with some but not all required
# features".
def test_the_filter_keeps_nodes_that_declare_every_required_feature() -> None:
    table = NodeTable(
        [
            node("match", RESTART_ALL_CONTAINERS),
            node("other", "ExtendWebSocketsToKubelet"),
            node("superset", RESTART_ALL_CONTAINERS, USER_NAMESPACES_HOST_NETWORK),
            node("none"),
            node("some", RESTART_ALL_CONTAINERS),
        ]
    )
    needs = pod(
        containers=[{"name": "c", "restartPolicyRules": [RESTART_RULE]}],
        hostNetwork=True,
        hostUsers=False,
    )
    statuses = run_filter("NodeDeclaredFeatures", needs, table, features=V137)
    reasons = [None if s is None else (s.code, s.message) for s in statuses]
    refused = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't match Pod's required features")
    assert reasons == [refused, refused, None, refused, refused]
    one = pod(containers=[{"name": "c", "restartPolicyRules": [RESTART_RULE]}])
    assert run_filter("NodeDeclaredFeatures", one, table, features=V137)[0] is None


def test_a_pod_requiring_nothing_skips_the_plugin() -> None:
    # TestPreFilter "Pod with no requirements": Skip.
    p = plugin("NodeDeclaredFeatures", features=V137)
    _, status = p.pre_filter(CycleState(), pod(), NodeTable([node("n")]))
    assert status is not None and status.is_skip


def test_the_plugin_disabled_by_its_gate_does_nothing() -> None:
    # TestPreFilter/TestFilter "plugin disabled"; EventsToRegister: none.
    off = features_for("1.36", {"NodeDeclaredFeatures": False})
    needs = pod(containers=[{"name": "c", "restartPolicyRules": [RESTART_RULE]}])
    assert run_filter("NodeDeclaredFeatures", needs, NodeTable([node("n")]), features=off) == [None]
    assert plugin("NodeDeclaredFeatures", features=off).events_to_register() == ()


def test_each_version_requires_only_the_features_it_registers() -> None:
    # component-helpers v0.36 registers no VolumeBindMountOptions, v0.35 no
    # UserNamespacesHostNetworkSupport: a pod needing only those requires nothing there.
    mounts = [{"name": "v", "mountPath": "/v", "bindMountOptions": ["rro"]}]
    needs = pod(containers=[{"name": "c", "volumeMounts": mounts}])
    table = NodeTable([node("n")])
    assert run_filter("NodeDeclaredFeatures", needs, table, features=features_for("1.36")) == [None]
    assert run_filter("NodeDeclaredFeatures", needs, table, features=V137)[0] is not None


def test_1_35_names_what_the_node_lacks() -> None:
    # v1.35.0 Filter: MatchNodeFeatureSet over plain sets, and the unsatisfied names.
    v135 = features_for("1.35", {"NodeDeclaredFeatures": True})
    needs = pod(containers=[{"name": "c", "restartPolicyRules": [RESTART_RULE]}])
    table = NodeTable([node("unsorted", "Z", RESTART_ALL_CONTAINERS), node("none")])
    statuses = run_filter("NodeDeclaredFeatures", needs, table, features=v135)
    assert statuses[0] is None  # a set: the order of the list does not matter
    assert statuses[1] is not None and statuses[1].message == (
        "node declared features check failed - unsatisfied requirements: "
        "RestartAllContainersOnContainerExits"
    )
    # 1.36 on walks the list as sorted: "Z" before "R..." hides the declared feature.
    assert run_filter("NodeDeclaredFeatures", needs, table, features=V137)[0] is not None


def test_a_node_record_keeps_its_declared_features() -> None:
    declared = node("n", RESTART_ALL_CONTAINERS)
    assert Node.from_record(declared.to_record()) == declared
    assert "declaredFeatures" not in node("plain").to_record()
