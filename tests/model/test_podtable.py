"""The pod table answers selector counts as a loop over pods would (NodeTable.placed)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from eventsched.model import Node, NodeTable, Pod
from eventsched.model.selectors import LabelSelector

KEYS = ("app", "tier")
VALUES = ("a", "b", "c")

labels = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=2)
expression = st.one_of(
    st.builds(
        lambda k, op, vs: {"key": k, "operator": op, "values": vs},
        st.sampled_from(KEYS),
        st.sampled_from(["In", "NotIn"]),
        st.lists(st.sampled_from([*VALUES, "never"]), min_size=1, max_size=2),
    ),
    st.builds(
        lambda k, op: {"key": k, "operator": op},
        st.sampled_from(KEYS),
        st.sampled_from(["Exists", "DoesNotExist"]),
    ),
)
selector = st.builds(
    lambda ml, me: {"matchLabels": ml, "matchExpressions": me},
    st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=1),
    st.lists(expression, max_size=2),
)
# (op, pod index, node index, labels, namespace): add/move a pod, remove it, or remove a node.
ops = st.lists(
    st.tuples(
        st.sampled_from(["add", "add", "add", "remove", "drop_node"]),
        st.integers(0, 11),
        st.integers(0, 4),
        labels,
        st.sampled_from(["default", "other"]),
    ),
    max_size=40,
)


def pod(i: int, pod_labels: dict[str, str], namespace: str) -> Pod:
    return Pod(uid=f"u{i}", namespace=namespace, name=f"p{i}", labels=pod_labels)


@settings(max_examples=200, deadline=None)
@given(
    ops,
    selector,
    st.sampled_from(
        [
            None,
            frozenset({"default"}),
            frozenset({"x"}),
            frozenset({"default", "other"}),
            frozenset({"other", "x"}),
            frozenset(),
        ]
    ),
)
def test_counts_per_node_equal_a_loop_over_the_pods_on_each_node(
    changes: list[tuple[str, int, int, dict[str, str], str]],
    raw_selector: dict[str, object],
    namespaces: frozenset[str] | None,
) -> None:
    table = NodeTable([Node(f"n{i}") for i in range(5)])
    where: dict[str, str] = {}
    for op, i, n, pod_labels, namespace in changes:
        if op == "add" and table.row_of(f"n{n}") is not None:
            if f"u{i}" in where:
                table.remove_pod(f"u{i}", where.pop(f"u{i}"))
            table.add_pod(pod(i, pod_labels, namespace), f"n{n}")
            where[f"u{i}"] = f"n{n}"
        elif op == "remove" and f"u{i}" in where:
            table.remove_pod(f"u{i}", where.pop(f"u{i}"))
        elif op == "drop_node":
            table.remove_node(f"n{n}")
            where = {uid: node for uid, node in where.items() if node != f"n{n}"}
        # A column built mid-way must stay current through later changes.
        table.placed.label_codes("app")
    parsed = LabelSelector.parse(raw_selector, "test", "selector")
    counts = table.placed.count_per_node(table.placed.matching(parsed, namespaces), len(table))
    expected = [
        sum(
            1
            for p in table.pods[row].values()
            if parsed.matches(p.labels) and (namespaces is None or p.namespace in namespaces)
        )
        for row in range(len(table))
    ]
    assert counts.tolist() == expected
    assert len(table.placed) == sum(len(p) for p in table.pods)


def test_a_nil_selector_matches_nothing_and_an_empty_one_everything() -> None:
    table = NodeTable([Node("n0")])
    table.add_pod(pod(1, {"app": "a"}, "default"), "n0")
    nothing = LabelSelector.parse(None, "test", "selector")
    everything = LabelSelector.parse({}, "test", "selector")
    assert table.placed.matching(nothing).tolist() == [False]
    assert table.placed.matching(everything).tolist() == [True]


def test_node_label_codes_group_nodes_by_value() -> None:
    table = NodeTable(
        [Node("a", labels={"zone": "z1"}), Node("b"), Node("c", labels={"zone": "z1"})]
    )
    codes, column = table.label_codes("zone")
    assert column.tolist() == [0, -1, 0] and codes == {"z1": 0}
    table.upsert_node(Node("b", labels={"zone": "z2"}))
    codes, column = table.label_codes("zone")
    assert column.tolist() == [0, 1, 0] and codes == {"z1": 0, "z2": 1}
