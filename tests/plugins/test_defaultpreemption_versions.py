"""DefaultPreemption's PostFilter as each version runs it (eventsched/plugins/defaultpreemption).

Ported from v1.37.2 pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go
`TestPostFilter` (the cases on resources and priorities; v1.34.4's table is the same but
for the success message): NodeResourcesFit at PreFilter and Filter, PreFilter run first,
then the plugin's PostFilter over the case's `filteredNodesStatuses`. A node the case
gives no status has, from v1.34, the absent status (UnschedulableAndUnresolvable); at
v1.28 it has none, and preemption tries it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from eventsched.framework import (
    Code,
    CycleState,
    Features,
    Framework,
    Handle,
    PluginRef,
    PostFilterResult,
    Profile,
    Status,
)
from eventsched.framework.diagnosis import DEFAULT_ABSENT
from eventsched.model import NodeTable, Pod
from eventsched.plugins import in_tree_registry
from eventsched.plugins.defaultpreemption import placement_message
from tests.plugins.preemption import HIGH, LARGE, LOW, MID, ONE_POD, node, pod

V128, V134, V137 = Features(), Features(version="1.34"), Features(version="1.37")
U = Status(Code.UNSCHEDULABLE)
UU = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
NODE_RES = {"cpu": "200m", "memory": "400"}


def post_filter(
    features: Features,
    preemptor: Pod,
    pods: Sequence[Pod],
    nodes: Mapping[str, Mapping[str, str]],
    explicit: Mapping[str, Status],
) -> tuple[PostFilterResult | None, Status]:
    table = NodeTable([node(name, capacity) for name, capacity in nodes.items()])
    table.add_pods(list(pods))
    profile = Profile(
        scheduler_name="default-scheduler",
        plugins={
            "queueSort": (PluginRef("PrioritySort"),),
            "preFilter": (PluginRef("NodeResourcesFit"),),
            "filter": (PluginRef("NodeResourcesFit"),),
            "postFilter": (PluginRef("DefaultPreemption"),),
        },
        features=features,
    )
    fw = Framework(profile, in_tree_registry(), Handle(table))
    state = CycleState("a", 4)
    _, status, _ = fw.run_pre_filter(state, preemptor, table)
    assert status.is_success
    if features.since("1.34"):
        # `NodeToStatusReader.Get`: what schedule_pod gives PostFilter (diagnosis.py).
        statuses = {name: explicit.get(name, DEFAULT_ABSENT) for name in table.names}
    else:
        statuses = dict(explicit)
    plugin = fw.instances["DefaultPreemption"]
    result, got = plugin.post_filter(state, preemptor, statuses)  # type: ignore[attr-defined]
    return result, got


def placed(node_name: str, victims: int) -> str:
    return f"preemption: found a potential placement for pod on node {node_name}, preempting {victims} victims"


# (upstream case, preemptor, pods, nodes, statuses, (nomination, message) at v1.28 / v1.34 / v1.37)
CASES = [
    (
        "pod with higher priority can be made schedulable",
        pod("p", HIGH),
        [pod("p1", node="node1")],
        {"node1": ONE_POD},
        {"node1": U},
        [("node1", ""), ("node1", ""), ("node1", placed("node1", 1))],
    ),
    (
        "pod with tied priority is still unschedulable",
        pod("p"),
        [pod("p1", node="node1")],
        {"node1": ONE_POD},
        {"node1": U},
        [
            (
                "",
                "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
            )
        ]
        * 3,
    ),
    (
        "preemption should respect filteredNodesStatuses",
        pod("p", HIGH),
        [pod("p1", node="node1")],
        {"node1": ONE_POD},
        {"node1": UU},
        [("", "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")]
        * 3,
    ),
    (
        "preemption should respect absent NodeToStatusReader entry meaning "
        "UnschedulableAndUnresolvable",
        pod("p", HIGH),
        [pod("p1", node="node1")],
        {"node1": ONE_POD},
        {},
        [
            ("node1", ""),  # v1.28: a node with no status is one where preemption might help
            (
                "",
                "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
            ),
            (
                "",
                "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
            ),
        ],
    ),
    (
        "pod can be made schedulable on one node",
        pod("p", MID),
        [pod("p1", HIGH, node="node1"), pod("p2", LOW, node="node2")],
        {"node1": ONE_POD, "node2": ONE_POD},
        {"node1": U, "node2": U},
        [("node2", ""), ("node2", ""), ("node2", placed("node2", 1))],
    ),
    (
        "no candidate nodes found, no enough resource after removing low priority pods",
        pod("p", HIGH, LARGE),
        [pod("p1", node="node1"), pod("p2", node="node2")],
        {"node1": NODE_RES, "node2": NODE_RES},
        {"node1": U, "node2": U},
        [("", "preemption: 0/2 nodes are available: 2 Insufficient cpu.")] * 3,
    ),
    (
        "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU "
        "resource",
        pod("p", HIGH, LARGE),
        [pod("p1", HIGH, node="node1"), pod("p2", node="node2"), pod("p3", HIGH, node="node3")],
        {"node1": ONE_POD, "node2": NODE_RES, "node3": ONE_POD},
        {"node1": U, "node2": U, "node3": U},
        [
            (
                "",
                "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
                "2 No preemption victims found for incoming pod.",
            )
        ]
        * 3,
    ),
    (
        "no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 "
        "nodes don't have enough CPU resource",
        pod("p", HIGH, LARGE),
        [pod("p1", node="node1"), pod("p2", node="node2")],
        {"node1": NODE_RES, "node2": NODE_RES, "node3": NODE_RES, "node4": NODE_RES},
        {"node1": U, "node2": U, "node4": UU},
        [
            # v1.28: node3, with no status, is tried too (and has no pod to evict).
            (
                "",
                "preemption: 0/4 nodes are available: 1 No preemption victims found for "
                "incoming pod, 1 Preemption is not helpful for scheduling, 2 Insufficient cpu.",
            ),
            (
                "",
                "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not "
                "helpful for scheduling.",
            ),
            (
                "",
                "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not "
                "helpful for scheduling.",
            ),
        ],
    ),
]


@pytest.mark.parametrize(
    ("case", "preemptor", "pods", "nodes", "statuses", "wants"),
    CASES,
    ids=[c[0] for c in CASES],
)
def test_post_filter(
    case: str,
    preemptor: Pod,
    pods: list[Pod],
    nodes: dict[str, dict[str, str]],
    statuses: dict[str, Status],
    wants: list[tuple[str, str]],
) -> None:
    # from default_preemption_test.go: TestPostFilter
    for features, (nomination, message) in zip((V128, V134, V137), wants, strict=True):
        result, status = post_filter(features, preemptor, pods, nodes, statuses)
        assert result is not None and result.nominated_node_name == nomination, features.version
        assert status.message == message, features.version
        assert status.code == (Code.SUCCESS if nomination else Code.UNSCHEDULABLE)


def test_the_placement_message_counts_the_victims() -> None:
    """v1.37 `Evaluator.Preempt`: "found a potential placement for pod on node %v,
    preempting %d victims" (the plural whatever the count)."""
    result = PostFilterResult("node7", (pod("a"), pod("b")))
    assert placement_message(result) == (
        "found a potential placement for pod on node node7, preempting 2 victims"
    )
