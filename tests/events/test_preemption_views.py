"""The preemption views (migrations 0005, 0009): same rows on SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from eventsched.cli.main import main
from eventsched.events import EventRecord, EventStore, downgrade, upgrade
from tests.cookbook import cookbook

ROOT = Path(__file__).resolve().parents[2]


def rows(store: EventStore, sql: str) -> list[dict[str, Any]]:
    with store.engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(sa.text(sql))]


def victim(uid: str, name: str, priority: int, pdb: bool = False) -> dict[str, Any]:
    return {"uid": uid, "namespace": "ns", "name": name, "priority": priority, "pdbViolation": pdb}


def preempted(
    preemptor: str, attempt: str, node: str, victims: list[dict[str, Any]], **data: Any
) -> EventRecord:
    return EventRecord(
        kind="preempted",
        scheduler="prof",
        attempt=attempt,
        plugin="DefaultPreemption",
        uid=f"uid-{preemptor}",
        namespace="ns",
        name=preemptor,
        node=node,
        data={
            "nominatedNodeName": node,
            "victims": victims,
            "candidates": data.pop(
                "candidates", [{"node": node, "victims": [], "pdbViolations": 0}]
            ),
            "chosenBy": data.pop("chosenBy", "only candidate"),
            "offset": 0,
            "numCandidates": 3,
            "evaluated": 3,
            "potentialNodes": 3,
            "lowerNominated": [],
            **data,
        },
    )


def evicted(uid: str, name: str, attempt: str, node: str, outcome: str, **data: Any) -> EventRecord:
    return EventRecord(
        kind="evicted",
        scheduler="prof",
        attempt=attempt,
        uid=uid,
        namespace="ns",
        name=name,
        node=node,
        data={
            "preemptor": {"uid": "uid-big", "namespace": "ns", "name": "big"},
            "outcome": outcome,
            **data,
        },
    )


def a_log(store: EventStore) -> None:
    """`big` preempts a (PDB violated) and b on n2 in att-1; their evictions answered
    deleted and failed (then deleted when re-issued); c's eviction is not written yet.
    `huge` preempts c on n3 in att-2; an `evicted` of another attempt does not count."""
    store.append(
        [
            EventRecord(kind="post_filtered", scheduler="prof", attempt="att-1", uid="uid-big"),
            preempted(
                "big",
                "att-1",
                "n2",
                [victim("ua", "a", 10, pdb=True), victim("ub", "b", 5)],
                candidates=[
                    {"node": "n1", "victims": ["ux", "uy", "uz"], "pdbViolations": 0},
                    {"node": "n2", "victims": ["ua", "ub"], "pdbViolations": 1},
                ],
                chosenBy="fewest victims",
            ),
            evicted("ua", "a", "att-1", "n2", "deleted", code=200),
            evicted("ub", "b", "att-1", "n2", "failed", code=500, reason="etcd timeout"),
        ]
    )
    store.append(
        [
            evicted("ub", "b", "att-1", "n2", "deleted", code=200, reconciled=True),
            preempted("huge", "att-2", "n3", [victim("uc", "c", 1)]),
            evicted("uc", "c", "att-0", "n3", "gone", code=404),
        ]
    )


def test_preemptions_one_row_per_preempted_event(store: EventStore) -> None:
    a_log(store)
    found = rows(store, "SELECT * FROM preemptions ORDER BY position")
    assert list(found[0]) == [
        "position",
        "recorded_at",
        "scheduler",
        "attempt",
        "namespace",
        "name",
        "uid",
        "node",
        "victims",
        "victim_names",
        "chosen_by",
        "candidates",
    ]
    assert [
        (
            r["position"],
            r["attempt"],
            r["name"],
            r["uid"],
            r["node"],
            r["victims"],
            r["victim_names"],
            r["chosen_by"],
            r["candidates"],
        )
        for r in found
    ] == [
        (2, "att-1", "big", "uid-big", "n2", 2, "ns/a, ns/b", "fewest victims", 2),
        (6, "att-2", "huge", "uid-huge", "n3", 1, "ns/c", "only candidate", 1),
    ]
    assert all(r["recorded_at"] is not None and r["scheduler"] == "prof" for r in found)


def test_preemptions_of_an_event_without_victims(store: EventStore) -> None:
    """A malformed event still shows, with no victims named rather than no row."""
    odd = preempted("odd", "att-9", "n1", [], candidates=None)
    store.append([dataclasses.replace(odd, data={**odd.data, "victims": "none"})])
    found = rows(store, "SELECT victims, victim_names, candidates FROM preemptions")
    assert found == [{"victims": 0, "victim_names": None, "candidates": None}]


def test_preemption_victims_with_the_eviction_outcome(store: EventStore) -> None:
    a_log(store)
    found = rows(
        store,
        "SELECT * FROM preemption_victims ORDER BY position, victim_name",
    )
    assert list(found[0]) == [
        "position",
        "recorded_at",
        "scheduler",
        "attempt",
        "preemptor_namespace",
        "preemptor_name",
        "preemptor_uid",
        "node",
        "victim_namespace",
        "victim_name",
        "victim_uid",
        "priority",
        "pdb_violation",
        "outcome",
        "code",
        "reason",
        "evicted_position",
        "evicted_at",
        "preemptor_priority",
        "chosen_by",
        "plugin",
    ]
    assert [
        (
            r["position"],
            r["attempt"],
            r["preemptor_namespace"] + "/" + r["preemptor_name"],
            r["node"],
            r["victim_namespace"] + "/" + r["victim_name"],
            r["victim_uid"],
            r["priority"],
            bool(r["pdb_violation"]),
            r["outcome"],
            r["code"],
            r["reason"],
            r["evicted_position"],
        )
        for r in found
    ] == [
        (2, "att-1", "ns/big", "n2", "ns/a", "ua", 10, True, "deleted", 200, None, 3),
        # The latest `evicted` of the victim in the attempt: the re-issued one.
        (2, "att-1", "ns/big", "n2", "ns/b", "ub", 5, False, "deleted", 200, None, 5),
        # c's `evicted` is of another attempt: none written for this one yet.
        (6, "att-2", "ns/huge", "n3", "ns/c", "uc", 1, False, None, None, None, None),
    ]
    assert found[0]["evicted_at"] is not None and found[2]["evicted_at"] is None
    assert {r["preemptor_uid"] for r in found} == {"uid-big", "uid-huge"}


def test_preemption_victims_say_why_and_by_whom(store: EventStore) -> None:
    """The preemptor's priority is its last observation before the decision; the criterion
    and the plugin are the decision's."""
    store.append(
        [
            observed("big", 100),
            observed("big", 2000),
            preempted("big", "att-1", "n2", [victim("ua", "a", 10), victim("ub", "b", 5)]),
            observed("big", 3000),  # after the decision: not the priority it preempted with
        ]
    )
    found = rows(
        store,
        "SELECT victim_name, priority, preemptor_priority, chosen_by, plugin "
        "FROM preemption_victims ORDER BY victim_name",
    )
    assert found == [
        {
            "victim_name": "a",
            "priority": 10,
            "preemptor_priority": 2000,
            "chosen_by": "only candidate",
            "plugin": "DefaultPreemption",
        },
        {
            "victim_name": "b",
            "priority": 5,
            "preemptor_priority": 2000,
            "chosen_by": "only candidate",
            "plugin": "DefaultPreemption",
        },
    ]


def observed(name: str, priority: int) -> EventRecord:
    record = {"uid": f"uid-{name}", "namespace": "ns", "name": name, "priority": priority}
    return EventRecord(
        kind="pod_observed",
        scheduler="prof",
        uid=f"uid-{name}",
        namespace="ns",
        name=name,
        data=record,
    )


def test_a_failed_eviction_reads_with_its_reason(store: EventStore) -> None:
    store.append(
        [
            preempted("big", "att-1", "n2", [victim("ub", "b", 5)]),
            evicted("ub", "b", "att-1", "n2", "failed", code=403, reason="forbidden"),
        ]
    )
    found = rows(store, "SELECT outcome, code, reason FROM preemption_victims")
    assert found == [{"outcome": "failed", "code": 403, "reason": "forbidden"}]


def test_decisions_hold_preempted_and_evicted(store: EventStore) -> None:
    a_log(store)
    found = rows(store, "SELECT kind, COUNT(*) AS n FROM decisions GROUP BY kind ORDER BY kind")
    assert [(r["kind"], r["n"]) for r in found] == [
        ("evicted", 4),
        ("post_filtered", 1),
        ("preempted", 2),
    ]


def test_downgrade_to_0008_restores_the_columns_of_0005(db_url: str) -> None:
    with EventStore.connect(db_url) as store:
        a_log(store)
    downgrade(db_url, "0008")
    engine = sa.create_engine(db_url)
    try:
        assert "scheduling_gates" not in set(sa.inspect(engine).get_view_names())
        with engine.connect() as conn:
            columns = list(conn.execute(sa.text("SELECT * FROM preemption_victims")).keys())
        assert columns[-1] == "evicted_at" and len(columns) == 18
    finally:
        engine.dispose()
    upgrade(db_url)
    with EventStore.connect(db_url) as store:
        assert rows(store, "SELECT DISTINCT plugin FROM preemption_victims") == [
            {"plugin": "DefaultPreemption"}
        ]


def test_downgrade_to_0004_restores_the_old_decisions_view(db_url: str) -> None:
    with EventStore.connect(db_url) as store:
        a_log(store)
    downgrade(db_url, "0004")
    engine = sa.create_engine(db_url)
    try:
        views = set(sa.inspect(engine).get_view_names())
        assert "decisions" in views and not views & {"preemptions", "preemption_victims"}
        with engine.connect() as conn:
            kinds = conn.execute(sa.text("SELECT DISTINCT kind FROM decisions")).scalars().all()
        assert kinds == ["post_filtered"]
    finally:
        engine.dispose()
    upgrade(db_url)
    with EventStore.connect(db_url) as store:
        assert len(rows(store, "SELECT * FROM preemption_victims")) == 3


def test_the_cookbook_preemption_queries(store: EventStore) -> None:
    """docs/querying.md's two preemption queries, as the docs show them, on both databases."""
    a_log(store)
    dialect = store.engine.dialect.name
    found = rows(store, cookbook("preemptions", dialect))
    assert [(r["preemptor"], r["node"], r["victims"], r["victim_names"]) for r in found] == [
        ("ns/big", "n2", 2, "ns/a, ns/b"),
        ("ns/huge", "n3", 1, "ns/c"),
    ]
    victims = rows(store, cookbook("preemption-victims", dialect))
    assert [
        (r["preemptor"], r["victim"], r["priority"], bool(r["pdb_violation"]), r["outcome"])
        for r in victims
    ] == [
        ("ns/big", "ns/a", 10, True, "deleted"),
        ("ns/big", "ns/b", 5, False, "deleted"),
        ("ns/huge", "ns/c", 1, False, None),
    ]


def test_the_simulated_preemption_of_two_victims(db_url: str) -> None:
    """examples/preemption (the real scheduler over the simulated cluster): checkout, priority
    1000, preempts batch-1 and batch-2 (priority 10) on node-a; one row per victim, with the
    decision and the eviction each at its position and time."""
    assert main(["simulate", str(ROOT / "examples" / "preemption"), "--db", db_url]) == 0
    with EventStore.connect(db_url) as store:
        found = rows(
            store,
            "SELECT * FROM preemption_victims WHERE preemptor_name = 'checkout' "
            "ORDER BY victim_name",
        )
    assert [
        (
            r["preemptor_namespace"] + "/" + r["preemptor_name"],
            r["preemptor_priority"],
            r["node"],
            r["victim_namespace"] + "/" + r["victim_name"],
            r["priority"],
            bool(r["pdb_violation"]),
            r["chosen_by"],
            r["plugin"],
            r["outcome"],
            r["code"],
        )
        for r in found
    ] == [
        (
            "shop/checkout",
            1000,
            "node-a",
            f"jobs/batch-{i}",
            10,
            False,
            "lowest highest-victim priority",
            "DefaultPreemption",
            "deleted",
            200,
        )
        for i in (1, 2)
    ]
    decision = {r["position"] for r in found}
    assert len(decision) == 1 and all(r["evicted_position"] > r["position"] for r in found)
    assert all(r["evicted_at"] is not None and r["recorded_at"] is not None for r in found)
