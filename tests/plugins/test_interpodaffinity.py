"""InterPodAffinity against kube-scheduler v1.28's tables.

Each case names the upstream test function and case (filtering_test.go,
scoring_test.go in pkg/scheduler/framework/plugins/interpodaffinity) it is
ported from. Upstream's pods in namespace "" are in "default" here (the
model defaults an empty namespace), and a term's `namespaces: [""]` is
ported as `["default"]`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from eventsched.framework import Code, CycleState, PluginArgsError, Status
from eventsched.model import NodeTable, Pod
from eventsched.model.objects import Namespace
from tests.plugins.conftest import make_node, plugin

NAME = "InterPodAffinity"
AFFINITY = "node(s) didn't match pod affinity rules"
ANTI = "node(s) didn't match pod anti-affinity rules"
EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"

# -- building pods and tables ---------------------------------------------------------


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def term(topology: str | None, *exprs: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A PodAffinityTerm selecting with `exprs` (matchExpressions)."""
    out: dict[str, Any] = {"labelSelector": {"matchExpressions": list(exprs)}, **extra}
    if topology is not None:
        out["topologyKey"] = topology
    return out


def weighted(weight: int, t: dict[str, Any]) -> dict[str, Any]:
    return {"weight": weight, "podAffinityTerm": t}


def affinity(
    required: Sequence[dict[str, Any]] = (),
    anti: Sequence[dict[str, Any]] = (),
    preferred: Sequence[dict[str, Any]] = (),
    preferred_anti: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if required or preferred:
        out["podAffinity"] = {REQUIRED: list(required), PREFERRED: list(preferred)}
    if anti or preferred_anti:
        out["podAntiAffinity"] = {REQUIRED: list(anti), PREFERRED: list(preferred_anti)}
    return out


_COUNTER = iter(range(1_000_000))


def pod(
    labels: Mapping[str, str] | None = None,
    aff: Mapping[str, Any] | None = None,
    node: str = "",
    ns: str = "default",
    name: str = "",
    deleting: bool = False,
) -> Pod:
    name = name or f"p{next(_COUNTER)}"
    meta: dict[str, Any] = {"name": name, "namespace": ns, "uid": f"uid-{name}"}
    meta["labels"] = dict(labels or {})
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "affinity": dict(aff or {})}
    if node:
        spec["nodeName"] = node
    return Pod.from_manifest({"metadata": meta, "spec": spec})


NS_TEAM = {
    "subteam1.team1": {"team": "team1"},
    "subteam2.team1": {"team": "team1"},
    "subteam1.team2": {"team": "team2"},
    "subteam2.team2": {"team": "team2"},
}


def cluster(
    nodes: Mapping[str, Mapping[str, str]],
    pods: Sequence[Pod] = (),
    namespaces: Mapping[str, Mapping[str, str]] = NS_TEAM,
) -> NodeTable:
    table = NodeTable([make_node(n, labels=dict(labels)) for n, labels in nodes.items()])
    for p in pods:
        table.add_pod(p, p.node_name)
    for name, labels in namespaces.items():
        table.objects.upsert(Namespace(name, dict(labels)))
    return table


@dataclass
class Filtered:
    pre_filter: Status | None
    statuses: list[Status | None] = field(default_factory=list)


def run_filter(p: Pod, table: NodeTable, args: dict[str, Any] | None = None) -> Filtered:
    plug = plugin(NAME, args, table)
    state = CycleState()
    _, status = plug.pre_filter(state, p, table)
    if status is not None:
        return Filtered(status)
    result = plug.filter_batch(state, p, table, np.arange(len(table)))
    return Filtered(None, [None if v < 0 else result.statuses[v] for v in result.verdict])


def verdicts(filtered: Filtered) -> list[tuple[Code, str] | None]:
    return [None if s is None else (s.code, s.message) for s in filtered.statuses]


@dataclass
class Scored:
    pre_score: Status | None
    raw: list[int] = field(default_factory=list)
    normalized: list[int] = field(default_factory=list)


def run_score(p: Pod, table: NodeTable, args: dict[str, Any] | None = None) -> Scored:
    plug = plugin(NAME, {"hardPodAffinityWeight": 1, **(args or {})}, table)
    state = CycleState()
    rows = np.arange(len(table))
    status = plug.pre_score(state, p, table, rows)
    if status is not None:
        return Scored(status)
    raw = plug.score_batch(state, p, table, rows)
    normalized = plug.normalize_score(state, p, raw.copy(), rows)
    return Scored(None, [int(x) for x in raw], [int(x) for x in normalized])


U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE

# -- TestRequiredAffinitySingleNode ---------------------------------------------------

SECURITYSCAN = {"service": "securityscan"}
S1_SECURITY = {"security": "S1"}
NODE1 = {"node1": {"region": "r1", "zone": "z11"}}


def existing(**kw: Any) -> Pod:
    return pod(node="node1", **kw)


SINGLE_NODE = [
    pytest.param(pod(), [], "skip", id="no required affinity rules, no existing pods"),
    pytest.param(
        pod(
            S1_SECURITY, affinity([term("region", expr("service", "In", "securityscan", "value2"))])
        ),
        [existing(labels=SECURITYSCAN)],
        None,
        id="satisfies required PodAffinity using In operator",
    ),
    pytest.param(
        pod(
            S1_SECURITY,
            affinity([term("region", expr("service", "NotIn", "securityscan3", "value3"))]),
        ),
        [existing(labels=SECURITYSCAN)],
        None,
        id="satisfies required PodAffinity using NotIn operator",
    ),
    pytest.param(
        pod(
            S1_SECURITY,
            affinity(
                [
                    term(
                        None,
                        expr("service", "In", "securityscan", "value2"),
                        namespaces=["DiffNameSpace"],
                    )
                ]
            ),
        ),
        [existing(labels=SECURITYSCAN, ns="ns")],
        (UU, AFFINITY),
        id="Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
    ),
    pytest.param(
        pod(SECURITYSCAN, affinity([term("", expr("service", "In", "antivirusscan", "value2"))])),
        [existing(labels=SECURITYSCAN)],
        (UU, AFFINITY),
        id="Doesn't satisfy the PodAffinity because of unmatching labelSelector",
    ),
    pytest.param(
        pod(
            S1_SECURITY,
            affinity(
                [
                    term("region", expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
                    term(
                        "region",
                        expr("service", "In", "securityscan"),
                        expr("service", "NotIn", "WrongValue"),
                    ),
                ]
            ),
        ),
        [existing(labels=SECURITYSCAN)],
        None,
        id="satisfies the PodAffinity with different label Operators in multiple terms",
    ),
    pytest.param(
        pod(
            S1_SECURITY,
            affinity(
                [
                    term("region", expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
                    term(
                        "region",
                        expr("service", "In", "securityscan2"),
                        expr("service", "NotIn", "WrongValue"),
                    ),
                ]
            ),
        ),
        [existing(labels=SECURITYSCAN)],
        (UU, AFFINITY),
        id="matchExpressions are ANDed: one item does not match",
    ),
    pytest.param(
        pod(
            S1_SECURITY,
            affinity(
                [term("region", expr("service", "In", "securityscan", "value2"))],
                [term("node", expr("service", "In", "antivirusscan", "value2"))],
            ),
        ),
        [existing(labels=SECURITYSCAN)],
        None,
        id="satisfies the PodAffinity and PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        pod(
            S1_SECURITY,
            affinity(
                [term("region", expr("service", "In", "securityscan", "value2"))],
                [term("node", expr("service", "In", "antivirusscan", "value2"))],
            ),
        ),
        [
            existing(
                labels=SECURITYSCAN,
                aff=affinity(anti=[term("node", expr("service", "In", "antivirusscan", "value2"))]),
            )
        ],
        None,
        id="satisfies PodAffinity, PodAntiAffinity and PodAntiAffinity symmetry",
    ),
    pytest.param(
        pod(
            S1_SECURITY,
            affinity(
                [term("region", expr("service", "In", "securityscan", "value2"))],
                [term("zone", expr("service", "In", "securityscan", "value2"))],
            ),
        ),
        [existing(labels=SECURITYSCAN)],
        (U, ANTI),
        id="satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity",
    ),
    pytest.param(
        pod(
            SECURITYSCAN,
            affinity(
                [term("region", expr("service", "In", "securityscan", "value2"))],
                [term("node", expr("service", "In", "antivirusscan", "value2"))],
            ),
        ),
        [
            existing(
                labels=SECURITYSCAN,
                aff=affinity(anti=[term("zone", expr("service", "In", "securityscan", "value2"))]),
            )
        ],
        (U, EXISTING),
        id="satisfies PodAffinity and PodAntiAffinity but not PodAntiAffinity symmetry",
    ),
    pytest.param(
        pod(
            SECURITYSCAN,
            affinity([term("region", expr("service", "NotIn", "securityscan", "value2"))]),
        ),
        [pod(SECURITYSCAN, node="node2")],
        (UU, AFFINITY),
        id="pod matches its own Label in PodAffinity and that matches the existing pod Labels",
    ),
    pytest.param(
        pod(SECURITYSCAN),
        [
            existing(
                labels=SECURITYSCAN,
                aff=affinity(anti=[term("zone", expr("service", "In", "securityscan", "value2"))]),
            )
        ],
        (U, EXISTING),
        id="existing PodAntiAffinity respected when pod has none: violated",
    ),
    pytest.param(
        pod(SECURITYSCAN),
        [
            existing(
                labels=SECURITYSCAN,
                aff=affinity(
                    anti=[term("zone", expr("service", "NotIn", "securityscan", "value2"))]
                ),
            )
        ],
        "skip",
        id="existing PodAntiAffinity respected when pod has none: satisfied",
    ),
    pytest.param(
        pod(
            SECURITYSCAN,
            affinity(
                anti=[
                    term("region", expr("service", "Exists")),
                    term("region", expr("security", "Exists")),
                ]
            ),
        ),
        [
            existing(
                labels=S1_SECURITY, aff=affinity(anti=[term("zone", expr("security", "Exists"))])
            )
        ],
        (U, ANTI),
        id="satisfies PodAntiAffinity with existing pod but not PodAntiAffinity symmetry with incoming pod",
    ),
    pytest.param(
        pod(
            SECURITYSCAN,
            affinity(
                anti=[
                    term("zone", expr("service", "Exists")),
                    term("zone", expr("security", "Exists")),
                ]
            ),
        ),
        [
            existing(
                labels=S1_SECURITY, aff=affinity(anti=[term("zone", expr("security", "Exists"))])
            )
        ],
        (U, ANTI),
        id="PodAntiAffinity symmetry check a1",
    ),
    pytest.param(
        pod(S1_SECURITY, affinity(anti=[term("zone", expr("security", "Exists"))])),
        [
            existing(
                labels=SECURITYSCAN,
                aff=affinity(
                    anti=[
                        term("zone", expr("service", "Exists")),
                        term("zone", expr("security", "Exists")),
                    ]
                ),
            )
        ],
        (U, EXISTING),
        id="PodAntiAffinity symmetry check a2",
    ),
    pytest.param(
        pod(
            {"abc": "", "xyz": ""},
            affinity(
                anti=[term("zone", expr("abc", "Exists")), term("zone", expr("def", "Exists"))]
            ),
        ),
        [
            existing(
                labels={"def": "", "xyz": ""},
                aff=affinity(
                    anti=[term("zone", expr("abc", "Exists")), term("zone", expr("def", "Exists"))]
                ),
            )
        ],
        (U, ANTI),
        id="PodAntiAffinity symmetry check b1",
    ),
    pytest.param(
        pod(
            {"def": "", "xyz": ""},
            affinity(
                anti=[term("zone", expr("abc", "Exists")), term("zone", expr("def", "Exists"))]
            ),
        ),
        [
            existing(
                labels={"abc": "", "xyz": ""},
                aff=affinity(
                    anti=[term("zone", expr("abc", "Exists")), term("zone", expr("def", "Exists"))]
                ),
            )
        ],
        (U, ANTI),
        id="PodAntiAffinity symmetry check b2",
    ),
    pytest.param(
        pod(
            S1_SECURITY,
            affinity(
                [
                    term(
                        "region",
                        expr("service", "In", "securityscan", "value2"),
                        namespaceSelector={"matchExpressions": [expr("team", "In", "team1")]},
                    )
                ]
            ),
        ),
        [existing(labels=SECURITYSCAN, ns="subteam1.team1")],
        None,
        id="affinity with NamespaceSelector",
    ),
    pytest.param(
        pod(
            S1_SECURITY,
            affinity(
                [
                    term(
                        "region",
                        expr("service", "In", "securityscan", "value2"),
                        namespaceSelector={"matchExpressions": [expr("team", "In", "team1")]},
                    )
                ]
            ),
        ),
        [existing(labels=SECURITYSCAN, ns="subteam1.team2")],
        (UU, AFFINITY),
        id="affinity with non-matching NamespaceSelector",
    ),
    pytest.param(
        pod(
            S1_SECURITY,
            affinity(
                anti=[
                    term(
                        "zone",
                        expr("service", "In", "securityscan", "value2"),
                        namespaceSelector={"matchExpressions": [expr("team", "In", "team1")]},
                    )
                ]
            ),
            ns="subteam1.team1",
        ),
        [existing(labels=SECURITYSCAN, ns="subteam2.team1")],
        (U, ANTI),
        id="anti-affinity with matching NamespaceSelector",
    ),
    pytest.param(
        pod(
            S1_SECURITY,
            affinity(
                anti=[
                    term(
                        "zone",
                        expr("service", "In", "securityscan", "value2"),
                        namespaceSelector={},
                    )
                ]
            ),
            ns="subteam1.team1",
        ),
        [existing(labels=SECURITYSCAN, ns="subteam2.team1")],
        (U, ANTI),
        id="anti-affinity with matching all NamespaceSelector",
    ),
    pytest.param(
        pod(
            S1_SECURITY,
            affinity(
                anti=[
                    term(
                        "zone",
                        expr("service", "In", "securityscan", "value2"),
                        namespaceSelector={"matchExpressions": [expr("team", "In", "team1")]},
                    )
                ]
            ),
            ns="subteam1.team1",
        ),
        [existing(labels=SECURITYSCAN, ns="subteam1.team2")],
        None,
        id="anti-affinity with non-matching NamespaceSelector",
    ),
]


@pytest.mark.parametrize(("incoming", "pods", "want"), SINGLE_NODE)
def test_required_affinity_single_node(incoming: Pod, pods: list[Pod], want: Any) -> None:
    """filtering_test.go TestRequiredAffinitySingleNode, case named by the id."""
    table = cluster({**NODE1, "node2": {}}, pods)
    filtered = run_filter(incoming, table)
    if want == "skip":
        assert filtered.pre_filter is not None and filtered.pre_filter.is_skip
        return
    assert filtered.pre_filter is None
    assert verdicts(filtered)[0] == want


def test_invalid_label_syntax_fails_pre_filter_naming_the_field() -> None:
    """TestRequiredAffinitySingleNode "PodAffinity fails PreFilter with an invalid affinity label syntax"."""
    incoming = pod(
        SECURITYSCAN,
        affinity(
            [
                term("region", expr("service", "In", "{{.bad-value.}}")),
                term("node", expr("service", "In", "antivirusscan", "value2")),
            ]
        ),
    )
    status = run_filter(incoming, cluster(NODE1)).pre_filter
    assert status is not None and status.code == UU
    assert status.message.startswith(
        f"parsing pod: spec.affinity.podAffinity.{REQUIRED}[0].labelSelector: "
        'invalid label value "{{.bad-value.}}"'
    )


# -- TestRequiredAffinityMultipleNodes ------------------------------------------------

CHINA, INDIA = {"region": "China"}, {"region": "India"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
R1Z1 = {"region": "r1", "zone": "z1"}
R1Z2 = {"region": "r1", "zone": "z2"}

MULTIPLE_NODES = [
    pytest.param(
        pod(aff=affinity([term("region", expr("foo", "In", "bar"))])),
        {"node1": CHINA, "node2": CHINA_AZ1, "node3": INDIA},
        [pod({"foo": "bar"}, node="node1")],
        [None, None, (UU, AFFINITY)],
        id="same topology key and value as a node with a matching pod",
    ),
    pytest.param(
        pod(
            {"foo": "bar", "service": "securityscan"},
            affinity(
                [
                    term("zone", expr("foo", "In", "bar")),
                    term("zone", expr("service", "In", "securityscan")),
                ]
            ),
        ),
        {"nodeA": {"zone": "az1", "hostname": "h1"}, "nodeB": {"zone": "az2", "hostname": "h2"}},
        [pod({"foo": "bar"}, node="nodeA")],
        [None, None],
        id="first pod of the collection is not blocked when no pod matches anywhere",
    ),
    pytest.param(
        pod(
            {"foo": "bar", "service": "securityscan"},
            affinity(
                [
                    term("zone", expr("foo", "In", "bar")),
                    term("zone", expr("service", "In", "securityscan")),
                ]
            ),
        ),
        {
            "nodeA": {"zoneLabel": "az1", "hostname": "h1"},
            "nodeB": {"zoneLabel": "az2", "hostname": "h2"},
        },
        [pod({"foo": "bar"}, node="nodeA")],
        [(UU, AFFINITY), (UU, AFFINITY)],
        id="first pod only on nodes labelled with the requested topology keys",
    ),
    pytest.param(
        pod(aff=affinity(anti=[term("region", expr("foo", "In", "abc"))])),
        {
            "nodeA": {"region": "r1", "hostname": "nodeA"},
            "nodeB": {"region": "r1", "hostname": "nodeB"},
        },
        [pod({"foo": "abc"}, node="nodeA")],
        [(U, ANTI), (U, ANTI)],
        id="nodeA and nodeB share a region; nodeA has a matching pod",
    ),
    pytest.param(
        pod(
            aff=affinity(
                anti=[
                    term("region", expr("foo", "In", "abc")),
                    term("zone", expr("service", "In", "securityscan")),
                ]
            )
        ),
        {"nodeA": {**R1Z1, "hostname": "nodeA"}, "nodeB": {**R1Z2, "hostname": "nodeB"}},
        [pod({"foo": "abc", "service": "securityscan"}, node="nodeA")],
        [(U, ANTI), (U, ANTI)],
        id="anti-affinity matches when any term matches",
    ),
    pytest.param(
        pod(aff=affinity(anti=[term("region", expr("foo", "In", "abc"))])),
        {"nodeA": CHINA, "nodeB": CHINA_AZ1, "nodeC": INDIA},
        [pod({"foo": "abc"}, node="nodeA")],
        [(U, ANTI), (U, ANTI), None],
        id="nodeA and nodeB excluded, nodeC fits",
    ),
    pytest.param(
        pod({"foo": "123"}, affinity(anti=[term("region", expr("foo", "In", "bar"))]), ns="NS1"),
        {"nodeA": CHINA, "nodeB": CHINA_AZ1, "nodeC": INDIA},
        [
            pod({"foo": "bar"}, node="nodeA", ns="NS1"),
            pod(
                node="nodeC",
                ns="NS2",
                aff=affinity(anti=[term("region", expr("foo", "In", "123"))]),
            ),
        ],
        [(U, ANTI), (U, ANTI), None],
        id="nodeC's pod matches but in a different namespace",
    ),
    pytest.param(
        pod({"foo": ""}),
        {"nodeA": {**R1Z1, "hostname": "nodeA"}, "nodeB": {**R1Z1, "hostname": "nodeB"}},
        [pod(node="nodeA", aff=affinity(anti=[term("invalid-node-label", expr("foo", "Exists"))]))],
        "skip",
        id="existing pod's term with a topologyKey no node has is not counted",
    ),
    pytest.param(
        pod(aff=affinity(anti=[term("invalid-node-label", expr("foo", "Exists"))])),
        {"nodeA": {**R1Z1, "hostname": "nodeA"}, "nodeB": {**R1Z1, "hostname": "nodeB"}},
        [pod({"foo": ""}, node="nodeA")],
        [None, None],
        id="incoming anti-affinity: labelSelector matches but topologyKey does not",
    ),
    pytest.param(
        pod({"foo": "", "bar": ""}),
        {"nodeA": {**R1Z1, "hostname": "nodeA"}, "nodeB": {**R1Z2, "hostname": "nodeB"}},
        [
            pod(node="nodeA", aff=affinity(anti=[term("zone", expr("foo", "Exists"))])),
            pod(node="nodeA", aff=affinity(anti=[term("region", expr("bar", "Exists"))])),
        ],
        [(U, EXISTING), (U, EXISTING)],
        id="existing anti-affinity: incoming pod violates each existing pod's terms",
    ),
    pytest.param(
        pod(
            aff=affinity(
                anti=[term("zone", expr("foo", "Exists")), term("region", expr("bar", "Exists"))]
            )
        ),
        {"nodeA": {**R1Z1, "hostname": "nodeA"}, "nodeB": {**R1Z2, "hostname": "nodeB"}},
        [pod({"foo": ""}, node="nodeA"), pod({"bar": ""}, node="nodeB")],
        [(U, ANTI), (U, ANTI)],
        id="incoming anti-affinity: violates at least one term",
    ),
    pytest.param(
        pod({"foo": "", "bar": ""}),
        {"nodeA": {**R1Z1, "hostname": "nodeA"}, "nodeB": {**R1Z2, "hostname": "nodeB"}},
        [
            pod(
                node="nodeA",
                aff=affinity(
                    anti=[
                        term("invalid-node-label", expr("foo", "Exists")),
                        term("zone", expr("bar", "Exists")),
                    ]
                ),
            )
        ],
        [(U, EXISTING), None],
        id="existing anti-affinity: one term with invalid topologyKey",
    ),
    pytest.param(
        pod(
            aff=affinity(
                anti=[
                    term("invalid-node-label", expr("foo", "Exists")),
                    term("zone", expr("bar", "Exists")),
                ]
            )
        ),
        {"nodeA": {**R1Z1, "hostname": "nodeA"}, "nodeB": {**R1Z2, "hostname": "nodeB"}},
        [pod({"foo": "", "bar": ""}, node="nodeA")],
        [(U, ANTI), None],
        id="incoming anti-affinity: one term with invalid topologyKey",
    ),
    pytest.param(
        pod({"foo": "", "bar": ""}),
        {"nodeA": {**R1Z1, "hostname": "nodeA"}, "nodeB": {**R1Z2, "hostname": "nodeB"}},
        [
            pod(
                node="nodeA",
                aff=affinity(
                    anti=[
                        term("region", expr("foo", "Exists")),
                        term("zone", expr("bar", "Exists")),
                    ]
                ),
            )
        ],
        [(U, EXISTING), (U, EXISTING)],
        id="existing anti-affinity: all terms with valid topologyKey",
    ),
    pytest.param(
        pod(
            aff=affinity(
                anti=[term("region", expr("foo", "Exists")), term("zone", expr("bar", "Exists"))]
            )
        ),
        {"nodeA": {**R1Z1, "hostname": "nodeA"}, "nodeB": {**R1Z2, "hostname": "nodeB"}},
        [pod({"foo": "", "bar": ""}, node="nodeA")],
        [(U, ANTI), (U, ANTI)],
        id="incoming anti-affinity: all terms with valid topologyKey",
    ),
    pytest.param(
        pod({"foo": "", "bar": ""}),
        {
            "nodeA": {**R1Z1, "hostname": "nodeA"},
            "nodeB": {**R1Z2, "hostname": "nodeB"},
            "nodeC": {"region": "r1", "zone": "z3", "hostname": "nodeC"},
        },
        [
            pod(
                node="nodeA",
                aff=affinity(
                    anti=[
                        term("zone", expr("foo", "Exists")),
                        term("zone", expr("labelA", "Exists")),
                    ]
                ),
            ),
            pod(
                node="nodeB",
                aff=affinity(
                    anti=[
                        term("zone", expr("bar", "Exists")),
                        term("zone", expr("labelB", "Exists")),
                    ]
                ),
            ),
        ],
        [(U, EXISTING), (U, EXISTING), None],
        id="existing anti-affinity: only nodeC fits",
    ),
    pytest.param(
        pod(
            aff=affinity(
                [term("region", expr("foo", "Exists")), term("zone", expr("bar", "Exists"))]
            )
        ),
        {"nodeA": {**R1Z1, "hostname": "nodeA"}, "nodeB": {**R1Z1, "hostname": "nodeB"}},
        [pod({"foo": "", "bar": ""}, node="nodeA")],
        [None, None],
        id="incoming affinity: all terms match, then all topology keys",
    ),
    pytest.param(
        pod(
            aff=affinity(
                [term("region", expr("foo", "Exists")), term("zone", expr("bar", "Exists"))]
            )
        ),
        {"nodeA": {**R1Z1, "hostname": "nodeA"}, "nodeB": {**R1Z2, "hostname": "nodeB"}},
        [pod({"foo": ""}, node="nodeA"), pod({"bar": ""}, node="nodeB")],
        [(UU, AFFINITY), (UU, AFFINITY)],
        id="incoming affinity: terms must be satisfied by the same pod",
    ),
]


@pytest.mark.parametrize(("incoming", "nodes", "pods", "want"), MULTIPLE_NODES)
def test_required_affinity_multiple_nodes(
    incoming: Pod, nodes: dict[str, dict[str, str]], pods: list[Pod], want: Any
) -> None:
    """filtering_test.go TestRequiredAffinityMultipleNodes, case named by the id."""
    filtered = run_filter(incoming, cluster(nodes, pods))
    if want == "skip":
        assert filtered.pre_filter is not None and filtered.pre_filter.is_skip
        return
    assert filtered.pre_filter is None
    assert verdicts(filtered) == want


def test_filter_without_pre_filter_is_an_error() -> None:
    """filtering_test.go TestPreFilterDisabled."""
    table = cluster({"n": {}})
    plug = plugin(NAME, {}, table)
    result = plug.filter_batch(CycleState(), pod(), table, np.arange(1))
    status = result.statuses[result.verdict[0]]
    assert status.code == Code.ERROR
    assert status.message == 'error reading "PreFilterInterPodAffinity" from cycleState: not found'


# -- TestPreferredAffinity ------------------------------------------------------------

S1, S2 = {"security": "S1"}, {"security": "S2"}
AZ1, AZ2 = {"az": "az1"}, {"az": "az2"}
TEAM1 = {"matchExpressions": [expr("team", "In", "team1")]}

STAY_WITH_S1_IN_REGION = affinity(
    preferred=[weighted(5, term("region", expr("security", "In", "S1")))]
)
STAY_WITH_S2_IN_REGION = affinity(
    preferred=[weighted(6, term("region", expr("security", "In", "S2")))]
)
AFFINITY3 = affinity(
    preferred=[
        weighted(8, term("region", expr("security", "NotIn", "S1"), expr("security", "In", "S2"))),
        weighted(2, term("region", expr("security", "Exists"), expr("wrongkey", "DoesNotExist"))),
    ]
)
HARD_AFFINITY = affinity(
    [
        term("region", expr("security", "In", "S1", "value2")),
        term("region", expr("security", "Exists"), expr("wrongkey", "DoesNotExist")),
    ]
)
AWAY_FROM_S1_IN_AZ = affinity(
    preferred_anti=[weighted(5, term("az", expr("security", "In", "S1")))]
)
AWAY_FROM_S2_IN_AZ = affinity(
    preferred_anti=[weighted(5, term("az", expr("security", "In", "S2")))]
)
STAY_WITH_S1_AWAY_FROM_S2 = affinity(
    preferred=[weighted(8, term("region", expr("security", "In", "S1")))],
    preferred_anti=[weighted(5, term("az", expr("security", "In", "S2")))],
)
NS_SELECTOR_TERM = term(
    "region", expr("security", "In", "S1"), namespaces=["subteam2.team2"], namespaceSelector=TEAM1
)
AFFINITY_NS_SELECTOR = affinity(preferred=[weighted(5, NS_SELECTOR_TERM)])
ANTI_AFFINITY_NS_SELECTOR = affinity(preferred_anti=[weighted(5, NS_SELECTOR_TERM)])
THREE_NODES = {"node1": CHINA, "node2": INDIA, "node3": AZ1}


def on(node: str, labels: Mapping[str, str] | None = None, **kw: Any) -> Pod:
    return pod(labels, node=node, **kw)


PREFERRED_CASES = [
    pytest.param(
        pod(S1), THREE_NODES, [], "skip", id="all nodes are same priority as Affinity is nil"
    ),
    pytest.param(
        pod(S1, STAY_WITH_S1_IN_REGION),
        THREE_NODES,
        [on("node1", S1), on("node2", S2), on("node3", S1)],
        [100, 0, 0],
        id="Affinity: pod that matches topology key & pods in nodes will get high score",
    ),
    pytest.param(
        pod(aff=STAY_WITH_S1_IN_REGION),
        {"node1": CHINA, "node2": CHINA_AZ1, "node3": INDIA},
        [on("node1", S1)],
        [100, 100, 0],
        id="All the nodes that have the same topology key & label value have the same score",
    ),
    pytest.param(
        pod(S1, STAY_WITH_S2_IN_REGION),
        {"node1": CHINA, "node2": INDIA, "node3": CHINA, "node4": CHINA, "node5": INDIA},
        [
            on("node1", S2),
            on("node1", S2),
            on("node2", S2),
            on("node3", S2),
            on("node4", S2),
            on("node5", S2),
        ],
        [100, 0, 100, 100, 0],
        id="Affinity: the region with more matching pods gets the high score",
    ),
    pytest.param(
        pod(S1, AFFINITY3),
        THREE_NODES,
        [on("node1", S1), on("node2", S2), on("node3", S1)],
        [20, 100, 0],
        id="Affinity: different Label operators and values, including some match failures",
    ),
    pytest.param(
        pod(S2),
        THREE_NODES,
        [on("node1", S1, aff=STAY_WITH_S1_IN_REGION), on("node2", S2, aff=STAY_WITH_S2_IN_REGION)],
        [0, 100, 0],
        id="Affinity symmetry: preferred terms of existing pods",
    ),
    pytest.param(
        pod(S1, ns="subteam1.team1"),
        THREE_NODES,
        [on("node1", S1, aff=AFFINITY_NS_SELECTOR), on("node2", S2, aff=STAY_WITH_S2_IN_REGION)],
        [100, 0, 0],
        id="Affinity symmetry with namespace selector",
    ),
    pytest.param(
        pod(S1, ns="subteam1.team1"),
        THREE_NODES,
        [
            on("node1", S1, aff=ANTI_AFFINITY_NS_SELECTOR),
            on("node2", S2, aff=STAY_WITH_S2_IN_REGION),
        ],
        [0, 100, 100],
        id="AntiAffinity symmetry with namespace selector",
    ),
    pytest.param(
        pod(S1),
        THREE_NODES,
        [on("node1", S1, aff=HARD_AFFINITY), on("node2", S2, aff=HARD_AFFINITY)],
        [100, 100, 0],
        id="Affinity symmetry: required terms of existing pods",
    ),
    pytest.param(
        pod(S1, AWAY_FROM_S1_IN_AZ),
        {"node1": AZ1, "node2": CHINA},
        [on("node1", S1), on("node2", S2)],
        [0, 100],
        id="Anti Affinity: pod that does not match existing pods in node will get high score",
    ),
    pytest.param(
        pod(S1, AWAY_FROM_S1_IN_AZ),
        {"node1": AZ1, "node2": CHINA},
        [on("node1", S1), on("node2", S1)],
        [0, 100],
        id="Anti Affinity: pod that does not match topology key will get higher score",
    ),
    pytest.param(
        pod(S1, AWAY_FROM_S1_IN_AZ),
        {"node1": AZ1, "node2": INDIA},
        [on("node1", S1), on("node1", S1), on("node2", S2)],
        [0, 100],
        id="Anti Affinity: the node with more unmatched pods gets the high score",
    ),
    pytest.param(
        pod(S2),
        {"node1": AZ1, "node2": AZ2},
        [on("node1", S1, aff=AWAY_FROM_S2_IN_AZ), on("node2", S2, aff=AWAY_FROM_S1_IN_AZ)],
        [0, 100],
        id="Anti Affinity symmetry",
    ),
    pytest.param(
        pod(S1, STAY_WITH_S1_AWAY_FROM_S2),
        {"node1": CHINA, "node2": AZ1},
        [on("node1", S1), on("node2", S1)],
        [100, 0],
        id="Affinity and Anti Affinity: preferred terms of both",
    ),
    pytest.param(
        pod(S1, STAY_WITH_S1_AWAY_FROM_S2),
        {"node1": CHINA_AZ1, "node2": INDIA, "node3": CHINA, "node4": CHINA, "node5": INDIA},
        [on(n, S1) for n in ("node1", "node1", "node2", "node3", "node3", "node4", "node5")],
        [100, 0, 100, 100, 0],
        id="Affinity and Anti Affinity: pod and existing pods have the same labels",
    ),
    pytest.param(
        pod(S1, STAY_WITH_S1_AWAY_FROM_S2),
        {"node1": CHINA, "node2": AZ1, "node3": INDIA, "node4": AZ2},
        [
            on("node1", S1),
            on("node2", S2),
            on("node3", aff=STAY_WITH_S1_AWAY_FROM_S2),
            on("node4", aff=AWAY_FROM_S1_IN_AZ),
        ],
        [100, 0, 100, 0],
        id="Affinity and Anti Affinity and symmetry",
    ),
    pytest.param(
        pod(S1),
        {"node1": CHINA, "node2": CHINA},
        [on("node1", S1), on("node2", aff=STAY_WITH_S1_AWAY_FROM_S2)],
        [0, 0],
        id="Avoid panic when partial nodes in a topology don't have pods with affinity",
    ),
    pytest.param(
        pod(S1, AFFINITY_NS_SELECTOR, ns="subteam1.team1"),
        {"node1": CHINA, "node2": INDIA},
        [
            on("node1", S1, ns="subteam1.team1"),
            on("node1", S1, ns="subteam1.team1"),
            on("node1", S1, ns="subteam1.team2"),
            on("node2", S1, ns="subteam2.team1"),
        ],
        [100, 0],
        id="Affinity with pods matching NamespaceSelector",
    ),
    pytest.param(
        pod(S1, AFFINITY_NS_SELECTOR, ns="subteam1.team1"),
        {"node1": CHINA, "node2": INDIA},
        [
            on("node1", S1, ns="subteam1.team1"),
            on("node1", S1, ns="subteam1.team1"),
            on("node1", S1, ns="subteam2.team2"),
            on("node2", S1, ns="subteam2.team1"),
        ],
        [100, 0],
        id="Affinity with pods matching both NamespaceSelector and Namespaces fields",
    ),
    pytest.param(
        pod(S1, ANTI_AFFINITY_NS_SELECTOR, ns="subteam1.team1"),
        {"node1": CHINA, "node2": INDIA},
        [
            on("node1", S1, ns="subteam1.team1"),
            on("node1", S1, ns="subteam1.team1"),
            on("node1", S1, ns="subteam1.team2"),
            on("node2", S1, ns="subteam2.team1"),
        ],
        [0, 100],
        id="Anti-affinity with pods matching NamespaceSelector",
    ),
    pytest.param(
        pod(S1, ANTI_AFFINITY_NS_SELECTOR, ns="subteam1.team1"),
        {"node1": CHINA, "node2": INDIA},
        [
            on("node1", S1, ns="subteam1.team1"),
            on("node1", S1, ns="subteam1.team1"),
            on("node1", S1, ns="subteam2.team2"),
            on("node2", S1, ns="subteam2.team1"),
        ],
        [0, 100],
        id="Anti-affinity with pods matching both NamespaceSelector and Namespaces fields",
    ),
    pytest.param(
        pod(S2),
        {"node1": CHINA, "node2": INDIA},
        [
            on("node1", S1, aff=STAY_WITH_S1_AWAY_FROM_S2),
            on("node2", S2, aff=STAY_WITH_S2_IN_REGION),
        ],
        [0, 100],
        id="Do not ignore preferred terms of existing pods",
    ),
    pytest.param(pod(S2), {}, [], "skip", id="No nodes to score"),
]


@pytest.mark.parametrize(("incoming", "nodes", "pods", "want"), PREFERRED_CASES)
def test_preferred_affinity(
    incoming: Pod, nodes: dict[str, dict[str, str]], pods: list[Pod], want: Any
) -> None:
    """scoring_test.go TestPreferredAffinity (hardPodAffinityWeight 1), case named by the id."""
    scored = run_score(incoming, cluster(nodes, pods))
    if want == "skip":
        assert scored.pre_score is not None and scored.pre_score.is_skip
        return
    assert scored.pre_score is None
    assert scored.normalized == want


def test_raw_scores_sum_weights_per_domain() -> None:
    """TestPreferredAffinity "Affinity and Anti Affinity and symmetry": the raw sums behind [100, 0, 100, 0]."""
    table = cluster(
        {"node1": CHINA, "node2": AZ1, "node3": INDIA, "node4": AZ2},
        [
            on("node1", S1),
            on("node2", S2),
            on("node3", aff=STAY_WITH_S1_AWAY_FROM_S2),
            on("node4", aff=AWAY_FROM_S1_IN_AZ),
        ],
    )
    assert run_score(pod(S1, STAY_WITH_S1_AWAY_FROM_S2), table).raw == [8, -5, 8, -5]


def test_ignore_preferred_terms_of_existing_pods() -> None:
    """TestPreferredAffinity "Ignore preferred terms of existing pods": Skip when the pod has none."""
    table = cluster(
        {"node1": CHINA, "node2": INDIA},
        [
            on("node1", S1, aff=STAY_WITH_S1_AWAY_FROM_S2),
            on("node2", S2, aff=STAY_WITH_S2_IN_REGION),
        ],
    )
    args = {"ignorePreferredTermsOfExistingPods": True}
    status = run_score(pod(S2), table, args).pre_score
    assert status is not None and status.is_skip
    # v1.28 only skips: when the pod has preferred terms, existing pods' terms still count.
    scored = run_score(pod(S2, AWAY_FROM_S1_IN_AZ), table, args)
    assert scored.raw == [0, 6]


@pytest.mark.parametrize(
    "aff",
    [
        affinity(
            preferred=[weighted(8, term("region", expr("security", "In", "{{.bad-value.}}")))]
        ),
        affinity(
            preferred_anti=[weighted(5, term("az", expr("security", "In", "{{.bad-value.}}")))]
        ),
    ],
    ids=["invalid Affinity fails PreScore", "invalid AntiAffinity fails PreScore"],
)
def test_invalid_preferred_terms_fail_pre_score(aff: dict[str, Any]) -> None:
    """TestPreferredAffinity "invalid Affinity fails PreScore" / "invalid AntiAffinity fails PreScore"."""
    status = run_score(pod(aff=aff), cluster({"node1": CHINA, "node2": CHINA})).pre_score
    assert status is not None and status.code == Code.ERROR
    assert '"{{.bad-value.}}"' in status.message and status.message.startswith(
        "failed to parse pod: "
    )


# -- TestPreferredAffinityWithHardPodAffinitySymmetricWeight --------------------------

HARD_POD_AFFINITY = affinity(
    [
        term(
            "region",
            expr("service", "In", "S1"),
            namespaces=["default", "subteam2.team2"],
            namespaceSelector=TEAM1,
        )
    ]
)


@pytest.mark.parametrize(
    ("ns", "weight", "want"),
    [
        pytest.param("default", 1, [100, 100, 0], id="with default weight"),
        pytest.param("default", 0, "skip", id="with zero weight"),
        pytest.param("subteam1.team2", 1, "skip", id="with no matching namespace"),
        pytest.param("subteam1.team1", 1, [100, 100, 0], id="with matching NamespaceSelector"),
        pytest.param("subteam2.team2", 1, [100, 100, 0], id="with matching Namespaces"),
    ],
)
def test_hard_pod_affinity_weight(ns: str, weight: int, want: Any) -> None:
    """scoring_test.go TestPreferredAffinityWithHardPodAffinitySymmetricWeight, case named by the id."""
    table = cluster(
        THREE_NODES, [on("node1", aff=HARD_POD_AFFINITY), on("node2", aff=HARD_POD_AFFINITY)]
    )
    scored = run_score(pod({"service": "S1"}, ns=ns), table, {"hardPodAffinityWeight": weight})
    if want == "skip":
        assert scored.pre_score is not None and scored.pre_score.is_skip
        return
    assert scored.normalized == want


def test_hard_pod_affinity_weight_scales_existing_required_terms() -> None:
    """scoring.go processExistingPod: each required term of an existing pod that selects the
    incoming pod adds hardPodAffinityWeight to its node's domain."""
    table = cluster(
        {"a": CHINA, "b": INDIA, "c": {"region": "Peru"}},
        [
            on("a", aff=HARD_AFFINITY),
            on(
                "b",
                aff=affinity(
                    preferred=[weighted(30, term("region", expr("security", "In", "S1")))]
                ),
            ),
        ],
    )
    scored = run_score(pod(S1), table, {"hardPodAffinityWeight": 20})
    assert scored.raw == [40, 30, 0]  # two required terms x 20 against one preferred term of 30
    assert scored.normalized == [100, 75, 0]


def test_each_replica_of_an_existing_pod_counts() -> None:
    """scoring.go processExistingPod runs once per existing pod: replicas that share a term on
    one node add its weight once each (the index groups them, it must not merge them)."""
    replicas = [on("a", aff=STAY_WITH_S1_IN_REGION) for _ in range(3)] + [
        on("b", aff=STAY_WITH_S1_IN_REGION)
    ]
    table = cluster({"a": CHINA, "b": INDIA, "c": {"region": "Peru"}}, replicas)
    assert run_score(pod(S1), table).raw == [15, 5, 0]


# -- normalization --------------------------------------------------------------------


def test_normalize_uses_upstreams_float_arithmetic() -> None:
    """scoring.go NormalizeScore computes int64(float64(100) * (float64(s-min) / float64(max-min))):
    29 of 100 truncates to 28 there (0.29 * 100 = 28.999999999999996), not 29."""
    matching = [on("a", {"app": "x"}) for _ in range(29)] + [
        on("b", {"app": "x"}) for _ in range(100)
    ]
    table = cluster({"a": {"zone": "a"}, "b": {"zone": "b"}, "c": {"zone": "c"}}, matching)
    aff = affinity(preferred=[weighted(1, term("zone", expr("app", "In", "x")))])
    scored = run_score(pod(aff=aff), table)
    assert scored.raw == [29, 100, 0]
    assert scored.normalized == [28, 100, 0]


def test_normalize_min_is_the_lowest_scored_node_even_when_negative() -> None:
    """scoring.go NormalizeScore: min and max start at MaxInt64/MinInt64 (not 0) since 1.21."""
    table = cluster(
        {"a": {"zone": "a"}, "b": {"zone": "b"}, "c": {"zone": "c"}},
        [on("a", {"app": "x"}), on("a", {"app": "x"}), on("b", {"app": "x"})],
    )
    aff = affinity(preferred_anti=[weighted(3, term("zone", expr("app", "In", "x")))])
    scored = run_score(pod(aff=aff), table)
    assert scored.raw == [-6, -3, 0]
    assert scored.normalized == [0, 50, 100]


# -- beyond the upstream tables ---------------------------------------------------------


def test_failing_checks_report_the_first_in_upstream_order() -> None:
    """filtering.go Filter: affinity, then anti-affinity, then existing pods' anti-affinity."""
    db, web = {"app": "db"}, {"app": "web"}
    table = cluster(
        {"a": {"zone": "a"}, "b": {"zone": "b"}, "c": {"zone": "c"}},
        [
            on("a", db, aff=affinity(anti=[term("zone", expr("app", "In", "web"))])),
            on("b", web, aff=affinity(anti=[term("zone", expr("app", "In", "web"))])),
        ],
    )
    incoming = pod(
        web,
        affinity([term("zone", expr("app", "In", "web"))], [term("zone", expr("app", "In", "db"))]),
    )
    # a: no web pod (affinity) + db pod (anti) + db's anti-affinity -> affinity wins;
    # b: web pod, but b's web pod repels web -> existing; c: no web pod -> affinity.
    assert verdicts(run_filter(incoming, table)) == [(UU, AFFINITY), (U, EXISTING), (UU, AFFINITY)]
    no_affinity = pod(web, affinity(anti=[term("zone", expr("app", "In", "db"))]))
    assert verdicts(run_filter(no_affinity, table)) == [(U, ANTI), (U, EXISTING), None]


def test_terminating_pods_still_count() -> None:
    """Upstream counts every pod of the snapshot, terminating or not (kubernetes#112098 was closed
    unmerged: "kube-scheduler takes decisions based on the pods that are currently running")."""
    going = on("a", {"app": "db"}, deleting=True)
    assert going.deleting
    table = cluster({"a": {"zone": "a"}, "b": {"zone": "b"}}, [going])
    anti = pod(aff=affinity(anti=[term("zone", expr("app", "In", "db"))]))
    assert verdicts(run_filter(anti, table)) == [(U, ANTI), None]
    pref = pod(aff=affinity(preferred=[weighted(4, term("zone", expr("app", "In", "db")))]))
    assert run_score(pref, table).raw == [4, 0]


def test_namespace_selector_of_the_incoming_pod() -> None:
    """types.go getNamespacesFromPodAffinityTerm and mergeAffinityTermNamespacesIfNotEmpty: no
    namespaces and no selector is the pod's own namespace; `{}` is every namespace (known or not);
    a selector picks known namespaces only."""
    pods = [on("a", {"app": "db"}, ns="subteam1.team1"), on("b", {"app": "db"}, ns="unknown")]
    table = cluster({"a": {"zone": "a"}, "b": {"zone": "b"}, "c": {"zone": "c"}}, pods)

    def repelled(ns: str, **extra: Any) -> list[tuple[Code, str] | None]:
        incoming = pod(aff=affinity(anti=[term("zone", expr("app", "In", "db"), **extra)]), ns=ns)
        return verdicts(run_filter(incoming, table))

    assert repelled("subteam1.team1") == [(U, ANTI), None, None]
    assert repelled("default", namespaceSelector={}) == [(U, ANTI), (U, ANTI), None]
    assert repelled("default", namespaceSelector=TEAM1) == [(U, ANTI), None, None]
    assert repelled(
        "default", namespaceSelector={"matchExpressions": [expr("team", "DoesNotExist")]}
    ) == [
        None,
        None,
        None,
    ]
    assert repelled("default", namespaces=["unknown"]) == [None, (U, ANTI), None]


def test_existing_pod_namespace_selector_reads_the_incoming_pods_namespace_labels() -> None:
    """types.go AffinityTerm.Matches with GetNamespaceLabelsSnapshot: an unknown namespace has no labels."""
    repels_team1 = affinity(anti=[term("zone", expr("app", "In", "web"), namespaceSelector=TEAM1)])
    table = cluster(
        {"a": {"zone": "a"}, "b": {"zone": "b"}}, [on("a", aff=repels_team1, ns="other")]
    )
    assert verdicts(run_filter(pod({"app": "web"}, ns="subteam2.team1"), table)) == [
        (U, EXISTING),
        None,
    ]
    status = run_filter(pod({"app": "web"}, ns="nowhere"), table).pre_filter
    assert status is not None and status.is_skip


@pytest.mark.parametrize(
    ("aff", "field"),
    [
        ({"podAffinity": ["x"]}, "spec.affinity.podAffinity"),
        ({"podAffinity": {REQUIRED: {"a": 1}}}, f"spec.affinity.podAffinity.{REQUIRED}"),
        ({"podAntiAffinity": {REQUIRED: ["term"]}}, f"spec.affinity.podAntiAffinity.{REQUIRED}[0]"),
        (
            affinity([term("zone", expr("app", "Near", "x"))]),
            f"spec.affinity.podAffinity.{REQUIRED}[0].labelSelector.matchExpressions[0].operator",
        ),
        (
            affinity(preferred=[{"weight": "heavy", "podAffinityTerm": term("zone")}]),
            f"spec.affinity.podAffinity.{PREFERRED}[0].weight",
        ),
        (
            affinity(anti=[term("zone", expr("app", "In", "x"), namespaces="default")]),
            f"spec.affinity.podAntiAffinity.{REQUIRED}[0].namespaces",
        ),
        (
            affinity(anti=[term("zone", namespaceSelector={"matchLabels": {"bad key!": "x"}})]),
            f"spec.affinity.podAntiAffinity.{REQUIRED}[0].namespaceSelector",
        ),
    ],
)
def test_malformed_terms_are_unresolvable_naming_the_field(aff: dict[str, Any], field: str) -> None:
    """filtering.go PreFilter: a pod whose terms cannot be parsed is UnschedulableAndUnresolvable."""
    table = cluster({"a": {"zone": "a"}})
    status = run_filter(pod(aff=aff), table).pre_filter
    assert status is not None and status.code == UU
    assert status.message.startswith(f"parsing pod: {field}: ")
    assert run_score(pod(aff=aff), table).pre_score.code == Code.ERROR  # type: ignore[union-attr]


def test_placed_pod_with_a_malformed_list_keeps_its_other_lists() -> None:
    """framework.NewPodInfo ignores the error for pods in the snapshot: the list that fails to
    parse is dropped, the others are used."""
    broken = {
        "podAffinity": {REQUIRED: [term("zone", expr("app", "Near", "x"))]},
        "podAntiAffinity": {REQUIRED: [term("zone", expr("app", "In", "web"))]},
    }
    table = cluster({"a": {"zone": "a"}, "b": {"zone": "b"}}, [on("a", aff=broken)])
    assert verdicts(run_filter(pod({"app": "web"}), table)) == [(U, EXISTING), None]


def test_index_follows_the_table() -> None:
    """The placed pods' terms are regrouped when the table changes (PodsWithRequiredAntiAffinity)."""
    table = cluster({"a": {"zone": "a"}, "b": {"zone": "b"}})
    plug = plugin(NAME, {}, table)
    web = pod({"app": "web"})

    def pre_filter() -> Status | None:
        return plug.pre_filter(CycleState(), web, table)[1]

    assert pre_filter() is not None
    repeller = on("a", aff=affinity(anti=[term("zone", expr("app", "In", "web"))]))
    table.add_pod(repeller, "a")
    assert pre_filter() is None
    table.remove_pod(repeller.uid, "a")
    status = pre_filter()
    assert status is not None and status.is_skip


def test_no_affinity_anywhere_skips_both_points() -> None:
    """filtering.go PreFilter and scoring.go PreScore return Skip when there is nothing to do."""
    table = cluster({"a": {"zone": "a"}}, [on("a", {"app": "x"})])
    status = run_filter(pod(), table).pre_filter
    assert status is not None and status.is_skip
    status = run_score(pod(), table).pre_score
    assert status is not None and status.is_skip


def test_events_to_register() -> None:
    """plugin.go EventsToRegister: Pod/All and Node/Add|UpdateNodeLabel (placed pods here)."""
    events = {(e.resource, e.action) for e in plugin(NAME).events_to_register()}
    assert events == {
        ("AssignedPod", "Add"),
        ("AssignedPod", "Update"),
        ("AssignedPod", "Delete"),
        ("Node", "Add"),
        ("Node", "Update"),
    }


# -- args -----------------------------------------------------------------------------


def test_args_defaults() -> None:
    """v1/defaults.go SetDefaults_InterPodAffinityArgs: hardPodAffinityWeight 1, ignore... false."""
    plug = plugin(NAME)
    assert plug.hard_pod_affinity_weight == 1
    assert plug.ignore_preferred_terms_of_existing_pods is False


@pytest.mark.parametrize(
    ("args", "field", "problem"),
    [
        (
            {"hardPodAffinityWeight": -1},
            "hardPodAffinityWeight",
            "Invalid value: -1: not in valid range [0, 100]",
        ),
        (
            {"hardPodAffinityWeight": 101},
            "hardPodAffinityWeight",
            "Invalid value: 101: not in valid range [0, 100]",
        ),
        ({"hardPodAffinityWeight": "5"}, "hardPodAffinityWeight", "must be an integer (got '5')"),
        (
            {"ignorePreferredTermsOfExistingPods": "yes"},
            "ignorePreferredTermsOfExistingPods",
            "must be true or false (got 'yes')",
        ),
        (
            {"hardPodAffinityWeigth": 5},
            "hardPodAffinityWeigth",
            "unknown field; InterPodAffinity takes hardPodAffinityWeight, ignorePreferredTermsOfExistingPods",
        ),
    ],
)
def test_args_validation_names_the_field(args: dict[str, Any], field: str, problem: str) -> None:
    """validation_pluginargs.go ValidateInterPodAffinityArgs: hardPodAffinityWeight in [0, 100]."""
    with pytest.raises(PluginArgsError) as err:
        plugin(NAME, args)
    assert (err.value.field, err.value.problem) == (field, problem)


def test_registered_in_tree_in_kube_schedulers_order() -> None:
    """IN_TREE follows the default plugins' order: ... PodTopologySpread, InterPodAffinity, ..."""
    from eventsched.plugins.registry import IN_TREE

    names = [p.name for p in IN_TREE]
    assert NAME in names
    assert names.index(NAME) > names.index("NodeResourcesFit")
    if "PodTopologySpread" in names:
        assert names.index(NAME) == names.index("PodTopologySpread") + 1


# -- against a loop over every pod, as upstream writes it --------------------------------

KEYS = ("zone", "rack", "hostname")


def _random_selector(rng: np.random.Generator) -> dict[str, Any]:
    key = str(rng.choice(["app", "tier"]))
    value = str(rng.choice(["a", "b", "x"]))
    choice = int(rng.integers(5))
    if choice == 0:
        return {"matchLabels": {key: value}}
    operator = ["In", "NotIn", "Exists", "DoesNotExist"][choice - 1]
    return {"matchExpressions": [expr(key, operator, *([value] if choice <= 2 else []))]}


def _random_term(rng: np.random.Generator) -> dict[str, Any]:
    out: dict[str, Any] = {
        "labelSelector": _random_selector(rng),
        "topologyKey": str(rng.choice([*KEYS, "missing-key"])),
    }
    if rng.random() < 0.3:
        out["namespaces"] = [str(rng.choice(["default", "ns1", "unknown"]))]
    if rng.random() < 0.3:
        out["namespaceSelector"] = [{}, {"matchLabels": {"team": "t1"}}][int(rng.integers(2))]
    return out


def _random_affinity(rng: np.random.Generator) -> dict[str, Any]:
    def some(make: Any) -> list[Any]:
        return [make() for _ in range(int(rng.choice([0, 0, 1, 2])))]

    return affinity(
        some(lambda: _random_term(rng)),
        some(lambda: _random_term(rng)),
        some(lambda: weighted(int(rng.integers(1, 10)), _random_term(rng))),
        some(lambda: weighted(int(rng.integers(1, 10)), _random_term(rng))),
    )


def _random_pod(rng: np.random.Generator, node: str = "", name: str = "") -> Pod:
    labels = {k: str(rng.choice(["a", "b", "x"])) for k in ("app", "tier") if rng.random() < 0.7}
    aff = _random_affinity(rng) if rng.random() < 0.6 else {}
    ns = str(rng.choice(["default", "ns1", "ns2", "unknown"]))
    return pod(labels, aff, node=node, ns=ns, name=name, deleting=bool(rng.random() < 0.1))


def _random_node_labels(rng: np.random.Generator, name: str) -> dict[str, str]:
    labels = {"hostname": name}
    for key, values in (("zone", 3), ("rack", 4)):
        if rng.random() < 0.8:
            labels[key] = f"{key}{int(rng.integers(values))}"
    return labels


def reference_filter(incoming: Pod, table: NodeTable) -> Any:
    """filtering.go PreFilter + Filter, one pod and one node at a time."""
    from collections import Counter

    from eventsched.model.podaffinity import parse_existing_terms, parse_pod_terms

    objects = table.objects
    ns_labels = objects.namespace_labels(incoming.namespace) or {}
    terms = parse_pod_terms(incoming)
    required = [t.merged(objects) for t in terms.required_affinity]
    anti = [t.merged(objects) for t in terms.required_anti_affinity]
    existing: Counter[tuple[str, str]] = Counter()
    affinity_counts: Counter[tuple[str, str]] = Counter()
    anti_counts: Counter[tuple[str, str]] = Counter()
    for row, node in enumerate(table.nodes):
        labels = node.labels
        for p in table.pods[row].values():
            for t in parse_existing_terms(p).required_anti_affinity:
                if t.matches(incoming, ns_labels) and t.topology_key in labels:
                    existing[(t.topology_key, labels[t.topology_key])] += 1
            if required and all(t.matches(p) for t in required):
                for t in required:
                    if t.topology_key in labels:
                        affinity_counts[(t.topology_key, labels[t.topology_key])] += 1
            for t in anti:
                if t.matches(p) and t.topology_key in labels:
                    anti_counts[(t.topology_key, labels[t.topology_key])] += 1
    if not existing and not required and not anti:
        return "skip"
    out: list[str | None] = []
    for node in table.nodes:
        labels = node.labels
        satisfied, pods_exist = True, True
        for t in required:
            if t.topology_key not in labels:
                satisfied = False
                break
            if affinity_counts[(t.topology_key, labels[t.topology_key])] <= 0:
                pods_exist = False
        if satisfied and not pods_exist:
            satisfied = not affinity_counts and all(t.matches(incoming) for t in required)
        if not satisfied:
            out.append(AFFINITY)
        elif any(
            t.topology_key in labels and anti_counts[(t.topology_key, labels[t.topology_key])] > 0
            for t in anti
        ):
            out.append(ANTI)
        elif any(existing[(k, v)] > 0 for k, v in labels.items()):
            out.append(EXISTING)
        else:
            out.append(None)
    return out


def reference_score(incoming: Pod, table: NodeTable, hard: int, ignore: bool) -> Any:
    """scoring.go PreScore + Score + NormalizeScore, one pod and one node at a time."""
    from collections import defaultdict

    from eventsched.model.podaffinity import parse_existing_terms, parse_pod_terms

    objects = table.objects
    ns_labels = objects.namespace_labels(incoming.namespace) or {}
    terms = parse_pod_terms(incoming)
    if len(table) == 0 or (ignore and not terms.has_preferred):
        return "skip"
    preferred = [(w.term.merged(objects), w.weight) for w in terms.preferred_affinity] + [
        (w.term.merged(objects), -w.weight) for w in terms.preferred_anti_affinity
    ]
    topology: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    touched = False

    def add(key: str, labels: Mapping[str, str], weight: int) -> None:
        nonlocal touched
        if key in labels:
            topology[key][labels[key]] += weight
            touched = True

    for row, node in enumerate(table.nodes):
        labels = node.labels
        for p in table.pods[row].values():
            existing = parse_existing_terms(p)
            for merged, weight in preferred:
                if merged.matches(p):
                    add(merged.topology_key, labels, weight)
            if hard > 0:
                for t in existing.required_affinity:
                    if t.matches(incoming, ns_labels):
                        add(t.topology_key, labels, hard)
            for w in existing.preferred_affinity:
                if w.term.matches(incoming, ns_labels):
                    add(w.term.topology_key, labels, w.weight)
            for w in existing.preferred_anti_affinity:
                if w.term.matches(incoming, ns_labels):
                    add(w.term.topology_key, labels, -w.weight)
    if not touched:
        return "skip"
    raw = [
        sum(v.get(n.labels[k], 0) for k, v in topology.items() if k in n.labels)
        for n in table.nodes
    ]
    low, high = min(raw), max(raw)
    normalized = [int(100.0 * ((s - low) / (high - low))) if high > low else 0 for s in raw]
    return raw, normalized


@pytest.mark.parametrize("seed", range(8))
def test_matches_a_loop_over_every_pod_through_table_changes(seed: int) -> None:
    """The batch form (domain counts, the index of placed pods' terms rebuilt per generation)
    against upstream's per-pod loops, through adds, replacements, removals, a node removal and
    node relabels; one plugin instance per args is reused, so caches live across changes."""
    rng = np.random.default_rng(seed)
    table = cluster(
        {f"n{i}": _random_node_labels(rng, f"n{i}") for i in range(7)},
        namespaces={"default": {}, "ns1": {"team": "t1"}, "ns2": {"team": "t2"}},
    )
    plugins = {
        (hard, ignore): plugin(
            NAME,
            {"hardPodAffinityWeight": hard, "ignorePreferredTermsOfExistingPods": ignore},
            table,
        )
        for hard in (0, 1, 5)
        for ignore in (False, True)
    }
    placed: list[Pod] = []
    for step in range(30):
        action = rng.random()
        if action < 0.5 or not placed:
            p = _random_pod(rng, node=str(rng.choice(table.names)))
            table.add_pod(p, p.node_name)
            placed.append(p)
        elif action < 0.65:
            old = placed.pop(int(rng.integers(len(placed))))
            table.remove_pod(old.uid, old.node_name)
        elif action < 0.8:
            i = int(rng.integers(len(placed)))
            new = _random_pod(rng, node=placed[i].node_name, name=placed[i].name)
            table.add_pod(new, new.node_name)
            placed[i] = new
        elif action < 0.9:
            name = str(rng.choice(table.names))
            table.upsert_node(make_node(name, labels=_random_node_labels(rng, name)))
        elif step > 15 and len(table) > 3:
            gone = str(rng.choice(table.names))
            table.remove_node(gone)
            placed = [p for p in placed if p.node_name != gone]
        assert np.array_equal(
            table.placed.with_affinity,
            [
                bool(p.affinity.get("podAffinity") or p.affinity.get("podAntiAffinity"))
                for p in table.placed.pods
            ],
        )
        for _ in range(3):
            incoming = _random_pod(rng)
            (hard, ignore), plug = list(plugins.items())[int(rng.integers(len(plugins)))]
            rows = np.arange(len(table))
            state = CycleState()
            _, status = plug.pre_filter(state, incoming, table)
            want = reference_filter(incoming, table)
            if want == "skip":
                assert status is not None and status.is_skip
            else:
                assert status is None
                result = plug.filter_batch(state, incoming, table, rows)
                got = [None if v < 0 else result.statuses[v].message for v in result.verdict]
                assert got == want
            status = plug.pre_score(state, incoming, table, rows)
            want = reference_score(incoming, table, hard, ignore)
            if want == "skip":
                assert status is not None and status.is_skip
            else:
                assert status is None
                raw = plug.score_batch(state, incoming, table, rows)
                normalized = plug.normalize_score(state, incoming, raw.copy(), rows)
                assert (raw.tolist(), normalized.tolist()) == want
