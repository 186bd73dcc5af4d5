"""What the node filters say and serve at 1.34 and 1.37 (TaintToleration, NodeName,
NodeUnschedulable), v1.28's unchanged (tests/plugins/test_filters.py)."""

from __future__ import annotations

import pytest

from eventsched.config.featuregates import features_for
from eventsched.framework import Code, CycleState, PreFilterResult, implements
from eventsched.model import NodeTable
from tests.plugins.conftest import make_node, make_pod, plugin, run_filter

GPU = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
EDGE = {"key": "edge", "value": "", "effect": "NoExecute"}


@pytest.mark.parametrize("version", ["1.34", "1.37"])
def test_an_untolerated_taint_is_no_longer_named(version: str) -> None:
    # tainttoleration/taint_toleration.go v1.34.4 and v1.37.2 Filter: one constant reason
    # (kubernetes#134740), UnschedulableAndUnresolvable as before.
    table = NodeTable(
        [make_node("plain"), make_node("gpu", taints=[GPU]), make_node("edge", taints=[EDGE])]
    )
    statuses = run_filter("TaintToleration", make_pod(), table, features=features_for(version))
    assert statuses[0] is None
    for status in statuses[1:]:
        assert status is not None
        assert (status.code, status.message) == (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "node(s) had untolerated taint(s)",
        )


def test_1_33_still_names_the_taint() -> None:
    table = NodeTable([make_node("gpu", taints=[GPU])])
    (status,) = run_filter("TaintToleration", make_pod(), table, features=features_for("1.33"))
    assert status is not None and status.message == "node(s) had untolerated taint {dedicated: gpu}"


@pytest.mark.parametrize("name", ["NodeName", "NodeUnschedulable", "TaintToleration"])
def test_three_filters_gain_a_prefilter_in_1_37(name: str) -> None:
    # default_plugins.go v1.37.2: each has PreFilter (node_name.go, node_unschedulable.go,
    # taint_toleration.go), so the default profile's preFilter point lists them.
    assert not implements(plugin(name, features=features_for("1.36")), "preFilter")
    at_137 = plugin(name, features=features_for("1.37"))
    assert implements(at_137, "preFilter")
    assert at_137.pre_filter(CycleState(), make_pod(), NodeTable([make_node("a")])) == (None, None)


def test_node_names_prefilter_names_the_pods_node() -> None:
    # node_name.go v1.37.2 PreFilter: PreFilterResult{NodeNames: {spec.nodeName}}.
    p = plugin("NodeName", features=features_for("1.37"))
    table = NodeTable([make_node("a"), make_node("b")])
    result, status = p.pre_filter(CycleState(), make_pod(nodeName="b"), table)
    assert (result, status) == (PreFilterResult(frozenset({"b"})), None)
