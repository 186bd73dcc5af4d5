"""TaintToleration, NodeUnschedulable, NodeName, NodeAffinity, SchedulingGates, PrioritySort."""

from __future__ import annotations

import pytest

from eventsched.framework import Code, CycleState, PluginArgsError, QueuedPodInfo
from eventsched.model import NodeTable
from tests.plugins.conftest import make_node, make_pod, plugin, run_filter, run_score

GPU = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
SOFT = {"key": "spot", "value": "true", "effect": "PreferNoSchedule"}


def messages(statuses: list) -> list[str | None]:
    return [None if s is None else s.message for s in statuses]


def test_untolerated_taint_message_and_code() -> None:
    table = NodeTable(
        [make_node("plain"), make_node("gpu", taints=[GPU]), make_node("soft", taints=[SOFT])]
    )
    statuses = run_filter("TaintToleration", make_pod(), table)
    assert messages(statuses) == [None, "node(s) had untolerated taint {dedicated: gpu}", None]
    assert statuses[1].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@pytest.mark.parametrize(
    "toleration",
    [
        {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
        {"key": "dedicated", "operator": "Exists"},
        {"operator": "Exists"},
    ],
)
def test_tolerations_that_match(toleration: dict) -> None:
    table = NodeTable([make_node("gpu", taints=[GPU])])
    assert messages(run_filter("TaintToleration", make_pod(tolerations=[toleration]), table)) == [
        None
    ]


@pytest.mark.parametrize(
    "toleration",
    [
        {"key": "dedicated", "operator": "Equal", "value": "cpu"},
        {"key": "dedicated", "operator": "Exists", "effect": "NoExecute"},
        {"key": "other", "operator": "Exists"},
    ],
)
def test_tolerations_that_do_not_match(toleration: dict) -> None:
    table = NodeTable([make_node("gpu", taints=[GPU])])
    assert messages(run_filter("TaintToleration", make_pod(tolerations=[toleration]), table)) != [
        None
    ]


def test_prefer_no_schedule_scores_reversed() -> None:
    table = NodeTable(
        [
            make_node("plain"),
            make_node("soft", taints=[SOFT]),
            make_node("softer", taints=[SOFT, {**SOFT, "key": "b"}]),
        ]
    )
    raw, normalized = run_score("TaintToleration", make_pod(), table)
    assert raw == [0, 1, 2] and normalized == [100, 50, 0]
    tolerant = make_pod(
        tolerations=[{"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"}]
    )
    assert run_score("TaintToleration", tolerant, table)[0] == [0, 0, 1]


def test_cordoned_nodes() -> None:
    table = NodeTable([make_node("a"), make_node("cordoned", unschedulable=True)])
    statuses = run_filter("NodeUnschedulable", make_pod(), table)
    assert messages(statuses) == [None, "node(s) were unschedulable"]
    assert statuses[1].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    tolerant = make_pod(
        tolerations=[
            {
                "key": "node.kubernetes.io/unschedulable",
                "operator": "Exists",
                "effect": "NoSchedule",
            }
        ]
    )
    assert messages(run_filter("NodeUnschedulable", tolerant, table)) == [None, None]


def test_node_name() -> None:
    table = NodeTable([make_node("a"), make_node("b")])
    assert messages(run_filter("NodeName", make_pod(nodeName="b"), table)) == [
        "node(s) didn't match the requested node name",
        None,
    ]
    assert messages(run_filter("NodeName", make_pod(), table)) == [None, None]


ZONES = [
    make_node("a1", labels={"zone": "a", "gen": "3"}),
    make_node("b1", labels={"zone": "b", "gen": "5"}),
    make_node("c1", labels={"zone": "c"}),
]
NOT_MATCHED = "node(s) didn't match Pod's node affinity/selector"


def affinity(*expressions: dict, fields: list | None = None) -> dict:
    term: dict = {"matchExpressions": list(expressions)}
    if fields:
        term["matchFields"] = fields
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }


@pytest.mark.parametrize(
    ("spec", "passing"),
    [
        ({"nodeSelector": {"zone": "b"}}, ["b1"]),
        (
            {"affinity": affinity({"key": "zone", "operator": "In", "values": ["a", "c"]})},
            ["a1", "c1"],
        ),
        (
            {"affinity": affinity({"key": "zone", "operator": "NotIn", "values": ["a"]})},
            ["b1", "c1"],
        ),
        ({"affinity": affinity({"key": "gen", "operator": "Exists"})}, ["a1", "b1"]),
        ({"affinity": affinity({"key": "gen", "operator": "DoesNotExist"})}, ["c1"]),
        ({"affinity": affinity({"key": "gen", "operator": "Gt", "values": ["4"]})}, ["b1"]),
        ({"affinity": affinity({"key": "gen", "operator": "Lt", "values": ["4"]})}, ["a1"]),
        (
            {
                "affinity": affinity(
                    fields=[{"key": "metadata.name", "operator": "In", "values": ["c1"]}]
                )
            },
            ["c1"],
        ),
        (
            {
                "nodeSelector": {"zone": "a"},
                "affinity": affinity({"key": "gen", "operator": "Gt", "values": ["4"]}),
            },
            [],
        ),
        ({}, ["a1", "b1", "c1"]),
    ],
)
def test_node_affinity_filter(spec: dict, passing: list[str]) -> None:
    table = NodeTable(ZONES)
    statuses = run_filter("NodeAffinity", make_pod(**spec), table)
    assert [n.name for n, s in zip(ZONES, statuses, strict=True) if s is None] == passing
    assert all(s.message == NOT_MATCHED for s in statuses if s is not None)


def _named(*names: str) -> dict:
    """One required term ANDing `metadata.name In [name]` per name (the API allows one value)."""
    return {
        "matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]} for n in names]
    }


# upstream node_affinity_test.go TestNodeAffinity's PreFilter results: the union over terms of
# each term's intersection of names; a term without a name requirement leaves every node.
@pytest.mark.parametrize(
    ("terms", "names", "message"),
    [
        ([_named("a1"), _named("b1")], {"a1", "b1"}, None),
        ([_named("a1", "a1"), _named("b1", "c1")], {"a1"}, None),
        ([_named("a1", "b1"), _named("b1", "c1")], None, "pod affinity terms conflict"),
        (
            [_named("a1", "b1"), {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}],
            "all",
            None,
        ),
    ],
)
def test_node_affinity_prefilter_names(terms: list, names: object, message: str | None) -> None:
    pod = make_pod(
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
            }
        }
    )
    result, status = plugin("NodeAffinity").pre_filter(CycleState(), pod, NodeTable(ZONES))
    if message is not None:
        assert result is None and status is not None
        assert (status.code, status.message) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)
    elif names == "all":
        assert result is None and status is None
    else:
        assert status is None and result is not None and result.node_names == names


def test_node_affinity_preferred_scores() -> None:
    table = NodeTable(ZONES)
    preferred = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 10,
                    "preference": {
                        "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]
                    },
                },
                {
                    "weight": 30,
                    "preference": {"matchExpressions": [{"key": "gen", "operator": "Exists"}]},
                },
            ]
        }
    }
    raw, normalized = run_score("NodeAffinity", make_pod(affinity=preferred), table)
    assert raw == [40, 30, 0] and normalized == [100, 75, 0]


def test_node_affinity_bad_args() -> None:
    with pytest.raises(PluginArgsError):
        plugin("NodeAffinity", {"unknown": 1})


def test_scheduling_gates_hold_the_pod() -> None:
    gates = plugin("SchedulingGates")
    status = gates.pre_enqueue(make_pod(schedulingGates=[{"name": "a"}, {"name": "b"}]))
    assert status.message == "waiting for scheduling gates: [a b]"
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert gates.pre_enqueue(make_pod()) is None


def test_priority_sort() -> None:
    sort = plugin("PrioritySort")
    high = QueuedPodInfo(make_pod("high", priority=1000), timestamp=5.0, sequence=2)
    early = QueuedPodInfo(make_pod("early"), timestamp=1.0, sequence=0)
    late = QueuedPodInfo(make_pod("late"), timestamp=2.0, sequence=1)
    assert sort.less(high, early) and not sort.less(early, high)
    assert sort.less(early, late) and not sort.less(late, early)


def test_default_binder_without_a_binder_is_an_error() -> None:
    from eventsched.framework import CycleState

    status = plugin("DefaultBinder").bind(CycleState(), make_pod(), "a")
    assert status.code == Code.ERROR and "no binder" in status.message
