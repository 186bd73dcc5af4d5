"""The SQL views people query: same rows on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from eventsched.events import DECISION_KINDS, EventRecord, EventStore


def rows(store: EventStore, sql: str) -> list[dict[str, Any]]:
    with store.engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(sa.text(sql))]


def pod(kind: str, name: str, uid: str, **kw: Any) -> EventRecord:
    return EventRecord(
        kind=kind,
        scheduler="prof",
        attempt=kw.pop("attempt", f"att-{uid}"),
        uid=uid,
        namespace="ns",
        name=name,
        **kw,
    )


def test_decisions_are_the_decision_kinds(store: EventStore) -> None:
    store.append(
        [
            EventRecord(kind="node_observed", node="n1", data={"name": "n1"}),
            pod("queued", "a", "u1", data={"queue": "active"}),
            EventRecord(kind="input_recorded", plugin="P", data={"key": "k", "value": 1}),
            pod("selected", "a", "u1", node="n1", data={"score": 3}),
            EventRecord(kind="maintenance", data={"action": "snapshot"}),
        ]
    )
    found = rows(store, "SELECT * FROM decisions ORDER BY position")
    assert [(r["position"], r["kind"]) for r in found] == [
        (2, "queued"),
        (4, "selected"),
        (5, "maintenance"),
    ]
    assert list(found[0]) == [
        "position",
        "recorded_at",
        "scheduler",
        "instance",
        "attempt",
        "kind",
        "uid",
        "namespace",
        "name",
        "node",
        "plugin",
        "data",
    ]
    assert (found[1]["node"], found[1]["uid"], found[1]["attempt"]) == ("n1", "u1", "att-u1")
    assert all(r["kind"] in DECISION_KINDS for r in found)


def test_placements_first_and_repeat(store: EventStore) -> None:
    store.append(
        [
            # web-0 of a StatefulSet: first bound on n1, re-created (new uid) and bound on n2.
            pod("bound", "web-0", "u1", node="n1", data={"identity": "ns/sts/web-0", "code": 201}),
            pod("reserved", "web-0", "u1", node="n1"),
            # A pod without an identity in data: namespace/name is its identity.
            pod("bound", "solo", "u2", node="n3", data={}),
        ]
    )
    store.append(
        [
            pod("bound", "web-0", "u3", node="n2", data={"identity": "ns/sts/web-0"}),
            pod("bound", "solo", "u4", node="n3", data={"identity": None}),
        ]
    )
    found = rows(store, "SELECT * FROM placements ORDER BY position")
    assert list(found[0]) == [
        "position",
        "bound_at",
        "scheduler",
        "attempt",
        "namespace",
        "name",
        "uid",
        "node",
        "identity",
        "first_node",
        "placement",
    ]
    assert [
        (r["position"], r["uid"], r["node"], r["identity"], r["first_node"], r["placement"])
        for r in found
    ] == [
        (1, "u1", "n1", "ns/sts/web-0", "n1", "first"),
        (3, "u2", "n3", "ns/solo", "n3", "first"),
        (4, "u3", "n2", "ns/sts/web-0", "n1", "repeat"),
        (5, "u4", "n3", "ns/solo", "n3", "repeat"),
    ]
    assert all(r["bound_at"] is not None and r["scheduler"] == "prof" for r in found)
    assert found[0]["attempt"] == "att-u1"


def test_filter_rejections_one_row_per_reason(store: EventStore) -> None:
    store.append(
        [
            pod(
                "filtered",
                "a",
                "u1",
                data={
                    "numAllNodes": 3,
                    "feasible": 0,
                    "rejections": [
                        {
                            "nodes": ["n1", "n4"],
                            "plugin": "NodeResourcesFit",
                            "code": "Unschedulable",
                            "reasons": ["Insufficient cpu", "Insufficient memory"],
                        },
                        {
                            "nodes": ["n2"],
                            "plugin": "TaintToleration",
                            "code": "UnschedulableAndUnresolvable",
                            "reasons": ["node(s) had untolerated taint {gpu: true}"],
                        },
                        {
                            "nodes": ["n3"],
                            "plugin": "NodeUnschedulable",
                            "code": "Unschedulable",
                            "reasons": [],
                        },
                    ],
                },
            ),
            pod("filtered", "b", "u2", data={"numAllNodes": 3, "feasible": 3, "rejections": []}),
            pod(
                "scored",
                "a",
                "u1",
                data={"rejections": [{"nodes": ["x"], "reasons": ["not a filter"]}]},
            ),
        ]
    )
    found = rows(store, "SELECT * FROM filter_rejections ORDER BY position, node, reason")
    assert list(found[0]) == [
        "position",
        "recorded_at",
        "scheduler",
        "attempt",
        "namespace",
        "name",
        "uid",
        "node",
        "plugin",
        "code",
        "reason",
    ]
    got = [
        (r["position"], r["attempt"], r["node"], r["plugin"], r["code"], r["reason"]) for r in found
    ]
    assert sorted(got, key=lambda t: (t[2], t[5] or "")) == [
        (1, "att-u1", "n1", "NodeResourcesFit", "Unschedulable", "Insufficient cpu"),
        (1, "att-u1", "n1", "NodeResourcesFit", "Unschedulable", "Insufficient memory"),
        (
            1,
            "att-u1",
            "n2",
            "TaintToleration",
            "UnschedulableAndUnresolvable",
            "node(s) had untolerated taint {gpu: true}",
        ),
        (1, "att-u1", "n3", "NodeUnschedulable", "Unschedulable", None),
        (1, "att-u1", "n4", "NodeResourcesFit", "Unschedulable", "Insufficient cpu"),
        (1, "att-u1", "n4", "NodeResourcesFit", "Unschedulable", "Insufficient memory"),
    ]
    assert {(r["namespace"], r["name"], r["uid"], r["scheduler"]) for r in found} == {
        ("ns", "a", "u1", "prof")
    }


def test_plugin_scores_one_row_per_entry(store: EventStore) -> None:
    store.append(
        [
            pod(
                "scored",
                "a",
                "u1",
                data={
                    "nodes": 2,
                    "plugins": [{"name": "Fit", "weight": 1}, {"name": "Balanced", "weight": 2}],
                    "scores": [
                        {
                            "node": "n1",
                            "plugin": "Fit",
                            "raw": 40,
                            "normalized": 40,
                            "weighted": 40,
                        },
                        {
                            "node": "n1",
                            "plugin": "Balanced",
                            "raw": 7,
                            "normalized": 70,
                            "weighted": 140,
                        },
                        {
                            "node": "n2",
                            "plugin": "Fit",
                            "raw": 12.0,
                            "normalized": 99.9,
                            "weighted": 99,
                        },
                    ],
                    "top": [{"node": "n1", "total": 180}],
                },
            ),
            pod("filtered", "a", "u1", data={"scores": [{"node": "x"}]}),
        ]
    )
    found = rows(store, "SELECT * FROM plugin_scores ORDER BY node, plugin")
    assert list(found[0]) == [
        "position",
        "recorded_at",
        "scheduler",
        "attempt",
        "namespace",
        "name",
        "uid",
        "node",
        "plugin",
        "raw",
        "normalized",
        "weighted",
    ]
    assert [
        (
            r["position"],
            r["attempt"],
            r["node"],
            r["plugin"],
            r["raw"],
            r["normalized"],
            r["weighted"],
        )
        for r in found
    ] == [
        (1, "att-u1", "n1", "Balanced", 7, 70, 140),
        (1, "att-u1", "n1", "Fit", 40, 40, 40),
        (1, "att-u1", "n2", "Fit", 12, 99, 99),
    ]
    assert all(isinstance(r["weighted"], int) for r in found)
    total = rows(
        store,
        "SELECT node, SUM(weighted) AS total FROM plugin_scores WHERE attempt = 'att-u1' "
        "GROUP BY node ORDER BY total DESC",
    )
    assert [(r["node"], int(r["total"])) for r in total] == [("n1", 180), ("n2", 99)]


def test_plugin_scores_reads_the_per_plugin_columns_as_it_read_the_cells(
    store: EventStore,
) -> None:
    # The shape algorithm.py writes now: arrays aligned with `top`, weighted derived.
    store.append(
        [
            pod(
                "scored",
                "a",
                "u1",
                data={
                    "nodes": 3,
                    "plugins": [
                        {"name": "Fit", "weight": 1, "raw": [40, 12], "normalized": [40, 99]},
                        {"name": "Balanced", "weight": 2, "raw": [7, 3], "normalized": [70, 30]},
                    ],
                    "top": [{"node": "n1", "total": 180}, {"node": "n2", "total": 159}],
                },
            ),
        ]
    )
    found = rows(store, "SELECT * FROM plugin_scores ORDER BY node, plugin")
    assert [(r["node"], r["plugin"], r["raw"], r["normalized"], r["weighted"]) for r in found] == [
        ("n1", "Balanced", 7, 70, 140),
        ("n1", "Fit", 40, 40, 40),
        ("n2", "Balanced", 3, 30, 60),
        ("n2", "Fit", 12, 99, 99),
    ]
    assert all(isinstance(r["weighted"], int) for r in found)
