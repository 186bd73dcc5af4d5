"""Schema management: migrations create what schema.py describes; outdated schemas are refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

import eventsched.events.migrate as migrate
from eventsched.events import (
    DECISION_KINDS,
    EventRecord,
    EventStore,
    SchemaOutdatedError,
    check_schema,
    current_revision,
    downgrade,
    head_revision,
    migrations_dir,
    upgrade,
)
from eventsched.events.partitions import is_partition_name
from eventsched.events.schema import (
    ATTEMPT_KINDS,
    EVENT_COLUMNS,
    NODE_KINDS,
    POD_NAMING_KINDS,
    RARE_KINDS,
    attempt_events,
    events,
    kind_in,
    metadata,
    pod_uids,
)
from eventsched.events.vocabulary import INPUT_KINDS


def include_name(name: str | None, type_: str, parents: dict[str, str | None]) -> bool:
    if type_ == "table":
        return not is_partition_name(name)
    return not is_partition_name(parents.get("table_name"))


REPO = Path(__file__).resolve().parents[2]
VIEWS = {
    "decisions",
    "placements",
    "filter_rejections",
    "plugin_scores",
    "preemptions",
    "preemption_victims",
    "scheduling_gates",
    "shadow_verdicts",
}


def test_check_schema_on_an_empty_database_names_the_command(empty_db_url: str) -> None:
    with pytest.raises(SchemaOutdatedError) as caught:
        check_schema(empty_db_url)
    message = str(caught.value)
    assert "has no eventsched schema" in message
    assert "run `eventsched db upgrade --db " in message
    assert caught.value.current is None
    assert caught.value.needed == head_revision()
    upgrade(empty_db_url)
    check_schema(empty_db_url)
    engine = sa.create_engine(empty_db_url)
    try:
        check_schema(engine)
        # SCHEMA_HEAD is what check_schema compares with, without loading Alembic.
        assert current_revision(engine) == head_revision() == migrate.SCHEMA_HEAD == "0013"
    finally:
        engine.dispose()


def test_check_schema_names_both_revisions(db_url: str) -> None:
    downgrade(db_url, "0002")
    with pytest.raises(SchemaOutdatedError) as caught:
        check_schema(db_url)
    assert (
        "is at revision 0002, this eventsched needs 0013: run `eventsched db upgrade --db"
        in str(caught.value)
    )


def test_check_schema_on_a_newer_database(db_url: str) -> None:
    engine = sa.create_engine(db_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE alembic_version SET version_num = '9999'"))
        with pytest.raises(
            SchemaOutdatedError, match="revision 9999, which this eventsched does not know"
        ):
            check_schema(engine)
    finally:
        engine.dispose()


def test_upgrade_is_idempotent_and_downgrade_removes_everything(db_url: str) -> None:
    upgrade(db_url)
    engine = sa.create_engine(db_url)
    try:
        names = set(sa.inspect(engine).get_table_names()) | set(sa.inspect(engine).get_view_names())
        assert {"events", "event_batches", "snapshots", "alembic_version"} | VIEWS <= names
        downgrade(db_url, "base")
        inspector = sa.inspect(engine)
        assert set(inspector.get_table_names()) <= {"alembic_version"}
        assert set(inspector.get_view_names()) == set()
        upgrade(engine)
        with EventStore.connect(db_url) as store:
            assert store.append([EventRecord(kind="queued")]) == [1]
    finally:
        engine.dispose()


def test_migrated_schema_matches_schema_module(db_url: str) -> None:
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"include_name": include_name})
            diff = compare_metadata(context, metadata)
        assert diff == []
        inspector = sa.inspect(engine)
        indexes = {i["name"]: i["column_names"] for i in inspector.get_indexes("events")}
        assert indexes == {
            "ix_events_namespace_name": ["namespace", "name"],
            "ix_events_uid": ["uid"],
            "ix_events_attempt": ["attempt"],
            "ix_events_kind": ["kind"],
            "ix_events_recorded_at": ["recorded_at"],
            "ix_events_node": ["node", "position"],
        }
        key = inspector.get_pk_constraint("events")["constrained_columns"]
        # PostgreSQL: a partitioned table's key must hold the partition column.
        assert key == (["position", "recorded_at"] if "postgresql" in db_url else ["position"])
    finally:
        engine.dispose()


def _latest_frozen(constant: str) -> dict[str, object]:
    """`constant` as the latest migration that lists it froze it."""
    latest = [
        path
        for path in sorted((migrations_dir() / "versions").glob("[0-9]*.py"))
        if f"\n{constant} = (" in path.read_text()
    ][-1]
    source = latest.read_text()
    namespace: dict[str, object] = {}
    start = source.index(f"\n{constant} = (")
    exec(source[start : source.index(")\n", start) + 2], namespace)
    return namespace


def test_frozen_decision_kinds_match_the_vocabulary() -> None:
    """A kind added to the vocabulary needs a migration that redefines the `decisions` view:
    the latest migration that lists DECISION_KINDS lists the vocabulary's."""
    frozen = _latest_frozen("DECISION_KINDS")["DECISION_KINDS"]
    assert set(frozen) == set(DECISION_KINDS)  # type: ignore[call-overload]


def test_frozen_rare_kinds_match_the_schema_module() -> None:
    """The partial index on kind covers the kinds schema.RARE_KINDS names (as migration
    0006 made it and the latest migration that lists them remade it), the index on node
    those of NODE_KINDS (0006)."""
    assert _latest_frozen("RARE_KINDS")["RARE_KINDS"] == RARE_KINDS
    assert _latest_frozen("NODE_KINDS")["NODE_KINDS"] == NODE_KINDS
    assert set(RARE_KINDS) <= set(DECISION_KINDS) | set(INPUT_KINDS)


def test_frozen_pod_lookup_kinds_match_the_schema_module() -> None:
    """Migration 0007's partial indexes cover the kinds schema.py names."""
    source = (migrations_dir() / "versions" / "0007_pod_lookup_indexes.py").read_text()
    namespace: dict[str, object] = {}
    for constant in ("POD_NAMING_KINDS", "ATTEMPT_KINDS"):
        start = source.index(f"\n{constant} = (")
        exec(source[start : source.index(")", start) + 1], namespace)
    assert namespace["POD_NAMING_KINDS"] == POD_NAMING_KINDS
    assert namespace["ATTEMPT_KINDS"] == ATTEMPT_KINDS


def _plan(conn: sa.Connection, statement: sa.Executable) -> str:
    sql = str(statement.compile(conn, compile_kwargs={"literal_binds": True}))  # type: ignore[attr-defined]
    return "\n".join(r[0] for r in conn.exec_driver_sql(f"EXPLAIN {sql}"))


def test_reads_by_pod_name_and_by_attempt_use_the_partial_indexes(db_url: str) -> None:
    """PostgreSQL: a pod's events by name, and an attempt's, are found through the
    partial indexes and the uid index (as the store and the web page ask), not by
    reading every event; the decisions in between are in neither partial index."""
    if not db_url.startswith("postgresql"):
        pytest.skip("the partial indexes are PostgreSQL's (SQLite keeps B-trees)")
    engine = sa.create_engine(db_url)
    try:
        with engine.begin() as conn:  # 5,000 pods, each observed and tried once
            conn.exec_driver_sql(
                "INSERT INTO events (position, recorded_at, kind, uid, namespace, name, "
                "attempt, data) SELECT g, now(), (ARRAY['pod_observed', 'attempt_started', "
                "'filtered', 'scored', 'selected', 'bound'])[mod(g, 6) + 1], 'uid-' || g / 6, "
                "'default', 'pod-' || g / 6, CASE WHEN mod(g, 6) > 0 THEN 'a-' || g / 6 END, '{}' "
                "FROM generate_series(1, 30000) AS g"
            )
            conn.exec_driver_sql("ANALYZE events")
            # The day partition holding the rows (the empty ones are read whole, for nothing).
            day = conn.exec_driver_sql("SELECT tableoid::regclass::text FROM events LIMIT 1")
            full_scan = f"Seq Scan on {day.scalar_one().split('.')[-1]} "
        by_name = sa.select(*EVENT_COLUMNS).where(events.c.uid.in_(pod_uids("default", "pod-7")))
        with engine.connect() as conn:
            name_plan = _plan(conn, by_name)
            attempt_plan = _plan(conn, attempt_events("a-7"))
            found = conn.execute(attempt_events("a-7")).all()
        assert "namespace_name_idx" in name_plan and "uid_idx" in name_plan, name_plan
        assert full_scan not in name_plan, name_plan
        assert "attempt_idx" in attempt_plan and "uid_idx" in attempt_plan, attempt_plan
        assert full_scan not in attempt_plan, attempt_plan
        assert sorted(row.kind for row in found) == [
            "attempt_started",
            "bound",
            "filtered",
            "scored",
            "selected",
        ]
    finally:
        engine.dispose()


def test_a_read_of_rare_kinds_uses_the_partial_index(db_url: str) -> None:
    """PostgreSQL: what every start reads (the log's `config_loaded` events) is found
    through the partial index on kind, not by reading every event (the query the store
    sends, as the database plans it); time ranges through the BRIN index."""
    if not db_url.startswith("postgresql"):
        pytest.skip("the partial and BRIN indexes are PostgreSQL's (SQLite keeps B-trees)")
    statement = (
        sa.select(*EVENT_COLUMNS)
        .where(
            events.c.position <= 1_000_000,
            kind_in(["config_loaded"]),  # as the store asks
            events.c.position > 0,
        )
        .order_by(events.c.position)
        .limit(500)
    )
    engine = sa.create_engine(db_url)
    try:
        with engine.begin() as conn:  # a log of 20,000 pod decisions and one config_loaded
            conn.exec_driver_sql(
                "INSERT INTO events (position, recorded_at, kind, data) SELECT g, now(), "
                "CASE WHEN g = 5000 THEN 'config_loaded' ELSE 'filtered' END, '{}' "
                "FROM generate_series(1, 20000) AS g"
            )
            conn.exec_driver_sql("ANALYZE events")
        with engine.connect() as conn:
            sql = str(statement.compile(conn, compile_kwargs={"literal_binds": True}))
            plan = "\n".join(r[0] for r in conn.exec_driver_sql(f"EXPLAIN {sql}"))
            method = conn.exec_driver_sql(
                "SELECT am.amname FROM pg_class c JOIN pg_am am ON am.oid = c.relam "
                "WHERE c.relname = 'ix_events_recorded_at' "
                "AND c.relnamespace = CAST(current_schema() AS regnamespace)"
            ).scalar_one()
        assert "kind_idx" in plan, plan
        assert method == "brin"
    finally:
        engine.dispose()


def test_migrations_are_found_without_alembic_ini(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert migrations_dir() in (
        REPO / "migrations",
        Path(migrate.__file__).parents[1] / "_migrations",
    )
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    upgrade(url)
    check_schema(url)


def test_packaged_migrations_are_preferred(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel ships them as eventsched/_migrations; that copy wins over a checkout's."""
    packaged = tmp_path / "eventsched" / "_migrations"
    packaged.mkdir(parents=True)
    (packaged / "env.py").write_text("")
    monkeypatch.setattr(migrate.resources, "files", lambda _pkg: tmp_path / "eventsched")
    assert migrate.migrations_dir() == packaged


def test_alembic_command_line_uses_x_db(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    env = {k: v for k, v in os.environ.items() if k != "EVENTSCHED_DATABASE_URL"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "alembic",
            "-c",
            str(REPO / "alembic.ini"),
            "-x",
            f"db={url}",
            "upgrade",
            "head",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    check_schema(url)
    sql = subprocess.run(
        [
            sys.executable,
            "-m",
            "alembic",
            "-c",
            str(REPO / "alembic.ini"),
            "upgrade",
            "head",
            "--sql",
        ],
        cwd=tmp_path,
        env={**env, "EVENTSCHED_DATABASE_URL": "postgresql://u@h/db"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert sql.returncode == 0, sql.stderr
    assert "CREATE VIEW plugin_scores" in sql.stdout
    assert "CREATE VIEW preemption_victims" in sql.stdout
    assert "CREATE VIEW shadow_verdicts" in sql.stdout
    assert "CREATE OR REPLACE VIEW preemption_victims" in sql.stdout
    assert "CREATE VIEW scheduling_gates" in sql.stdout
    assert "jsonb_array_elements" in sql.stdout
