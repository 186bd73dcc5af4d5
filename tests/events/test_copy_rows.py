"""PostgreSQL's append writes the events with one binary COPY (events/copyrows.py).

What the append's error handling relies on: a driver error during the COPY comes
out as SQLAlchemy wraps the errors of `exec_driver_sql`, and a lost connection is
invalidated, so the next append gets a fresh one.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError, IntegrityError

from eventsched.events import EventRecord, EventStore, EventStoreError
from eventsched.events.appendsql import POSTGRESQL

pytestmark = pytest.mark.parametrize("backend", ["postgresql"])


NOW = datetime.now(UTC)


def _row(position: int, data: str = '{"a":[1,"\\u00e9",null]}') -> tuple[object, ...]:
    return (
        position,
        NOW,
        "eventsched",
        "instance-1",
        None,
        "queued",
        "uid-1",
        "default",
        "pod-1",
        None,
        None,
        data,
    )


def test_copied_rows_read_back_with_their_json(store: EventStore) -> None:
    with store.engine.connect() as conn, conn.begin():
        POSTGRESQL.write_events(conn, [_row(1), _row(2, '{"b":{"c":2.5}}')])
    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT position, data, attempt, data->>'b' FROM events ORDER BY position")
        ).all()
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (1, {"a": [1, "é", None]}, None),
        (2, {"b": {"c": 2.5}}, None),
    ]
    assert rows[1][3] == '{"c": 2.5}'  # stored as jsonb, not as a JSON string


def test_a_constraint_broken_by_a_copied_row_is_sqlalchemys_integrity_error(
    store: EventStore,
) -> None:
    with store.engine.connect() as conn:
        with pytest.raises(IntegrityError) as raised, conn.begin():
            POSTGRESQL.write_events(conn, [_row(7), _row(7)])  # the key: (position, time)
        assert not raised.value.connection_invalidated
        assert not conn.invalidated
    with store.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM events")).scalar() == 0


def test_a_connection_lost_during_the_copy_is_invalidated_and_the_next_append_works(
    store: EventStore,
) -> None:
    with store.engine.connect() as conn:
        pid = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        conn.commit()
        with store.engine.connect() as killer:
            killer.exec_driver_sql(f"SELECT pg_terminate_backend({pid})")
        transaction = conn.begin()
        with pytest.raises(DBAPIError) as raised:
            POSTGRESQL.write_events(conn, [_row(1)])
        assert raised.value.connection_invalidated
        assert conn.invalidated  # by the COPY's error itself, before any rollback
        transaction.rollback()
    stored = store.append_stored([EventRecord("queued", uid="uid-2", data={"x": 1})])
    assert [e.position for e in stored] == [1]
    assert next(iter(store.read(0))).data == {"x": 1}


def test_an_append_whose_copy_fails_says_what_it_was_doing(store: EventStore) -> None:
    store.append([EventRecord("queued", uid="uid-1", data={})])
    with store.engine.connect() as conn, conn.begin():
        conn.exec_driver_sql("ALTER TABLE events ADD CONSTRAINT no_bob CHECK (name <> 'bob')")
    with pytest.raises(EventStoreError, match="appending 1 events"):
        store.append([EventRecord("queued", uid="uid-2", name="bob", data={})])
    assert [e.position for e in store.read(0)] == [1]
