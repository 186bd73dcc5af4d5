"""PodTopologySpread against kube-scheduler v1.28's test tables.

Each case names the upstream test function and case it is ported from
(pkg/scheduler/framework/plugins/podtopologyspread/{filtering,scoring}_test.go,
pkg/scheduler/apis/config/validation/validation_pluginargs_test.go); the
expectations are upstream's. Cases written here, with no upstream twin, say so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from eventsched.framework import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    ASSIGNED_POD_UPDATE,
    NODE_ADD,
    NODE_DELETE,
    NODE_UPDATE,
    Code,
    CycleState,
    PluginArgsError,
    Status,
)
from eventsched.model import Node, NodeTable, Pod
from eventsched.model.objects import workload_from_manifest
from eventsched.model.taints import find_untolerated
from eventsched.plugins.podtopologyspread import PRE_FILTER_STATE_KEY, PRE_SCORE_STATE_KEY
from eventsched.plugins.podtopologyspread.constraints import constraints_for, pod_specs
from eventsched.plugins.podtopologyspread.counts import required_affinity
from eventsched.plugins.podtopologyspread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    HardSpread,
)
from eventsched.plugins.podtopologyspread.scoring import PreScoreState, go_round
from eventsched.plugins.registry import IN_TREE
from tests.plugins.conftest import make_node, plugin, run_filter

NAME = "PodTopologySpread"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
NIL: dict[str, Any] | None = None
LIST: dict[str, Any] = {"defaultingType": "List"}
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
OK, U, UU = "Success", "Unschedulable", "UnschedulableAndUnresolvable"


# -- builders (upstream's st.MakePod / st.MakeNode) --------------------------------------


def constraint(
    max_skew: int, key: str, when: str, selector: dict[str, Any] | None = FOO, **extra: Any
) -> dict[str, Any]:
    raw: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not None:
        raw["labelSelector"] = selector
    return {**raw, **extra}


def hard(max_skew: int, key: str, selector: dict[str, Any] | None = FOO, **extra: Any) -> Any:
    return constraint(max_skew, key, "DoNotSchedule", selector, **extra)


def soft(max_skew: int, key: str, selector: dict[str, Any] | None = FOO, **extra: Any) -> Any:
    return constraint(max_skew, key, "ScheduleAnyway", selector, **extra)


def pod(
    name: str = "p",
    labels: dict[str, str] | None = None,
    *,
    node: str = "",
    namespace: str = "default",
    spread: Sequence[dict[str, Any]] = (),
    deleting: bool = False,
    owner: tuple[str, str] | None = None,
    **spec: Any,
) -> Pod:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": f"uid-{namespace}-{name}",
        "labels": labels or {},
    }
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if owner is not None:
        meta["ownerReferences"] = [{"kind": owner[0], "name": owner[1], "controller": True}]
    body: dict[str, Any] = {"containers": [{"name": "c"}], **spec}
    if node:
        body["nodeName"] = node
    if spread:
        body["topologySpreadConstraints"] = list(spread)
    return Pod.from_manifest({"metadata": meta, "spec": body})


def placed(names: str, node: str, labels: dict[str, str] | None = None, **kw: Any) -> list[Pod]:
    """Pods named by `names` (space separated) on `node`, each with `labels`."""
    return [
        pod(n, labels if labels is not None else {"foo": ""}, node=node, **kw)
        for n in names.split()
    ]


def node(name: str, taints: Sequence[dict[str, str]] = (), **labels: str) -> Node:
    return make_node(
        name, labels={k.replace("_", "-"): v for k, v in labels.items()}, taints=list(taints)
    )


def zoned(name: str, zone: str, **labels: str) -> Node:
    """st.MakeNode().Name(name).Label("zone", zone).Label("node", name)."""
    return node(name, zone=zone, node=name, **labels)


def cluster(nodes: Sequence[Node], pods: Sequence[Pod] = ()) -> NodeTable:
    table = NodeTable(nodes)
    for p in pods:
        assert table.add_pod(p, p.node_name)
    return table


def filter_codes(
    incoming: Pod, table: NodeTable, args: dict[str, Any] | None = None
) -> dict[str, str]:
    statuses = run_filter(NAME, incoming, table, args if args is not None else LIST)
    return {
        name: OK if status is None else status.code.label
        for name, status in zip(table.names, statuses, strict=True)
    }


def pre_filter(
    incoming: Pod, table: NodeTable, args: dict[str, Any] | None = None
) -> tuple[Status | None, tuple[HardSpread, ...]]:
    p = plugin(NAME, args if args is not None else LIST, table)
    state = CycleState()
    _, status = p.pre_filter(state, incoming, table)
    return status, state.get(PRE_FILTER_STATE_KEY, ())


def rows_of(table: NodeTable, names: Sequence[str]) -> np.ndarray:
    return np.array([table.row_of(n) for n in names], dtype=np.intp)


def pre_score(
    incoming: Pod, table: NodeTable, candidates: Sequence[str], args: dict[str, Any] | None
) -> tuple[Status | None, PreScoreState | None, Any, CycleState]:
    p = plugin(NAME, args, table)
    state = CycleState()
    status = p.pre_score(state, incoming, table, rows_of(table, candidates))
    return status, state.get(PRE_SCORE_STATE_KEY), p, state


def scores(
    incoming: Pod,
    table: NodeTable,
    candidates: Sequence[str] | None = None,
    args: dict[str, Any] | None = None,
) -> dict[str, int]:
    """PreScore on the candidates (upstream's `nodes`; the rest are `failedNodes`), then
    Score and NormalizeScore, as TestPodTopologySpreadScore runs them (System defaulting)."""
    names = list(table.names if candidates is None else candidates)
    status, _, p, state = pre_score(incoming, table, names, args)
    assert status is None, status
    rows = rows_of(table, names)
    raw = p.score_batch(state, incoming, table, rows)
    normalized = p.normalize_score(state, incoming, raw.copy(), rows)
    return dict(zip(names, (int(s) for s in normalized), strict=True))


# -- Filter: TestSingleConstraint ---------------------------------------------------------


@dataclass
class FilterCase:
    upstream: str
    incoming: Pod
    nodes: list[Node]
    pods: list[Pod] = field(default_factory=list)
    want: dict[str, str] = field(default_factory=dict)


FOUR_NODES = [
    zoned("node-a", "zone1"),
    zoned("node-b", "zone1"),
    zoned("node-x", "zone2"),
    zoned("node-y", "zone2"),
]
SPREAD_2_1_0_3 = [
    *placed("p-a1 p-a2", "node-a"),
    *placed("p-b1", "node-b"),
    *placed("p-y1 p-y2 p-y3", "node-y"),
]

SINGLE_CONSTRAINT = [
    FilterCase(
        "TestSingleConstraint/no existing pods",
        pod(labels={"foo": ""}, spread=[hard(1, "zone")]),
        FOUR_NODES,
        want=dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK),
    ),
    FilterCase(
        "TestSingleConstraint/no existing pods, incoming pod doesn't match itself",
        pod(labels={"foo": ""}, spread=[hard(1, "zone", BAR)]),
        FOUR_NODES,
        want=dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK),
    ),
    FilterCase(
        "TestSingleConstraint/existing pods in a different namespace do not count",
        pod(labels={"foo": ""}, spread=[hard(1, "zone")]),
        FOUR_NODES,
        [
            *placed("p-a1", "node-a", namespace="ns1"),
            *placed("p-b1", "node-a", namespace="ns2"),
            *placed("p-x1", "node-x"),
            *placed("p-y1", "node-y"),
        ],
        {"node-a": OK, "node-b": OK, "node-x": U, "node-y": U},
    ),
    FilterCase(
        "TestSingleConstraint/pods spread across zones as 3/3, all nodes fit",
        pod(labels={"foo": ""}, spread=[hard(1, "zone")]),
        FOUR_NODES,
        SPREAD_2_1_0_3,
        dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK),
    ),
    FilterCase(
        "TestSingleConstraint/pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        pod(labels={"foo": ""}, spread=[hard(1, "zone")]),
        [
            zoned("node-a", "zone1"),
            node("node-b", zon="zone1", node="node-b"),
            zoned("node-x", "zone2"),
            zoned("node-y", "zone2"),
        ],
        [
            *placed("p-a1", "node-a"),
            *placed("p-b1", "node-b"),
            *placed("p-x1", "node-x"),
            *placed("p-y1", "node-y"),
        ],
        {"node-a": OK, "node-b": UU, "node-x": U, "node-y": U},
    ),
    FilterCase(
        "TestSingleConstraint/pod cannot be scheduled as all nodes don't have label 'rack'",
        pod(labels={"foo": ""}, spread=[hard(1, "rack")]),
        [zoned("node-a", "zone1"), zoned("node-x", "zone2")],
        want={"node-a": UU, "node-x": UU},
    ),
    FilterCase(
        "TestSingleConstraint/pods spread across nodes as 2/1/0/3, only node-x fits",
        pod(labels={"foo": ""}, spread=[hard(1, "node")]),
        FOUR_NODES,
        SPREAD_2_1_0_3,
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": U},
    ),
    FilterCase(
        "TestSingleConstraint/pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        pod(labels={"foo": ""}, spread=[hard(2, "node")]),
        FOUR_NODES,
        SPREAD_2_1_0_3,
        {"node-a": U, "node-b": OK, "node-x": OK, "node-y": U},
    ),
    FilterCase(
        "TestSingleConstraint/pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        pod(labels={"bar": ""}, spread=[hard(1, "node")]),
        FOUR_NODES,
        SPREAD_2_1_0_3,
        {"node-a": U, "node-b": OK, "node-x": OK, "node-y": U},
    ),
    FilterCase(
        "TestSingleConstraint/incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
        pod(
            labels={"foo": ""},
            spread=[hard(1, "node")],
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "node",
                                        "operator": "In",
                                        "values": ["node-a", "node-y"],
                                    }
                                ]
                            }
                        ]
                    }
                }
            },
        ),
        FOUR_NODES,
        SPREAD_2_1_0_3,
        # node-b and node-x pass here; NodeAffinity rejects them in a real cycle.
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": U},
    ),
    FilterCase(
        "TestSingleConstraint/terminating Pods should be excluded",
        pod(labels={"foo": ""}, spread=[hard(1, "node")]),
        [node("node-a", node="node-a"), node("node-b", node="node-b")],
        [*placed("p-a", "node-a", deleting=True), *placed("p-b", "node-b")],
        {"node-a": OK, "node-b": U},
    ),
    FilterCase(
        "TestPreFilterState/NodeAffinityPolicy honored with labelSelectors (its state; Filter "
        "verdicts derived, the pod matching itself)",
        pod(labels={"foo": "", "bar": ""}, spread=[hard(1, "node", BAR)], nodeSelector={"foo": ""}),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-c", node="node-c", bar=""),
        ],
        [
            *placed("p-a", "node-a", {"bar": ""}),
            *placed("p-b p-c", "node-b", {"bar": ""}),
            *placed("p-d", "node-c", {}),
        ],
        # domains node-a (1) and node-b (2): min 1; node-c is no domain: 0 + 1 - 1.
        {"node-a": OK, "node-b": U, "node-c": OK},
    ),
    FilterCase(
        "TestPreFilterState/NodeAffinityPolicy ignored with labelSelectors (its state; Filter "
        "verdicts derived)",
        pod(
            labels={"foo": "", "bar": ""},
            spread=[hard(1, "node", BAR, nodeAffinityPolicy="Ignore")],
            nodeSelector={"foo": ""},
        ),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-c", node="node-c", bar=""),
        ],
        [
            *placed("p-a", "node-a", {"bar": ""}),
            *placed("p-b p-c", "node-b", {"bar": ""}),
            *placed("p-d", "node-c", {}),
        ],
        # node-c joins with 0: min 0, so node-a (1 + 1 - 0) no longer fits.
        {"node-a": U, "node-b": U, "node-c": OK},
    ),
    FilterCase(
        "TestPreFilterState/NodeTaintsPolicy honored (its state; Filter verdicts derived)",
        pod(labels={"foo": "", "bar": ""}, spread=[hard(1, "node", BAR, nodeTaintsPolicy="Honor")]),
        [
            node("node-a", node="node-a"),
            node("node-b", node="node-b"),
            node("node-c", [UNSCHEDULABLE_TAINT], node="node-c", bar=""),
        ],
        [
            *placed("p-a", "node-a", {"bar": ""}),
            *placed("p-b p-c", "node-b", {"bar": ""}),
            *placed("p-d", "node-c", {}),
        ],
        {"node-a": OK, "node-b": U, "node-c": OK},
    ),
    FilterCase(
        "TestPreFilterState/NodeTaintsPolicy honored with tolerated taints (its state; Filter "
        "verdicts derived)",
        pod(
            labels={"foo": "", "bar": ""},
            spread=[hard(1, "node", BAR, nodeTaintsPolicy="Honor")],
            tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}],
        ),
        [
            node("node-a", node="node-a"),
            node("node-b", node="node-b"),
            node("node-c", [UNSCHEDULABLE_TAINT], node="node-c", bar=""),
        ],
        [
            *placed("p-a", "node-a", {"bar": ""}),
            *placed("p-b p-c", "node-b", {"bar": ""}),
            *placed("p-d", "node-c", {}),
        ],
        {"node-a": U, "node-b": U, "node-c": OK},
    ),
    FilterCase(
        "TestSingleConstraint (no upstream twin; integration test 'the number of domains < "
        "minDomains, then the third node fits'): 3 domains < minDomains 4, global minimum 0",
        pod(labels={"foo": ""}, spread=[hard(2, "node", minDomains=4)]),
        [zoned("node-1", "zone1"), zoned("node-2", "zone1"), zoned("node-3", "zone2")],
        [*placed("p1a p1b", "node-1"), *placed("p2a p2b", "node-2"), *placed("p3", "node-3")],
        {"node-1": U, "node-2": U, "node-3": OK},
    ),
    FilterCase(
        "TestSingleConstraint (no upstream twin): 3 domains >= minDomains 2, global minimum 1",
        pod(labels={"foo": ""}, spread=[hard(2, "node", minDomains=2)]),
        [zoned("node-1", "zone1"), zoned("node-2", "zone1"), zoned("node-3", "zone2")],
        [*placed("p1a p1b", "node-1"), *placed("p2a p2b", "node-2"), *placed("p3", "node-3")],
        {"node-1": OK, "node-2": OK, "node-3": OK},
    ),
    FilterCase(
        "TestMultipleConstraints/two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        pod(labels={"foo": ""}, spread=[hard(1, "zone"), hard(1, "node")]),
        FOUR_NODES,
        SPREAD_2_1_0_3,
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": U},
    ),
    FilterCase(
        "TestMultipleConstraints/two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
        pod(labels={"foo": ""}, spread=[hard(1, "zone"), hard(1, "node")]),
        FOUR_NODES,
        [*SPREAD_2_1_0_3, *placed("p-y4", "node-y")],
        {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
    ),
    FilterCase(
        "TestMultipleConstraints/Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
        pod(labels={"foo": "", "bar": ""}, spread=[hard(1, "zone"), hard(1, "node", BAR)]),
        FOUR_NODES,
        [*placed("p-a1", "node-a", {"foo": ""}), *placed("p-y1", "node-y", {"bar": ""})],
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": U},
    ),
    FilterCase(
        "TestMultipleConstraints/Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
        pod(labels={"foo": "", "bar": ""}, spread=[hard(1, "zone"), hard(1, "node", BAR)]),
        FOUR_NODES,
        [
            *placed("p-a1", "node-a", {"foo": ""}),
            *placed("p-x1", "node-x", {"bar": ""}),
            *placed("p-y1", "node-y", {"bar": ""}),
        ],
        {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
    ),
    FilterCase(
        "TestMultipleConstraints/Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
        pod(labels={"foo": "", "bar": ""}, spread=[hard(1, "zone"), hard(1, "node", BAR)]),
        FOUR_NODES,
        [
            *placed("p-a1", "node-a", {"foo": ""}),
            *placed("p-a2", "node-a", {"foo": "", "bar": ""}),
            *placed("p-y1", "node-y", {"foo": ""}),
            *placed("p-y2", "node-y", {"foo": "", "bar": ""}),
            *placed("p-y3", "node-y", {"foo": ""}),
        ],
        {"node-a": U, "node-b": OK, "node-x": U, "node-y": U},
    ),
    FilterCase(
        "TestMultipleConstraints/Constraints hold different labelSelectors but pod doesn't match "
        "itself on 'zone' constraint",
        pod(labels={"bar": ""}, spread=[hard(1, "zone"), hard(1, "node", BAR)]),
        FOUR_NODES,
        [
            *placed("p-a1", "node-a", {"foo": ""}),
            *placed("p-x1", "node-x", {"bar": ""}),
            *placed("p-y1", "node-y", {"bar": ""}),
        ],
        {"node-a": OK, "node-b": OK, "node-x": U, "node-y": U},
    ),
    FilterCase(
        "TestMultipleConstraints/two Constraints on zone and node, absence of label 'node' on "
        "node-x, spreads = [1/1, 1/0/0/1]",
        pod(labels={"foo": ""}, spread=[hard(1, "zone"), hard(1, "node")]),
        [
            zoned("node-a", "zone1"),
            zoned("node-b", "zone1"),
            node("node-x", zone="zone2"),
            zoned("node-y", "zone2"),
        ],
        [*placed("p-a1", "node-a"), *placed("p-y3", "node-y")],
        {"node-a": U, "node-b": OK, "node-x": UU, "node-y": U},
    ),
]


@pytest.mark.parametrize("case", SINGLE_CONSTRAINT, ids=lambda c: c.upstream)
def test_filter(case: FilterCase) -> None:
    assert filter_codes(case.incoming, cluster(case.nodes, case.pods)) == case.want


def test_filter_reasons_are_upstreams() -> None:
    """TestSingleConstraint/...absence of label 'zone' on node-b: the two statuses' messages."""
    table = cluster(
        [zoned("node-a", "zone1"), node("node-b", node="node-b"), zoned("node-x", "zone2")],
        [*placed("p-a1 p-a2", "node-a")],
    )
    statuses = run_filter(NAME, pod(labels={"foo": ""}, spread=[hard(1, "zone")]), table, LIST)
    assert statuses[0] == Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
    assert statuses[1] == Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
    assert ERR_REASON_NODE_LABEL_NOT_MATCH.endswith("(missing required label)")
    assert statuses[2] is None


def test_pre_filter_counts_every_node_not_only_the_candidates() -> None:
    """calPreFilterState lists all NodeInfos: a node outside the filtered rows still sets the minimum."""
    table = cluster(FOUR_NODES, SPREAD_2_1_0_3)
    p = plugin(NAME, LIST, table)
    state = CycleState()
    p.pre_filter(state, pod(labels={"foo": ""}, spread=[hard(1, "node")]), table)
    result = p.filter_batch(state, pod(), table, rows_of(table, ["node-b"]))
    assert result.verdict.tolist() == [1]  # node-b: 1 + 1 - 0 (node-x) > 1


# -- PreFilter state: TestPreFilterState ------------------------------------------------------


@dataclass
class StateCase:
    upstream: str
    incoming: Pod
    nodes: list[Node]
    pods: list[Pod]
    want: list[tuple[str, dict[str, int], int]]  # per constraint: key, TpPairToMatchNum, min


PRE_FILTER_STATES = [
    StateCase(
        "TestPreFilterState/clean cluster with one spreadConstraint",
        pod(labels={"foo": ""}, spread=[hard(5, "zone", {"matchLabels": {"foo": "bar"}})]),
        FOUR_NODES,
        [],
        [("zone", {"zone1": 0, "zone2": 0}, 0)],
    ),
    StateCase(
        "TestPreFilterState/normal case with one spreadConstraint",
        pod(labels={"foo": ""}, spread=[hard(1, "zone")]),
        FOUR_NODES,
        [*placed("p-a1 p-a2", "node-a"), *placed("p-b1", "node-b"), *placed("p-y1 p-y2", "node-y")],
        [("zone", {"zone1": 3, "zone2": 2}, 2)],
    ),
    StateCase(
        "TestPreFilterState/normal case with null label selector",
        pod(labels={"foo": ""}, spread=[hard(1, "zone", NIL)]),
        FOUR_NODES,
        [*placed("p-a1 p-a2", "node-a"), *placed("p-y1", "node-y")],
        [("zone", {"zone1": 0, "zone2": 0}, 0)],
    ),
    StateCase(
        "TestPreFilterState/namespace mismatch doesn't count",
        pod(labels={"foo": ""}, spread=[hard(1, "zone")]),
        FOUR_NODES,
        [
            *placed("p-a1", "node-a"),
            *placed("p-a2", "node-a", namespace="ns1"),
            *placed("p-b1", "node-b"),
            *placed("p-y1", "node-y", namespace="ns2"),
            *placed("p-y2", "node-y"),
        ],
        [("zone", {"zone1": 2, "zone2": 1}, 1)],
    ),
    StateCase(
        "TestPreFilterState/normal case with two spreadConstraints",
        pod(labels={"foo": ""}, spread=[hard(1, "zone"), hard(1, "node")]),
        FOUR_NODES,
        [*SPREAD_2_1_0_3, *placed("p-y4", "node-y")],
        [
            ("zone", {"zone1": 3, "zone2": 4}, 3),
            ("node", {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}, 0),
        ],
    ),
    StateCase(
        "TestPreFilterState/soft spreadConstraints should be bypassed",
        pod(
            labels={"foo": ""},
            spread=[soft(1, "zone"), hard(1, "zone"), soft(1, "node"), hard(1, "node")],
        ),
        [zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-y", "zone2")],
        [
            *placed("p-a1 p-a2", "node-a"),
            *placed("p-b1", "node-b"),
            *placed("p-y1 p-y2 p-y3 p-y4", "node-y"),
        ],
        [
            ("zone", {"zone1": 3, "zone2": 4}, 3),
            ("node", {"node-a": 2, "node-b": 1, "node-y": 4}, 1),
        ],
    ),
    StateCase(
        "TestPreFilterState/NodeAffinityPolicy honored with nodeAffinity",
        pod(
            labels={"foo": ""},
            spread=[hard(1, "node", BAR)],
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "foo", "operator": "In", "values": [""]}]}
                        ]
                    }
                }
            },
        ),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-c", node="node-c", bar=""),
        ],
        [
            *placed("p-a", "node-a", {"bar": ""}),
            *placed("p-c p-d", "node-b", {"bar": ""}),
            *placed("p-e", "node-c", {}),
        ],
        [("node", {"node-a": 1, "node-b": 2}, 1)],
    ),
    StateCase(
        "TestPreFilterState/two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        pod(
            labels={"foo": ""},
            spread=[hard(1, "zone"), hard(1, "node", nodeAffinityPolicy="Ignore")],
            nodeSelector={"foo": ""},
        ),
        [
            zoned("node-a", "zone1", foo=""),
            zoned("node-b", "zone1"),
            zoned("node-x", "zone2", foo=""),
        ],
        [*placed("p-b1 p-b2", "node-b"), *placed("p-x1", "node-x")],
        [
            ("zone", {"zone1": 0, "zone2": 1}, 0),
            ("node", {"node-a": 0, "node-b": 2, "node-x": 1}, 0),
        ],
    ),
    StateCase(
        "TestPreFilterState/matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        pod(labels={"foo": "", "bar": "a"}, spread=[hard(1, "zone", matchLabelKeys=["bar"])]),
        FOUR_NODES,
        [
            *placed("p-a1", "node-a", {"foo": ""}),
            *placed("p-a2", "node-a", {"foo": "", "bar": "a"}),
            *placed("p-b1", "node-b", {"foo": ""}),
            *placed("p-y1", "node-y", {"foo": "", "bar": "a"}),
            *placed("p-y2", "node-y", {"bar": ""}),
        ],
        [("zone", {"zone1": 1, "zone2": 1}, 1)],
    ),
    StateCase(
        "TestPreFilterState/matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        pod(labels={"foo": "a"}, spread=[hard(1, "zone", {}, matchLabelKeys=["foo"])]),
        FOUR_NODES,
        [
            *placed("p-a1 p-a2", "node-a", {"foo": "a"}),
            *placed("p-b1", "node-b", {"foo": "a"}),
            *placed("p-y1 p-y2", "node-y", {"foo": "a"}),
        ],
        [("zone", {"zone1": 3, "zone2": 2}, 2)],
    ),
    StateCase(
        "TestPreFilterState/key in matchLabelKeys is ignored when LabelSelector is nil",
        pod(labels={"foo": ""}, spread=[hard(1, "zone", NIL, matchLabelKeys=["bar"])]),
        FOUR_NODES,
        [*placed("p-a1 p-a2", "node-a", {"foo": "a"}), *placed("p-y1", "node-y", {"foo": "a"})],
        [("zone", {"zone1": 0, "zone2": 0}, 0)],
    ),
    StateCase(
        "TestPreFilterState/key in matchLabelKeys is ignored when it isn't exist in pod.labels",
        pod(labels={"foo": ""}, spread=[hard(1, "zone", matchLabelKeys=["bar"])]),
        FOUR_NODES,
        [
            *placed("p-a1 p-a2", "node-a", {"foo": "a"}),
            *placed("p-b1", "node-b", {"foo": "a"}),
            *placed("p-y1 p-y2", "node-y", {"foo": "a"}),
        ],
        [("zone", {"zone1": 3, "zone2": 2}, 2)],
    ),
    StateCase(
        "(no upstream twin) v1.28 counts nothing for an empty selector {} (countPodsMatchSelector's "
        "selector.Empty(), kubernetes#116607)",
        pod(labels={"foo": ""}, spread=[hard(1, "zone", {})]),
        FOUR_NODES,
        SPREAD_2_1_0_3,
        [("zone", {"zone1": 0, "zone2": 0}, 0)],
    ),
]


@pytest.mark.parametrize("case", PRE_FILTER_STATES, ids=lambda c: c.upstream)
def test_pre_filter_state(case: StateCase) -> None:
    status, spreads = pre_filter(case.incoming, cluster(case.nodes, case.pods))
    assert status is None
    got = [(s.constraint.topology_key, s.match_nums(), s.min_match) for s in spreads]
    assert got == case.want


def test_min_domains_makes_the_global_minimum_zero() -> None:
    """TestPreFilterState-style: 2 zones < minDomains 3, so minMatchNum is 0 though both hold pods."""
    table = cluster(FOUR_NODES, [*placed("p-a1", "node-a"), *placed("p-x1", "node-x")])
    _, spreads = pre_filter(pod(labels={"foo": ""}, spread=[hard(1, "zone", minDomains=3)]), table)
    assert (spreads[0].domains, spreads[0].min_match) == (2, 0)
    assert set(
        filter_codes(
            pod(labels={"foo": ""}, spread=[hard(1, "zone", minDomains=3)]), table
        ).values()
    ) == {U}


def test_no_eligible_domain_skips_the_constraint() -> None:
    """minMatchNum finds no TpKeyToDomainsNum entry when no node is eligible: Filter `continue`s."""
    table = cluster(
        [node("node-a", [UNSCHEDULABLE_TAINT], zone="z1")], placed("p-a1 p-a2", "node-a")
    )
    incoming = pod(labels={"foo": ""}, spread=[hard(1, "zone", nodeTaintsPolicy="Honor")])
    _, spreads = pre_filter(incoming, table)
    assert (spreads[0].domains, spreads[0].min_match) == (0, None)
    assert filter_codes(incoming, table) == {"node-a": OK}


def test_pre_filter_skips_without_hard_constraints() -> None:
    """TestPreFilterState/skip if not specified (v1.28: kubernetes#117683)."""
    table = cluster([zoned("node-a", "zone1")])
    status, _ = pre_filter(pod(labels={"foo": ""}), table)
    assert status is not None and status.code == Code.SKIP
    status, _ = pre_filter(pod(labels={"foo": ""}, spread=[soft(1, "zone")]), table)
    assert status is not None and status.code == Code.SKIP


# -- Scores: TestPodTopologySpreadScore -------------------------------------------------------


@dataclass
class ScoreCase:
    upstream: str
    incoming: Pod
    nodes: list[Node]
    pods: list[Pod]
    want: dict[str, int]
    failed: list[Node] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)


def hosts(*names: str, **labels: str) -> list[Node]:
    return [make_node(n, labels={HOSTNAME: n, **labels}) for n in names]


def zone_hosts(spec: str) -> list[Node]:
    """'node-a:zone1 node-b:zone1 ...' as nodes with zone and hostname labels."""
    out = []
    for item in spec.split():
        name, zone = item.split(":")
        out.append(make_node(name, labels={"zone": zone, HOSTNAME: name}))
    return out


SCORES = [
    ScoreCase(
        "TestPodTopologySpreadScore/one constraint on node, no existing pods",
        pod(labels={"foo": ""}, spread=[soft(1, HOSTNAME)]),
        hosts("node-a", "node-b"),
        [],
        {"node-a": 100, "node-b": 100},
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/one constraint on node, only one node is candidate",
        pod(labels={"foo": ""}, spread=[soft(1, HOSTNAME)]),
        hosts("node-a"),
        [*placed("p-a1 p-a2", "node-a"), *placed("p-b1", "node-b")],
        {"node-a": 100},
        failed=hosts("node-b"),
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/one constraint on node, all nodes have the same number of matching pods",
        pod(labels={"foo": ""}, spread=[soft(1, HOSTNAME)]),
        hosts("node-a", "node-b"),
        [*placed("p-a1", "node-a"), *placed("p-b1", "node-b")],
        {"node-a": 100, "node-b": 100},
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/one constraint on node, all 4 nodes are candidates",
        pod(labels={"foo": ""}, spread=[soft(1, HOSTNAME)]),
        hosts("node-a", "node-b", "node-c", "node-d"),
        [
            *placed("p-a1 p-a2", "node-a"),
            *placed("p-b1", "node-b"),
            *placed("p-d1 p-d2 p-d3", "node-d"),
        ],
        {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/one constraint on node, null selector",
        pod(labels={"foo": ""}, spread=[soft(1, HOSTNAME, NIL)]),
        hosts("node-a", "node-b", "node-c", "node-d"),
        [
            *placed("p-a1 p-a2", "node-a"),
            *placed("p-b1", "node-b"),
            *placed("p-d1 p-d2 p-d3", "node-d"),
        ],
        {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/one constraint on node, all 4 nodes are candidates, maxSkew=2",
        pod(labels={"foo": ""}, spread=[soft(2, HOSTNAME)]),
        hosts("node-a", "node-b", "node-c", "node-d"),
        [
            *placed("p-a1 p-a2", "node-a"),
            *placed("p-b1", "node-b"),
            *placed("p-d1 p-d2 p-d3", "node-d"),
        ],
        {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/one constraint on node, all 4 nodes are candidates, maxSkew=3",
        pod(labels={"foo": ""}, spread=[soft(3, HOSTNAME)]),
        hosts("node-a", "node-b", "node-c", "node-d"),
        [
            *placed("p-a1 p-a2 p-a3 p-a4", "node-a"),
            *placed("p-b1 p-b2 p-b3", "node-b"),
            *placed("p-c1 p-c2", "node-c"),
            *placed("p-d1", "node-d"),
        ],
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/system defaulting, nodes don't have zone, pods match service",
        pod(labels={"foo": ""}),
        hosts("node-a", "node-b", "node-c", "node-d"),
        [
            *placed("p-a1 p-a2 p-a3 p-a4", "node-a"),
            *placed("p-b1 p-b2 p-b3", "node-b"),
            *placed("p-c1 p-c2", "node-c"),
            *placed("p-d1", "node-d"),
        ],
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
        objects=[
            {
                "kind": "Service",
                "metadata": {"name": "s", "namespace": "default"},
                "spec": {"selector": {"foo": ""}},
            }
        ],
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/one constraint on node, 3 out of 4 nodes are candidates",
        pod(labels={"foo": ""}, spread=[soft(1, HOSTNAME)]),
        hosts("node-a", "node-b", "node-x"),
        [
            *placed("p-a1 p-a2 p-a3 p-a4", "node-a"),
            *placed("p-b1 p-b2", "node-b"),
            *placed("p-x1", "node-x"),
            *placed("p-y1 p-y2 p-y3", "node-y"),
        ],
        {"node-a": 33, "node-b": 83, "node-x": 100},
        failed=hosts("node-y"),
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/one constraint on node, 3 out of 4 nodes are candidates, "
        "one node doesn't match topology key",
        pod(labels={"foo": ""}, spread=[soft(1, HOSTNAME)]),
        [*hosts("node-a"), make_node("node-b", labels={"n": "node-b"}), *hosts("node-x")],
        [
            *placed("p-a1 p-a2 p-a3 p-a4", "node-a"),
            *placed("p-b1 p-b2", "node-b"),
            *placed("p-x1", "node-x"),
            *placed("p-y1 p-y2 p-y3", "node-y"),
        ],
        {"node-a": 16, "node-b": 0, "node-x": 100},
        failed=hosts("node-y"),
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/one constraint on zone, 3 out of 4 nodes are candidates",
        pod(labels={"foo": ""}, spread=[soft(1, "zone")]),
        zone_hosts("node-a:zone1 node-b:zone1 node-x:zone2"),
        [
            *placed("p-a1 p-a2 p-a3 p-a4", "node-a"),
            *placed("p-b1 p-b2", "node-b"),
            *placed("p-x1", "node-x"),
            *placed("p-y1 p-y2 p-y3", "node-y"),
        ],
        {"node-a": 75, "node-b": 75, "node-x": 100},
        failed=zone_hosts("node-y:zone2"),
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/two Constraints on zone and node, 2 out of 4 nodes are candidates",
        pod(labels={"foo": ""}, spread=[soft(1, "zone"), soft(1, HOSTNAME)]),
        zone_hosts("node-a:zone1 node-x:zone2"),
        [
            *placed("p-a1 p-a2", "node-a"),
            *placed("p-b1", "node-b"),
            *placed("p-x1 p-x2", "node-x"),
            *placed("p-y1 p-y2 p-y3 p-y4", "node-y"),
        ],
        {"node-a": 100, "node-x": 63},
        failed=zone_hosts("node-b:zone1 node-y:zone2"),
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/two Constraints on zone and node, with different labelSelectors",
        pod(labels={"foo": "", "bar": ""}, spread=[soft(1, "zone"), soft(1, HOSTNAME, BAR)]),
        zone_hosts("node-a:zone1 node-b:zone1 node-x:zone2 node-y:zone2"),
        [
            *placed("p-a1", "node-a"),
            *placed("p-b1", "node-b", {"foo": "", "bar": ""}),
            *placed("p-y1", "node-y"),
            *placed("p-y2", "node-y", {"bar": ""}),
        ],
        {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60},
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/two Constraints on zone and node, with different labelSelectors, "
        "some nodes have 0 pods",
        pod(labels={"foo": "", "bar": ""}, spread=[soft(1, "zone"), soft(1, HOSTNAME, BAR)]),
        zone_hosts("node-a:zone1 node-b:zone1 node-x:zone2 node-y:zone2"),
        [
            *placed("p-b1", "node-b", {"bar": ""}),
            *placed("p-x1", "node-x"),
            *placed("p-y1", "node-y", {"foo": "", "bar": ""}),
        ],
        {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0},
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/two Constraints on zone and node, with different labelSelectors, "
        "3 out of 4 nodes are candidates",
        pod(labels={"foo": "", "bar": ""}, spread=[soft(1, "zone"), soft(1, HOSTNAME, BAR)]),
        zone_hosts("node-a:zone1 node-b:zone1 node-x:zone2"),
        [
            *placed("p-a1", "node-a"),
            *placed("p-b1", "node-b", {"foo": "", "bar": ""}),
            *placed("p-y1", "node-y"),
            *placed("p-y2", "node-y", {"bar": ""}),
        ],
        {"node-a": 50, "node-b": 25, "node-x": 100},
        failed=zone_hosts("node-y:zone2"),
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/existing pods in a different namespace do not count",
        pod(labels={"foo": ""}, spread=[soft(1, HOSTNAME)]),
        hosts("node-a", "node-b"),
        [
            *placed("p-a1", "node-a", namespace="ns1"),
            *placed("p-a2", "node-a"),
            *placed("p-b1 p-b2", "node-b"),
        ],
        {"node-a": 100, "node-b": 33},
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/terminating Pods should be excluded",
        pod(labels={"foo": ""}, spread=[soft(1, HOSTNAME)]),
        hosts("node-a", "node-b"),
        [*placed("p-a", "node-a", deleting=True), *placed("p-b", "node-b")],
        {"node-a": 100, "node-b": 0},
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/minDomains has no effect when ScheduleAnyway",
        pod(labels={"foo": ""}, spread=[soft(2, "node", minDomains=10)]),
        [
            node("node-a", node="node-a"),
            node("node-b", node="node-b"),
            node("node-c", node="node-c"),
        ],
        [*placed("p-a1 p-a2", "node-a"), *placed("p-b1 p-b2", "node-b"), *placed("p-c1", "node-c")],
        {"node-a": 75, "node-b": 75, "node-c": 100},
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/NodeAffinityPolicy honoed with labelSelectors",
        pod(labels={"foo": ""}, spread=[soft(1, "node")], nodeSelector={"foo": ""}),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-c", node="node-c"),
        ],
        [*placed("p-a1 p-a2", "node-a"), *placed("p-b1", "node-b"), *placed("p-c1", "node-c")],
        {"node-a": 0, "node-b": 33, "node-c": 100},
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/NodeAffinityPolicy ignored with labelSelectors",
        pod(
            labels={"foo": ""},
            spread=[soft(1, "node", nodeAffinityPolicy="Ignore")],
            nodeSelector={"foo": ""},
        ),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-c", node="node-c"),
        ],
        [*placed("p-a1 p-a2", "node-a"), *placed("p-b1", "node-b"), *placed("p-c1", "node-c")],
        {"node-a": 66, "node-b": 100, "node-c": 100},
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/NodeTaintsPolicy honored",
        pod(labels={"foo": ""}, spread=[soft(1, "node", nodeTaintsPolicy="Honor")]),
        [
            node("node-a", node="node-a"),
            node("node-b", node="node-b"),
            node("node-c", [UNSCHEDULABLE_TAINT], node="node-c"),
        ],
        [*placed("p-a1 p-a2", "node-a"), *placed("p-b1", "node-b"), *placed("p-c1", "node-c")],
        {"node-a": 0, "node-b": 33, "node-c": 100},
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/NodeTaintsPolicy ignored",
        pod(labels={"foo": ""}, spread=[soft(1, "node")]),
        [
            node("node-a", node="node-a"),
            node("node-b", node="node-b"),
            node("node-c", [UNSCHEDULABLE_TAINT], node="node-c"),
        ],
        [*placed("p-a1 p-a2", "node-a"), *placed("p-b1", "node-b"), *placed("p-c1", "node-c")],
        {"node-a": 66, "node-b": 100, "node-c": 100},
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        pod(
            labels={"foo": "", "bar": ""},
            spread=[
                soft(1, "zone", {}, matchLabelKeys=["foo"]),
                soft(1, HOSTNAME, {}, matchLabelKeys=["bar"]),
            ],
        ),
        zone_hosts("node-a:zone1 node-b:zone1 node-c:zone2 node-d:zone2"),
        [
            *placed("p-a1", "node-a"),
            *placed("p-b1", "node-b", {"foo": "", "bar": ""}),
            *placed("p-y1", "node-c"),
            *placed("p-y2", "node-c", {"bar": ""}),
        ],
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
    ),
    ScoreCase(
        "TestPodTopologySpreadScore/matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        pod(
            labels={"foo": "", "bar": "", "baz": ""},
            spread=[soft(1, "zone"), soft(1, HOSTNAME, BAR, matchLabelKeys=["baz"])],
        ),
        zone_hosts("node-a:zone1 node-b:zone1 node-c:zone2 node-d:zone2"),
        [
            *placed("p-a1", "node-a"),
            *placed("p-b1", "node-b", {"foo": "", "bar": "", "baz": ""}),
            *placed("p-c1", "node-c"),
            *placed("p-c2", "node-c", {"bar": ""}),
            *placed("p-d3", "node-c", {"bar": "", "baz": ""}),
        ],
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
    ),
    ScoreCase(
        "(no upstream twin) the hostname key counts each node's own pods, not its label's domain",
        pod(labels={"foo": ""}, spread=[soft(1, HOSTNAME)]),
        [make_node("node-a", labels={HOSTNAME: "h"}), make_node("node-b", labels={HOSTNAME: "h"})],
        placed("p-a1 p-a2", "node-a"),
        # per domain both would get 2 (all 100); per node: 2*log(4) -> 3 and 0.
        {"node-a": 0, "node-b": 100},
    ),
]


@pytest.mark.parametrize("case", SCORES, ids=lambda c: c.upstream)
def test_score(case: ScoreCase) -> None:
    table = cluster([*case.nodes, *case.failed], case.pods)
    for manifest in case.objects:
        workload = workload_from_manifest(manifest)
        table.objects.upsert(workload)
    got = scores(case.incoming, table, [n.name for n in case.nodes])
    assert got == case.want


def test_raw_scores_round_half_away_from_zero() -> None:
    """Score returns int64(math.Round(score)); Go's Round is not numpy's banker's rounding."""
    assert go_round(np.array([0.5, 1.5, 2.5, 2.4999999999999996, 3.0])).tolist() == [1, 2, 3, 2, 3]


def test_normalize_with_ignored_nodes() -> None:
    """TestPodTopologySpreadScore/...one node doesn't match topology key: raw and normalized scores.

    node-a 4 pods, node-x 1; weight log(2 + 2) for the 2 nodes not ignored:
    raw round(4 * 1.386) = 6 and round(1.386) = 1, normalized 100 * (6 + 1 - s) / 6.
    """
    table = cluster(
        [*hosts("node-a"), make_node("node-b", labels={"n": "node-b"}), *hosts("node-x", "node-y")],
        [
            *placed("p-a1 p-a2 p-a3 p-a4", "node-a"),
            *placed("p-x1", "node-x"),
            *placed("p-y1 p-y2 p-y3", "node-y"),
        ],
    )
    incoming = pod(labels={"foo": ""}, spread=[soft(1, HOSTNAME)])
    names = ["node-a", "node-b", "node-x"]
    _, state, p, cycle = pre_score(incoming, table, names, None)
    assert state is not None
    assert state.spreads[0].weight == math.log(2 + 2)
    assert state.ignored[rows_of(table, names)].tolist() == [False, True, False]
    raw = p.score_batch(cycle, incoming, table, rows_of(table, names))
    assert raw.tolist() == [6, 0, 1]
    assert p.normalize_score(cycle, incoming, raw.copy(), rows_of(table, names)).tolist() == [
        16,
        0,
        100,
    ]


# -- PreScore state and Skip: TestPreScoreStateEmptyNodes, TestPreScoreSkip -------------------------


def add_objects(table: NodeTable, *manifests: dict[str, Any]) -> None:
    for manifest in manifests:
        workload = workload_from_manifest(manifest)
        table.objects.upsert(workload)


def replica_set(name: str, selector: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": selector},
    }


def test_pre_score_state_normal_case() -> None:
    """TestPreScoreStateEmptyNodes/normal case: zone weight log(2+2), hostname weight log(3+2)."""
    table = cluster(zone_hosts("node-a:zone1 node-b:zone1 node-x:zone2"))
    incoming = pod(labels={"foo": ""}, spread=[soft(1, "zone"), soft(1, HOSTNAME)])
    _, state, _, _ = pre_score(incoming, table, table.names, LIST)
    assert state is not None
    assert [s.weight for s in state.spreads] == [math.log(4), math.log(5)]
    assert not state.ignored.any()


def test_pre_score_state_node_without_zone_is_ignored() -> None:
    """TestPreScoreStateEmptyNodes/node-x doesn't have label zone: IgnoredNodes {node-x}, weights log(1+2), log(2+2)."""
    table = cluster([*zone_hosts("node-a:zone1 node-b:zone1"), *hosts("node-x")])
    incoming = pod(labels={"foo": ""}, spread=[soft(1, "zone"), soft(1, HOSTNAME, BAR)])
    _, state, _, _ = pre_score(incoming, table, table.names, LIST)
    assert state is not None
    assert state.ignored.tolist() == [False, False, True]
    assert [s.weight for s in state.spreads] == [math.log(3), math.log(4)]


def test_pre_score_state_system_defaults_and_a_replica_set() -> None:
    """TestPreScoreStateEmptyNodes/system default constraints and a replicaset.

    Nodes without a zone are not ignored: they form the zone "" (2 zones: mars and "").
    """
    table = cluster(
        [
            make_node("node-a", labels={HOSTNAME: "node-a", ZONE: "mars"}),
            make_node("node-b", labels={HOSTNAME: "node-b", ZONE: "mars"}),
            make_node("node-c", labels={HOSTNAME: "node-c"}),
            make_node("node-d", labels={HOSTNAME: "node-d"}),
        ]
    )
    add_objects(table, replica_set("rs1", FOO))
    incoming = pod(labels={"foo": "tar", "baz": "sup"}, owner=("ReplicaSet", "rs1"))
    _, state, _, _ = pre_score(incoming, table, table.names, None)
    assert state is not None
    assert [(s.constraint.topology_key, s.constraint.max_skew) for s in state.spreads] == [
        (HOSTNAME, 3),
        (ZONE, 5),
    ]
    assert [s.weight for s in state.spreads] == [math.log(4 + 2), math.log(2 + 2)]
    assert not state.ignored.any()


def test_pre_score_state_list_defaults_and_a_replica_set() -> None:
    """TestPreScoreStateEmptyNodes/default constraints and a replicaset: the DoNotSchedule one is left to Filter."""
    table = cluster(
        [make_node("node-a", labels={"rack": "rack1", HOSTNAME: "node-a", "planet": "mars"})]
    )
    add_objects(table, replica_set("rs1", FOO))
    args = {
        "defaultingType": "List",
        "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": "ScheduleAnyway"},
            {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"},
        ],
    }
    incoming = pod(labels={"foo": "tar", "baz": "sup"}, owner=("ReplicaSet", "rs1"))
    _, state, _, _ = pre_score(incoming, table, table.names, args)
    assert state is not None
    assert [(s.constraint.topology_key, s.constraint.max_skew) for s in state.spreads] == [
        (HOSTNAME, 1),
        ("planet", 2),
    ]
    assert all(s.constraint.selector.matches({"foo": "x"}) for s in state.spreads)
    assert [s.weight for s in state.spreads] == [math.log(3), math.log(3)]
    status, spreads = pre_filter(incoming, table, args)
    assert status is None and [s.constraint.topology_key for s in spreads] == ["rack"]


def test_pod_constraints_win_over_defaults() -> None:
    """TestPreScoreStateEmptyNodes/default constraints and a replicaset, but pod has constraints."""
    table = cluster([make_node("node-a", labels={"planet": "mars", "galaxy": "andromeda"})])
    add_objects(table, replica_set("rs1", FOO))
    args = {
        "defaultingType": "List",
        "defaultConstraints": [
            {"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": "ScheduleAnyway"}
        ],
    }
    incoming = pod(
        labels={"foo": "bar", "baz": "sup"},
        owner=("ReplicaSet", "rs1"),
        spread=[hard(1, "zone", BAR), soft(2, "planet", {"matchLabels": {"baz": "sup"}})],
    )
    _, state, _, _ = pre_score(incoming, table, table.names, args)
    assert state is not None
    assert [s.constraint.topology_key for s in state.spreads] == ["planet"]


@pytest.mark.parametrize(
    ("upstream", "incoming", "args", "objects"),
    [
        (
            "TestPreScoreSkip/the pod doesn't have soft topology spread Constraints",
            pod(),
            LIST,
            [],
        ),
        (
            "TestPreScoreSkip/default constraints and a replicaset that doesn't match",
            pod(labels={"foo": "bar", "baz": "sup"}, owner=("ReplicaSet", "rs2")),
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"}
                ],
            },
            [replica_set("rs1", {"matchExpressions": [{"key": "tar", "operator": "Exists"}]})],
        ),
        (
            "(no upstream twin) system defaults and nothing selects the pod: empty DefaultSelector",
            pod(labels={"foo": "bar"}),
            None,
            [{"kind": "Service", "metadata": {"name": "s"}, "spec": {"selector": {"baz": "kep"}}}],
        ),
    ],
)
def test_pre_score_skip(
    upstream: str, incoming: Pod, args: dict[str, Any] | None, objects: list[dict[str, Any]]
) -> None:
    table = cluster([make_node("node-a", labels={HOSTNAME: "node-a", "planet": "mars"})])
    add_objects(table, *objects)
    status, _, _, _ = pre_score(incoming, table, table.names, args)
    assert status is not None and status.code == Code.SKIP


def test_pre_score_skips_without_nodes() -> None:
    """PreScore returns Skip when there are no filtered nodes (v1.28: kubernetes#118608)."""
    table = cluster(hosts("node-a"))
    status, _, _, _ = pre_score(
        pod(labels={"foo": ""}, spread=[soft(1, HOSTNAME)]), table, [], None
    )
    assert status is not None and status.code == Code.SKIP


def test_default_hard_constraints_with_a_service() -> None:
    """TestPreFilterState/default constraints and a service (List): selector foo=bar from the Service."""
    table = cluster(
        [zoned("node-a", "zone1", rack="r1"), zoned("node-b", "zone1", rack="r2")],
        [*placed("p-a1", "node-a", {"foo": "bar"}), *placed("p-a2", "node-a", {"foo": "other"})],
    )
    add_objects(
        table,
        {
            "kind": "Service",
            "metadata": {"name": "s", "namespace": "default"},
            "spec": {"selector": {"foo": "bar"}},
        },
    )
    args = {
        "defaultingType": "List",
        "defaultConstraints": [
            {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "ScheduleAnyway"},
            {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"},
        ],
    }
    status, spreads = pre_filter(pod(labels={"foo": "bar", "baz": "kar"}), table, args)
    assert status is None
    assert [(s.constraint.topology_key, s.constraint.max_skew) for s in spreads] == [
        ("node", 3),
        ("rack", 5),
    ]
    assert spreads[0].match_nums() == {"node-a": 1, "node-b": 0}


def test_default_constraints_with_a_service_that_does_not_match() -> None:
    """TestPreFilterState/default constraints and a service that doesn't match: no constraints, Skip."""
    table = cluster([zoned("node-a", "zone1")])
    add_objects(
        table,
        {
            "kind": "Service",
            "metadata": {"name": "s", "namespace": "default"},
            "spec": {"selector": {"baz": "kep"}},
        },
    )
    args = {
        "defaultingType": "List",
        "defaultConstraints": [
            {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}
        ],
    }
    status, _ = pre_filter(pod(labels={"foo": "bar"}), table, args)
    assert status is not None and status.code == Code.SKIP


# -- malformed constraints ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}, "[0].topologyKey"),
        (
            {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
            "[0].maxSkew",
        ),
        (
            {"maxSkew": "1", "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
            "[0].maxSkew",
        ),
        (
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Sometimes"},
            "[0].whenUnsatisfiable",
        ),
        ({"maxSkew": 1, "topologyKey": "zone"}, "[0].whenUnsatisfiable"),
        (hard(1, "zone", minDomains=0), "[0].minDomains"),
        (hard(1, "zone", nodeTaintsPolicy="Always"), "[0].nodeTaintsPolicy"),
        (
            hard(1, "zone", {"matchExpressions": [{"key": "a", "operator": "Near"}]}),
            "[0].labelSelector.matchExpressions[0].operator",
        ),
        (
            hard(1, "zone", {"matchLabels": {"foo": ""}}, matchLabelKeys=["foo"]),
            "[0].matchLabelKeys[0]",
        ),
        (hard(1, "bad key!"), "[0].topologyKey"),
    ],
)
def test_malformed_constraint_is_unresolvable(raw: dict[str, Any], field: str) -> None:
    """(no upstream twin) The API server would refuse these pods; `simulate` gets them as given."""
    table = cluster(FOUR_NODES)
    incoming = pod(labels={"foo": ""}, spread=[raw])
    status, _ = pre_filter(incoming, table)
    assert status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message.startswith(
        f"invalid topology spread constraint: spec.topologySpreadConstraints{field}: "
    )
    pre_score_status, _, _, _ = pre_score(incoming, table, table.names, LIST)
    assert (
        pre_score_status is not None
        and pre_score_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    )


def test_duplicate_key_and_action_is_unresolvable() -> None:
    """(no upstream twin) validateTopologySpreadConstraints refuses a repeated {topologyKey, whenUnsatisfiable}."""
    incoming = pod(labels={"foo": ""}, spread=[hard(1, "zone"), soft(1, "zone"), hard(2, "zone")])
    status, _ = pre_filter(incoming, cluster(FOUR_NODES))
    assert status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert "spec.topologySpreadConstraints[2]: duplicate" in status.message


# -- args: TestValidatePodTopologySpreadArgs ------------------------------------------------------


@pytest.mark.parametrize(
    ("upstream", "args", "field"),
    [
        (
            "maxSkew less than zero",
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": -1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}
                ],
            },
            "defaultConstraints[0].maxSkew",
        ),
        (
            "empty topology key",
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "DoNotSchedule"}
                ],
            },
            "defaultConstraints[0].topologyKey",
        ),
        (
            "whenUnsatisfiable is empty",
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": ""}
                ],
            },
            "defaultConstraints[0].whenUnsatisfiable",
        ),
        (
            "whenUnsatisfiable contains unsupported action",
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "unknown action"}
                ],
            },
            "defaultConstraints[0].whenUnsatisfiable",
        ),
        (
            "duplicated constraints",
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
                    {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
                ],
            },
            "defaultConstraints[1]",
        ),
        (
            "label selector present",
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "key",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {"matchLabels": {"a": "b"}},
                    }
                ],
            },
            "defaultConstraints[0].labelSelector",
        ),
        (
            "wrong constraints",
            {
                "defaultingType": "System",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}
                ],
            },
            "defaultingType",
        ),
        (
            "(v1 defaulting) defaultConstraints without defaultingType: System with constraints",
            {
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}
                ]
            },
            "defaultingType",
        ),
        ("unknown defaulting type", {"defaultingType": "Unknown"}, "defaultingType"),
        ("(no upstream twin) unknown arg", {"defaultConstraint": []}, "defaultConstraint"),
        (
            "(no upstream twin) unknown constraint field",
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "node",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "maxskew": 2,
                    }
                ],
            },
            "defaultConstraints[0].maxskew",
        ),
    ],
)
def test_args_refused(upstream: str, args: dict[str, Any], field: str) -> None:
    """TestValidatePodTopologySpreadArgs/<upstream>: refused, naming the field."""
    with pytest.raises(PluginArgsError) as refused:
        plugin(NAME, args)
    assert refused.value.field == field


def test_args_messages() -> None:
    """The refusal reads as field: problem, the field a path inside the args."""
    bad = {
        "defaultingType": "List",
        "defaultConstraints": [
            {"maxSkew": 0, "topologyKey": "n", "whenUnsatisfiable": "DoNotSchedule"}
        ],
    }
    with pytest.raises(
        PluginArgsError, match=r"^defaultConstraints\[0\]\.maxSkew: must be greater than zero"
    ):
        plugin(NAME, bad)


@pytest.mark.parametrize(
    ("upstream", "args"),
    [
        (
            "valid config",
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
                    {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"},
                ],
            },
        ),
        ("list default constraints, no constraints", {"defaultingType": "List"}),
        ("system default constraints", {"defaultingType": "System"}),
        ("(v1 defaulting) no args: System", {}),
    ],
)
def test_args_accepted(upstream: str, args: dict[str, Any]) -> None:
    """TestValidatePodTopologySpreadArgs/<upstream>."""
    p = plugin(NAME, args)
    assert p.args.system_defaulted == (args.get("defaultingType", "System") == "System")


# -- registration -------------------------------------------------------------------------------


def test_events_to_register() -> None:
    """EventsToRegister (v1.28): Pod All; Node Add|Delete|UpdateNodeLabel (ours: Node Update)."""
    assert set(plugin(NAME, LIST).events_to_register()) == {
        ASSIGNED_POD_ADD,
        ASSIGNED_POD_UPDATE,
        ASSIGNED_POD_DELETE,
        NODE_ADD,
        NODE_DELETE,
        NODE_UPDATE,
    }


def test_registered_in_tree() -> None:
    assert NAME in {p.name for p in IN_TREE}


def test_pod_table_tracks_terminating_pods() -> None:
    """PodTable.deleting follows adds, updates and swap-removals."""
    table = cluster(
        hosts("node-a"), [*placed("p1", "node-a", deleting=True), *placed("p2 p3", "node-a")]
    )
    assert table.placed.deleting.tolist() == [True, False, False]
    table.remove_pod("uid-default-p1", "node-a")
    assert table.placed.deleting.tolist() == [False, False]
    table.add_pod(pod("p2", {"foo": ""}, node="node-a", deleting=True), "node-a")
    assert sorted(table.placed.deleting.tolist()) == [False, True]


# -- the batch form against a loop: upstream's algorithm node by node, pod by pod ------------------


def _count(pods: Sequence[Pod], selector: Any, namespace: str) -> int:
    """countPodsMatchSelector (v1.28)."""
    if selector.is_everything:
        return 0
    return sum(
        1
        for p in pods
        if not p.deleting and p.namespace == namespace and selector.matches(p.labels)
    )


def _included(c: Any, incoming: Pod, table: NodeTable, row: int) -> bool:
    """matchNodeInclusionPolicies for one node."""
    if c.honor_affinity and not required_affinity(incoming).matches(table, np.array([row]))[0]:
        return False
    untolerated = find_untolerated(
        table.nodes[row].taints, incoming.tolerations, ("NoSchedule", "NoExecute")
    )
    return not (c.honor_taints and untolerated is not None)


def reference_filter(incoming: Pod, constraints: Sequence[Any], table: NodeTable) -> dict[str, str]:
    """calPreFilterState + Filter, as filtering.go loops them."""
    pairs: dict[tuple[str, str], int] = {}
    for row, n in enumerate(table.nodes):
        if not all(c.topology_key in n.labels for c in constraints):
            continue
        for c in constraints:
            if _included(c, incoming, table, row):
                pair = (c.topology_key, n.labels[c.topology_key])
                pods = list(table.pods[row].values())
                pairs[pair] = pairs.get(pair, 0) + _count(pods, c.selector, incoming.namespace)
    out = {}
    for n in table.nodes:
        out[n.name] = OK
        for c in constraints:
            if c.topology_key not in n.labels:
                out[n.name] = UU
                break
            domains = {v: k for (key, v), k in pairs.items() if key == c.topology_key}
            if not domains:
                continue
            low = 0 if len(domains) < c.min_domains else min(domains.values())
            skew = (
                domains.get(n.labels[c.topology_key], 0)
                + int(c.selector.matches(incoming.labels))
                - low
            )
            if skew > c.max_skew:
                out[n.name] = U
                break
    return out


def reference_scores(
    incoming: Pod,
    constraints: Sequence[Any],
    table: NodeTable,
    candidates: Sequence[str],
    require_all: bool,
) -> dict[str, int]:
    """initPreScoreState + PreScore + Score + NormalizeScore, as scoring.go loops them."""
    rows = [table.row_of(n) for n in candidates]
    ignored = set()
    pairs: dict[tuple[str, str], int] = {}
    sizes = [0] * len(constraints)
    for row in rows:
        labels = table.nodes[row].labels
        if require_all and not all(c.topology_key in labels for c in constraints):
            ignored.add(row)
            continue
        for i, c in enumerate(constraints):
            pair = (c.topology_key, labels.get(c.topology_key, ""))
            if c.topology_key != HOSTNAME and pair not in pairs:
                pairs[pair] = 0
                sizes[i] += 1
    weights = [
        math.log((len(rows) - len(ignored) if c.topology_key == HOSTNAME else sizes[i]) + 2)
        for i, c in enumerate(constraints)
    ]
    for row, n in enumerate(table.nodes):
        if require_all and not all(c.topology_key in n.labels for c in constraints):
            continue
        for c in constraints:
            pair = (c.topology_key, n.labels.get(c.topology_key, ""))
            if _included(c, incoming, table, row) and pair in pairs:
                pairs[pair] += _count(
                    list(table.pods[row].values()), c.selector, incoming.namespace
                )
    raw = {}
    for row in rows:
        if row in ignored:
            raw[row] = 0
            continue
        labels = table.nodes[row].labels
        total = 0.0
        for i, c in enumerate(constraints):
            if c.topology_key in labels:
                if c.topology_key == HOSTNAME:
                    count = _count(list(table.pods[row].values()), c.selector, incoming.namespace)
                else:
                    count = pairs[(c.topology_key, labels[c.topology_key])]
                total += count * weights[i] + (c.max_skew - 1)
        raw[row] = math.floor(total + 0.5)
    valid = [s for r, s in raw.items() if r not in ignored]
    high, low = max([0, *valid]), min(valid, default=0)
    return {
        table.names[r]: 0 if r in ignored else 100 if high == 0 else 100 * (high + low - s) // high
        for r, s in raw.items()
    }


def _random_cluster(rng: np.random.Generator) -> NodeTable:
    nodes = []
    for i in range(int(rng.integers(1, 10))):
        labels = {}
        for key, values in (
            ("zone", ["z1", "z2", "z3", ""]),
            (HOSTNAME, [f"n{i}", "shared"]),
            ("rack", ["r1", "r2"]),
        ):
            if rng.random() < 0.85:
                labels[key] = str(rng.choice(values))
        if rng.random() < 0.5:
            labels["disk"] = "ssd"
        taints = [UNSCHEDULABLE_TAINT] if rng.random() < 0.25 else []
        nodes.append(make_node(f"n{i}", labels=labels, taints=taints))
    table = cluster(nodes)
    for j in range(int(rng.integers(0, 30))):
        labels = {k: str(rng.choice(["a", "b"])) for k in ("app", "tier") if rng.random() < 0.7}
        where = f"n{rng.integers(len(nodes))}"
        namespace = "default" if rng.random() < 0.8 else "other"
        table.add_pod(
            pod(
                f"p{j}", labels, node=where, namespace=namespace, deleting=bool(rng.random() < 0.1)
            ),
            where,
        )
    return table


def _random_constraint(rng: np.random.Generator, key: str, when: str) -> dict[str, Any]:
    selectors: list[dict[str, Any] | None] = [
        {"matchLabels": {"app": "a"}},
        {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
        {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["b"]}]},
        {},
        None,
    ]
    extra: dict[str, Any] = {}
    if rng.random() < 0.3:
        extra["minDomains"] = int(rng.integers(1, 5))
    if rng.random() < 0.3:
        extra["nodeAffinityPolicy"] = str(rng.choice(["Honor", "Ignore"]))
    if rng.random() < 0.3:
        extra["nodeTaintsPolicy"] = str(rng.choice(["Honor", "Ignore"]))
    if rng.random() < 0.2:
        extra["matchLabelKeys"] = ["tier"]
    selector = selectors[int(rng.integers(len(selectors)))]
    if selector is not None and "matchLabelKeys" in extra and "tier" in str(selector):
        del extra["matchLabelKeys"]
    return constraint(int(rng.integers(1, 3)), key, when, selector, **extra)


@pytest.mark.parametrize("seed", range(150))
def test_batch_form_equals_upstreams_loops(seed: int) -> None:
    """(no upstream twin) Random clusters: Filter verdicts and normalized scores equal a
    node-by-node, pod-by-pod port of filtering.go and scoring.go."""
    rng = np.random.default_rng(seed)
    table = _random_cluster(rng)
    add_objects(
        table,
        {
            "kind": "Service",
            "metadata": {"name": "s", "namespace": "default"},
            "spec": {"selector": {"app": "a"}},
        },
    )
    keys = [str(k) for k in rng.permutation(["zone", HOSTNAME, "rack"])[: int(rng.integers(0, 4))]]
    spread = [
        _random_constraint(rng, k, str(rng.choice(["DoNotSchedule", "ScheduleAnyway"])))
        for k in keys
    ]
    spec: dict[str, Any] = {}
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"disk": "ssd"}
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]
    labels = {k: str(rng.choice(["a", "b"])) for k in ("app", "tier") if rng.random() < 0.8}
    incoming = pod("incoming", labels, spread=spread, **spec)
    args: dict[str, Any] = {} if rng.random() < 0.5 else LIST
    p = plugin(NAME, args, table)
    own = pod_specs(incoming)
    hard_constraints = constraints_for(incoming, own, p.args, table.objects, "DoNotSchedule")
    soft_constraints = constraints_for(incoming, own, p.args, table.objects, "ScheduleAnyway")

    want_filter = (
        reference_filter(incoming, hard_constraints, table)
        if hard_constraints
        else dict.fromkeys(table.names, OK)
    )
    assert filter_codes(incoming, table, args) == want_filter

    candidates = [n for n in table.names if rng.random() < 0.7]
    if soft_constraints and candidates:
        require_all = bool(spread) or not p.args.system_defaulted
        want = reference_scores(incoming, soft_constraints, table, candidates, require_all)
        assert scores(incoming, table, candidates, args) == want


@pytest.mark.parametrize(
    ("terms", "want"),
    [
        (
            [{"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}],
            [True, False],
        ),
        (
            [
                {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]},
                {"matchExpressions": [{"key": "disk", "operator": "Bogus"}]},
            ],
            [True, False],
        ),
        (
            [
                {"matchExpressions": [{"key": "disk", "operator": "Bogus"}]},
                {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]},
            ],
            [False, False],
        ),
    ],
)
def test_required_affinity_ignores_parse_errors_as_upstream(
    terms: list[Any], want: list[bool]
) -> None:
    """(no upstream twin) GetRequiredNodeAffinity's LazyErrorNodeSelector: terms are tried in
    order and the first one that does not parse ends the match as 'no'."""
    table = cluster([node("node-a", disk="ssd"), node("node-b")])
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        }
    }
    incoming = pod(affinity=affinity)
    assert required_affinity(incoming).matches(table, np.arange(2)).tolist() == want
