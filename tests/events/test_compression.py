"""PostgreSQL stores large events and snapshots compressed with LZ4 (migration 0013)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from eventsched.events import EventRecord, EventStore, downgrade, upgrade
from eventsched.events.partitions import create, partition_for

_COMPRESSION = sa.text(
    "SELECT c.relname, a.attcompression FROM pg_attribute AS a "
    "JOIN pg_class AS c ON c.oid = a.attrelid "
    "WHERE c.relnamespace = CAST(current_schema() AS regnamespace) "
    "AND ((c.relname = 'snapshots' AND a.attname = 'state') "
    "OR ((c.relname = 'events' OR c.relname LIKE 'events\\_2%') AND a.attname = 'data'))"
)


def _methods(engine: sa.Engine) -> dict[str, str]:
    """Each table's compression of its large column ("l": LZ4, "": the server's default)."""
    with engine.connect() as conn:
        return {str(name): str(method) for name, method in conn.execute(_COMPRESSION)}


def _lz4_built_in(engine: sa.Engine) -> bool:
    with engine.connect() as conn:
        return bool(
            conn.exec_driver_sql(
                "SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' "
                "AND 'lz4' = ANY(enumvals)"
            ).scalar()
        )


@pytest.fixture
def engine(db_url: str) -> Iterator[sa.Engine]:
    made = sa.create_engine(db_url)
    try:
        if not _lz4_built_in(made):
            pytest.fail("this PostgreSQL has no LZ4: the tests need a server built with it")
        yield made
    finally:
        made.dispose()


# SQLite compresses nothing: migration 0013 changes nothing there.
pytestmark = pytest.mark.parametrize("backend", ["postgresql"])


def test_every_table_holding_large_values_compresses_with_lz4_and_new_days_too(
    engine: sa.Engine,
) -> None:
    before = _methods(engine)
    assert {"events", "snapshots"} <= before.keys()
    assert any(name.startswith("events_") for name in before)  # days made by 0002
    assert set(before.values()) == {"l"}, before
    far = partition_for(datetime.now(UTC) + timedelta(days=400))
    with engine.begin() as conn:
        create(conn, far)
    assert _methods(engine)[far.name] == "l"


def test_a_large_event_is_stored_with_lz4_and_reads_back_whole(
    db_url: str, engine: sa.Engine
) -> None:
    listed = {"action": "listed", "pods": [f"{i:036d}" for i in range(20_000)]}
    with EventStore.connect(db_url) as store:
        (position,) = store.append([EventRecord(kind="maintenance", data=listed)])
        assert [e.data for e in store.read(position - 1)] == [listed]
    with engine.connect() as conn:
        method = conn.execute(
            sa.text("SELECT pg_column_compression(data) FROM events WHERE position = :p"),
            {"p": position},
        ).scalar_one()
    assert method == "lz4"


def test_downgrade_gives_the_columns_back_to_the_servers_default(
    db_url: str, engine: sa.Engine
) -> None:
    downgrade(db_url, "0012")
    assert set(_methods(engine).values()) == {""}
    upgrade(db_url)
    assert set(_methods(engine).values()) == {"l"}
