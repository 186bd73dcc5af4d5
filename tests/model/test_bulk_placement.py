"""A start places every listed pod at once (`Cache.add_pods`): the cache, the node table
and its pod table end as placing them one by one (`add_or_update_pod`) leaves them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from eventsched.model import Node, Pod
from eventsched.model.cache import Cache
from eventsched.model.nodetable import NodeTable

NODES = [f"n{i}" for i in range(4)]
RESOURCES = ("cpu", "memory", "example.com/gpu", "hugepages-2Mi")

requests = st.dictionaries(st.sampled_from(RESOURCES), st.integers(0, 10**12), max_size=3)
placements = st.lists(
    st.tuples(
        st.integers(0, 9),  # the pod (a uid may come twice, on another node)
        st.sampled_from([*NODES, "unknown"]),
        requests,
        st.dictionaries(st.sampled_from(["app", "tier"]), st.sampled_from(["a", "b"]), max_size=2),
        st.sampled_from(["default", "other"]),
        st.booleans(),  # with pod anti-affinity
        st.booleans(),  # being deleted
    ),
    max_size=30,
)
ANTI_AFFINITY = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "zone"}
        ]
    }
}


def _pod(i: int, node: str, req: dict, labels: dict, ns: str, anti: bool, deleting: bool) -> Pod:
    return Pod(
        uid=f"u{i}",
        namespace=ns,
        name=f"p{i}",
        node_name=node,
        requests=req,
        non_zero=(req.get("cpu", 100), req.get("memory", 200)),
        labels=labels,
        affinity=ANTI_AFFINITY if anti else {},
        deleting=deleting,
    )


def _cache(before: list[Pod]) -> Cache:
    cache = Cache()
    for name in NODES:
        cache.upsert_node(Node(name=name, allocatable={"cpu": 4000, "pods": 110}))
    cache.table.placed.label_codes("app")  # a label column kept up to date from here on
    for pod in before:
        cache.add_or_update_pod(pod)
    return cache


def _state(table: NodeTable) -> dict:
    placed = table.placed
    codes, column = placed.label_codes("app")
    return {
        "requested": {
            r: table.requested[:, table.column(r)].tolist() for r in table.resource_names
        },
        "non_zero": table.non_zero_requested.tolist(),
        "pods": [list(p) for p in table.pods],
        "placed": [
            (p.uid, table.names[row], deleting, affinity, codes.values[c] if c >= 0 else None)
            for p, row, deleting, affinity, c in zip(
                placed.pods,
                placed.node_rows.tolist(),
                placed.deleting.tolist(),
                placed.with_affinity.tolist(),
                column[: len(placed)].tolist(),
                strict=True,
            )
        ],
        "pods_version": [table.pods_version(row) for row in range(len(table))],
        "generation": table.generation,
    }


@settings(max_examples=300, deadline=None)
@given(placements, st.integers(0, 5))
def test_placing_all_at_once_leaves_what_placing_one_by_one_does(
    steps: list[tuple], already: int
) -> None:
    pods = [_pod(*step) for step in steps]
    one_by_one, at_once = _cache(pods[:already]), _cache(pods[:already])
    affinity_version = at_once.table.placed.affinity_version
    for pod in pods[already:]:
        one_by_one.add_or_update_pod(pod)
    at_once.add_pods(pods[already:])

    assert _state(at_once.table) == _state(one_by_one.table)
    for pod in pods:
        assert at_once.node_of(pod.uid) == one_by_one.node_of(pod.uid)
    if any(p.affinity and p.node_name in NODES for p in pods[already:]):
        assert at_once.table.placed.affinity_version != affinity_version


def test_an_unknown_node_places_nothing_and_a_new_resource_gets_its_column() -> None:
    cache = _cache([])
    cache.add_pods(
        [
            _pod(1, "unknown", {"cpu": 100}, {}, "default", False, False),
            _pod(2, "n1", {"cpu": 100, "example.com/fpga": 2}, {}, "default", False, False),
        ]
    )
    table = cache.table
    assert len(table.placed) == 1
    assert table.requested[table.row_of("n1"), table.column("example.com/fpga")] == 2
    assert table.requested[table.row_of("n1"), table.column("pods")] == 1
