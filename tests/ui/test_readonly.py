"""The engine every page reads through cannot write, on either database."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from eventsched.audit.readonly import read_only_engine, writer_privileges
from eventsched.events import EventRecord, EventStoreError
from tests.ui.conftest import Log, count_events, open_read_only

WRITES = [
    "INSERT INTO events (position, recorded_at, kind, data) VALUES (999, '2026-01-01', 'queued', '{}')",
    "UPDATE events SET kind = 'queued'",
    "DELETE FROM snapshots",
    "CREATE TABLE mine (a integer)",
    "DROP VIEW decisions",
]


def test_nothing_writes_through_it(ui_log: Log) -> None:
    before = count_events(ui_log.owner_url)
    engine = read_only_engine(ui_log.reader_url)
    try:
        for statement in WRITES:
            with engine.connect() as conn, pytest.raises(sa.exc.DBAPIError):
                conn.exec_driver_sql(statement)
        if ui_log.backend == "postgresql":
            with engine.connect() as conn:
                assert conn.exec_driver_sql("SHOW transaction_read_only").scalar() == "on"
        else:
            with engine.connect() as conn, pytest.raises(sa.exc.DBAPIError):
                conn.exec_driver_sql("ATTACH DATABASE '/tmp/elsewhere.db' AS other")
        assert writer_privileges(engine)[1] == []
    finally:
        engine.dispose()
    store = open_read_only(ui_log.reader_url)
    try:
        with pytest.raises(EventStoreError):
            store.append([EventRecord(kind="queued", uid="u", namespace="ns", name="p")])
        assert store.last_position() == before[0]
    finally:
        store.close()
    assert count_events(ui_log.owner_url) == before


def test_the_owner_is_named_a_writer_and_still_cannot_write(ui_log: Log) -> None:
    if ui_log.backend != "postgresql":
        pytest.skip("SQLite has no roles: the file is opened read-only instead")
    before = count_events(ui_log.owner_url)
    engine = read_only_engine(ui_log.owner_url)
    try:
        user, privileges = writer_privileges(engine)
        # The read-only transaction is a wall of its own, even for a superuser.
        for statement in WRITES:
            with engine.connect() as conn, pytest.raises(sa.exc.DBAPIError, match="read-only"):
                conn.exec_driver_sql(statement)
    finally:
        engine.dispose()
    assert user == "postgres"
    assert "superuser" in privileges and "INSERT on events" in privileges
    assert count_events(ui_log.owner_url) == before
