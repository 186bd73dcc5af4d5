"""The appender notices the log lost the last batch it appended (a failover to a
replica that had not received it) and writes nothing; libpq's multi-host URLs are
accepted. The failover itself, on real PostgreSQL servers: tests/faults/test_pg_failover.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from eventsched.cli.database import resolve_url
from eventsched.events import EventRecord, EventStore, LogTailLostError, upgrade
from eventsched.events.engine import display_url, multihost_as_query, parse_url


def records(n: int) -> list[EventRecord]:
    return [EventRecord("maintenance", data={"action": "test", "n": i}) for i in range(n)]


def test_an_append_after_the_log_lost_its_tail_raises_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    upgrade(f"sqlite:///{path}")
    store = EventStore.connect(f"sqlite:///{path}")
    store.append(records(2))
    store.engine.dispose()  # the last connection's close checkpoints the WAL into the file
    shutil.copy(path, tmp_path / "replica.db")
    store.append(records(3))
    lost = store.appender.appended
    assert lost is not None and lost.position == 5
    store.engine.dispose()
    shutil.copy(tmp_path / "replica.db", path)  # the replica, without the last batch

    with pytest.raises(LogTailLostError) as raised:
        store.append(records(1))
    assert (raised.value.appended, raised.value.head.position) == (lost, 2)
    assert "lost its tail: it ends at batch 1 (position 2)" in str(raised.value)
    assert store.last_position() == 2

    store.appender.appended = None  # resynchronised: the log as it is now
    assert store.append(records(1)) == [3]
    assert store.verify_chain().ok
    store.close()


def test_another_writers_batch_on_top_of_ours_is_no_lost_tail(store: EventStore) -> None:
    store.append(records(1))
    other = EventStore.connect(str(store.engine.url.render_as_string(hide_password=False)))
    try:
        other.append(records(2))
    finally:
        other.close()
    assert store.append(records(1)) == [4]


@pytest.mark.parametrize(
    ("given", "resolved"),
    [
        (
            "postgresql://u:pw@h1:5432,h2:5433/db?target_session_attrs=read-write",
            "postgresql+psycopg://u:pw@/db?host=h1:5432&host=h2:5433&target_session_attrs=read-write",
        ),
        ("postgres://u@h1,h2:5/db", "postgresql+psycopg://u@/db?host=h1&host=h2:5"),
        ("postgresql://u@h1:5432/db", "postgresql+psycopg://u@h1:5432/db"),
    ],
)
def test_libpq_multi_host_urls_become_sqlalchemys(given: str, resolved: str) -> None:
    assert resolve_url(given) == resolved
    parsed = parse_url(given)
    assert parsed.drivername == "postgresql+psycopg"
    assert parsed.database == "db"
    assert "pw" not in display_url(given)


def test_the_multi_host_hosts_keep_their_order_and_the_other_parameters() -> None:
    parsed = parse_url(multihost_as_query("postgresql+psycopg://u@a:1,b:2,c:3/db?sslmode=require"))
    assert parsed.query["host"] == ("a:1", "b:2", "c:3")
    assert parsed.query["sslmode"] == "require"
