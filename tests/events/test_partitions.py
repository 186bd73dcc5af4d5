"""PostgreSQL's day partitions of `events`: made by the migration, ahead, and on demand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from eventsched.events import EventRecord, EventStore, downgrade, upgrade
from eventsched.events.partitions import DAYS_AHEAD, existing, partition_for

pytestmark = pytest.mark.parametrize("backend", ["postgresql"])


def partitions_of(store: EventStore) -> dict[str, str]:
    """Partition name -> its bound as PostgreSQL prints it (in UTC)."""
    with store.engine.connect() as conn:
        conn.execute(sa.text("SET TIME ZONE 'UTC'"))
        names = [p.name for p in existing(conn)]
        rows = conn.execute(
            sa.text(
                "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_class AS c "
                "WHERE c.relname = ANY(:names)"
            ),
            {"names": names},
        )
        return {str(name): str(expr) for name, expr in rows}


def bound(day: datetime) -> str:
    start = day.strftime("%Y-%m-%d 00:00:00+00")
    end = (day + timedelta(days=1)).strftime("%Y-%m-%d 00:00:00+00")
    return f"FOR VALUES FROM ('{start}') TO ('{end}')"


def partition_of_position(store: EventStore, position: int) -> str:
    with store.engine.connect() as conn:
        return str(
            conn.execute(
                sa.text("SELECT tableoid::regclass::text FROM events WHERE position = :p"),
                {"p": position},
            ).scalar_one()
        )


def test_the_migration_makes_today_and_the_days_ahead(store: EventStore) -> None:
    today = datetime.now(UTC)
    found = partitions_of(store)
    for ahead in range(DAYS_AHEAD + 1):
        day = today + timedelta(days=ahead)
        assert found[partition_for(day).name] == bound(day)
    [position] = store.append([EventRecord(kind="queued")])
    assert partition_of_position(store, position) == partition_for(today).name


def test_ensure_partitions_makes_the_same_days_the_migration_does(store: EventStore) -> None:
    later = datetime.now(UTC) + timedelta(days=40)
    store.clock = lambda: later
    assert store.ensure_partitions(days_ahead=2)
    found = partitions_of(store)
    for ahead in range(3):
        day = later + timedelta(days=ahead)
        assert found[partition_for(day).name] == bound(day)


def test_an_append_with_no_partition_for_its_day_creates_it(store: EventStore) -> None:
    far = datetime(2031, 5, 17, 9, 30, tzinfo=UTC)
    assert partition_for(far).name not in partitions_of(store)
    store.clock = lambda: far
    [position] = store.append([EventRecord(kind="queued")])
    assert partition_of_position(store, position) == "events_20310517"
    [event] = store.read()
    assert event.recorded_at == far
    assert store.verify_chain().ok


def test_the_append_only_triggers_hold_on_every_partition(store: EventStore) -> None:
    store.append([EventRecord(kind="queued")])
    name = partition_for(datetime.now(UTC)).name
    with store.engine.connect() as conn:
        for statement in (
            f"UPDATE {name} SET kind = 'bound'",
            f"DELETE FROM {name}",
            "UPDATE events SET kind = 'bound'",
        ):
            with pytest.raises(sa.exc.DBAPIError, match="append-only"), conn.begin():
                conn.execute(sa.text(statement))


def test_upgrading_a_0001_log_keeps_every_event_view_and_grant(db_url: str) -> None:
    downgrade(db_url, "0001")
    engine = sa.create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = "
                "'eventsched_test_reader') THEN CREATE ROLE eventsched_test_reader; END IF; END $$"
            )
        )
        conn.execute(sa.text("GRANT SELECT ON events, placements TO eventsched_test_reader"))
    with EventStore.connect(db_url, require_schema=False) as store:
        for days_ago in (3, 1, 0):
            moment = datetime.now(UTC) - timedelta(days=days_ago)
            store.clock = lambda moment=moment: moment  # type: ignore[misc]
            store.append(
                [
                    EventRecord(kind="queued", namespace="ns", name=f"p{days_ago}"),
                    EventRecord(kind="bound", namespace="ns", name=f"p{days_ago}", node="n1"),
                ]
            )
        before = list(store.read())
    upgrade(db_url)
    with EventStore.connect(db_url) as store:
        assert list(store.read()) == before
        assert store.verify_chain().ok
        found = partitions_of(store)
        for days_ago in (3, 2, 1, 0):
            day = datetime.now(UTC) - timedelta(days=days_ago)
            assert found[partition_for(day).name] == bound(day)
        assert partition_of_position(store, 1) == partition_for(before[0].recorded_at).name
    with engine.connect() as conn:
        placements = conn.execute(sa.text("SELECT name FROM placements ORDER BY position"))
        assert placements.scalars().all() == ["p3", "p1", "p0"]
        granted = conn.execute(
            sa.text(
                "SELECT table_name FROM information_schema.role_table_grants "
                "WHERE grantee = 'eventsched_test_reader' AND table_schema = current_schema() "
                "ORDER BY table_name"
            )
        )
        assert granted.scalars().all() == ["events", "placements"]
    downgrade(db_url, "0001")
    with EventStore.connect(db_url, require_schema=False) as store:
        assert list(store.read()) == before
    engine.dispose()
