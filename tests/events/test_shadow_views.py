"""The view `shadow_verdicts` (migration 0008): same rows on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from eventsched.events import EventRecord, EventStore, downgrade, upgrade
from tests.cookbook import cookbook

COLUMNS = [
    "position",
    "recorded_at",
    "namespace",
    "name",
    "uid",
    "scheduler",
    "observed",
    "verdict",
    "node",
    "picked",
    "message",
    "our_message",
    "cause",
    "our_total",
    "their_total",
    "lag_seconds",
    "attempt",
]
NO_FIT = "0/3 nodes are available: 3 Insufficient cpu."


def rows(store: EventStore, sql: str) -> list[dict[str, Any]]:
    with store.engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(sa.text(sql))]


def shadow_attempt(pod: str, attempt: str, node: str | None, **data: Any) -> list[EventRecord]:
    """A shadow attempt as `eventsched shadow` writes it: started (with `shadow`), then
    its verdict (the Filter and Score events in between are left out here)."""
    pod_fields: dict[str, Any] = {
        "scheduler": "default-scheduler",
        "attempt": attempt,
        "uid": f"uid-{pod}",
        "namespace": "ns",
        "name": pod,
    }
    shadow = {"scheduler": "default-scheduler", "observed": data["observed"]}
    if node:
        shadow["node"] = node
    verdict = {"scheduler": "default-scheduler", "lagSeconds": 0.012, **data}
    if node:
        verdict["node"] = node
    return [
        EventRecord(kind="attempt_started", data={"attempts": 1, "shadow": shadow}, **pod_fields),
        EventRecord(kind="shadow_verdict", node=node, data=verdict, **pod_fields),
    ]


def a_log(store: EventStore) -> None:
    """kube-scheduler placed `web` where eventsched would (agree), `api` on a node that
    ties with eventsched's, `db` on a node eventsched scores lower (differ); it found no
    node for `big` (eventsched neither, same message) and nominated n3 for `vip`,
    where eventsched's dry run preempts on n2."""
    store.append(
        shadow_attempt(
            "web",
            "att-1",
            "n1",
            observed="placed",
            verdict="agree",
            picked="n1",
            totals={"ours": 180, "theirs": 180},
        )
    )
    store.append(
        shadow_attempt(
            "api",
            "att-2",
            "n2",
            observed="placed",
            verdict="tie",
            picked="n3",
            cause="n2 and n3 both total 170",
            totals={"ours": 170, "theirs": 170},
        )
        + shadow_attempt(
            "db",
            "att-3",
            "n2",
            observed="placed",
            verdict="differ",
            picked="n1",
            cause="n1 totals 190 against 150 for default-scheduler's node n2: "
            "NodeResourcesFit 80 vs 40 (weighted)",
            totals={"ours": 190, "theirs": 150},
            lagSeconds=0.5,
        )
    )
    store.append(
        shadow_attempt(
            "big",
            "att-4",
            None,
            observed="unschedulable",
            verdict="agree",
            picked=None,
            message=NO_FIT,
            ourMessage=NO_FIT,
        )
        + shadow_attempt(
            "vip",
            "att-5",
            "n3",
            observed="nominated",
            verdict="differ",
            picked=None,
            message=NO_FIT,
            ourMessage=NO_FIT,
            cause="default-scheduler nominated n3; eventsched's PostFilter nominates n2 "
            "(victims ns/low; chosen by fewest victims)",
            preemption={"nominatedNodeName": "n2", "victims": [{"namespace": "ns", "name": "low"}]},
        )
    )


def test_shadow_verdicts_one_row_per_verdict(store: EventStore) -> None:
    a_log(store)
    found = rows(store, "SELECT * FROM shadow_verdicts ORDER BY position")
    assert list(found[0]) == COLUMNS
    assert [
        (
            r["position"],
            r["namespace"] + "/" + r["name"],
            r["uid"],
            r["scheduler"],
            r["observed"],
            r["verdict"],
            r["node"],
            r["picked"],
            r["our_total"],
            r["their_total"],
            r["attempt"],
        )
        for r in found
    ] == [
        (
            2,
            "ns/web",
            "uid-web",
            "default-scheduler",
            "placed",
            "agree",
            "n1",
            "n1",
            180,
            180,
            "att-1",
        ),
        (
            4,
            "ns/api",
            "uid-api",
            "default-scheduler",
            "placed",
            "tie",
            "n2",
            "n3",
            170,
            170,
            "att-2",
        ),
        (
            6,
            "ns/db",
            "uid-db",
            "default-scheduler",
            "placed",
            "differ",
            "n2",
            "n1",
            190,
            150,
            "att-3",
        ),
        (
            8,
            "ns/big",
            "uid-big",
            "default-scheduler",
            "unschedulable",
            "agree",
            None,
            None,
            None,
            None,
            "att-4",
        ),
        (
            10,
            "ns/vip",
            "uid-vip",
            "default-scheduler",
            "nominated",
            "differ",
            "n3",
            None,
            None,
            None,
            "att-5",
        ),
    ]
    by_name = {r["name"]: r for r in found}
    assert by_name["db"]["cause"] == (
        "n1 totals 190 against 150 for default-scheduler's node n2: "
        "NodeResourcesFit 80 vs 40 (weighted)"
    )
    assert by_name["api"]["cause"] == "n2 and n3 both total 170"
    assert by_name["web"]["cause"] is None and by_name["web"]["message"] is None
    assert (by_name["big"]["message"], by_name["big"]["our_message"]) == (NO_FIT, NO_FIT)
    assert by_name["vip"]["cause"].startswith("default-scheduler nominated n3;")
    assert [r["lag_seconds"] for r in found] == [0.012, 0.012, 0.5, 0.012, 0.012]
    assert all(r["recorded_at"] is not None for r in found)


def test_the_node_comes_from_the_data_when_the_column_is_empty(store: EventStore) -> None:
    """The node column is what the vocabulary promises; a verdict written without it still
    names that scheduler's node (data.node)."""
    started, verdict = shadow_attempt(
        "odd", "att-9", "n4", observed="placed", verdict="agree", picked="n4"
    )
    verdict.node = None
    store.append([started, verdict])
    assert rows(store, "SELECT node, picked FROM shadow_verdicts") == [
        {"node": "n4", "picked": "n4"}
    ]


def test_decisions_hold_the_verdicts(store: EventStore) -> None:
    a_log(store)
    found = rows(store, "SELECT kind, COUNT(*) AS n FROM decisions GROUP BY kind ORDER BY kind")
    assert [(r["kind"], r["n"]) for r in found] == [("attempt_started", 5), ("shadow_verdict", 5)]


def test_the_cookbook_shadow_queries(store: EventStore) -> None:
    """docs/querying.md's shadow queries, as the docs show them, on both databases."""
    a_log(store)
    dialect = store.engine.dialect.name
    counts = rows(store, cookbook("shadow-verdicts", dialect))
    assert [
        (r["scheduler"], r["observed"], r["verdict"], r["verdicts"], float(r["max_lag_s"]))
        for r in counts
    ] == [
        ("default-scheduler", "nominated", "differ", 1, 0.012),
        ("default-scheduler", "placed", "agree", 1, 0.012),
        ("default-scheduler", "placed", "differ", 1, 0.5),
        ("default-scheduler", "placed", "tie", 1, 0.012),
        ("default-scheduler", "unschedulable", "agree", 1, 0.012),
    ]
    differ = rows(store, cookbook("shadow-differ", dialect))
    assert [(r["pod"], r["theirs"], r["ours"]) for r in differ] == [
        ("ns/db", "n2", "n1"),
        ("ns/vip", "n3", None),
    ]
    assert differ[0]["cause"].startswith("n1 totals 190 against 150")


def test_downgrade_to_0007_removes_the_view_and_the_verdicts_from_decisions(db_url: str) -> None:
    with EventStore.connect(db_url) as store:
        a_log(store)
    downgrade(db_url, "0007")
    engine = sa.create_engine(db_url)
    try:
        assert "shadow_verdicts" not in sa.inspect(engine).get_view_names()
        with engine.connect() as conn:
            kinds = conn.execute(sa.text("SELECT DISTINCT kind FROM decisions")).scalars().all()
        assert kinds == ["attempt_started"]
        if db_url.startswith("postgresql"):
            assert "'shadow_verdict'" not in _kind_index(engine)
    finally:
        engine.dispose()
    upgrade(db_url)
    with EventStore.connect(db_url) as store:
        assert len(rows(store, "SELECT * FROM shadow_verdicts")) == 5
        if db_url.startswith("postgresql"):
            assert "'shadow_verdict'" in _kind_index(store.engine)


def _kind_index(engine: sa.Engine) -> str:
    with engine.connect() as conn:
        return str(
            conn.exec_driver_sql(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_events_kind' "
                "AND schemaname = current_schema()"
            ).scalar_one()
        )


def test_a_read_of_the_view_uses_the_partial_index_on_kind(db_url: str) -> None:
    """PostgreSQL: the verdicts are found through the partial index on kind, not by reading
    every event of the log."""
    if not db_url.startswith("postgresql"):
        pytest.skip("the partial index is PostgreSQL's (SQLite keeps a B-tree on kind)")
    engine = sa.create_engine(db_url)
    try:
        with engine.begin() as conn:  # 20,000 decisions, one verdict in a hundred
            conn.exec_driver_sql(
                "INSERT INTO events (position, recorded_at, kind, data) SELECT g, now(), "
                "CASE WHEN mod(g, 100) = 0 THEN 'shadow_verdict' ELSE 'filtered' END, "
                '\'{"verdict": "agree"}\' FROM generate_series(1, 20000) AS g'
            )
            conn.exec_driver_sql("ANALYZE events")
        with engine.connect() as conn:
            plan = "\n".join(
                r[0] for r in conn.exec_driver_sql("EXPLAIN SELECT * FROM shadow_verdicts")
            )
            count = conn.exec_driver_sql("SELECT COUNT(*) FROM shadow_verdicts").scalar_one()
        assert "kind_idx" in plan, plan
        assert count == 200
    finally:
        engine.dispose()
