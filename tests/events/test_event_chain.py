"""The log is append-only and its history is provable: triggers refuse edits, hashes catch them."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from eventsched.events import EventRecord, EventStore, canonical_json
from eventsched.events.chain import GENESIS, batch_hash, event_json_parts, iso

APPEND_ONLY = "events is append-only: UPDATE and DELETE are refused (use `eventsched db prune`)"


@pytest.fixture
def raw(db_url: str) -> Iterator[sa.Engine]:
    """A plain engine, as someone bypassing eventsched would use."""
    engine = sa.create_engine(db_url)
    yield engine
    engine.dispose()


def fill(store: EventStore) -> None:
    for b in range(4):
        store.append(
            [EventRecord(kind="queued", uid=f"u{b}", data={"batch": b, "i": i}) for i in range(3)]
        )


def drop_triggers(raw: sa.Engine) -> None:
    """What an attacker with table ownership could do before editing history."""
    with raw.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("ALTER TABLE events DISABLE TRIGGER USER"))
            conn.execute(sa.text("ALTER TABLE event_batches DISABLE TRIGGER USER"))
        else:
            for table in ("events", "event_batches"):
                conn.execute(sa.text(f"DROP TRIGGER {table}_no_update"))
                conn.execute(sa.text(f"DROP TRIGGER {table}_no_delete"))


def test_event_json_is_plain_canonical_json() -> None:
    """Anyone can re-verify the chain with json.dumps(sort_keys=True, separators=(",", ":"))."""
    when = datetime(2025, 3, 1, 12, 30, 5, 120, tzinfo=UTC)
    columns = {
        "kind": "bound",
        "scheduler": "s",
        "instance": 'q"uote',
        "attempt": None,
        "uid": "ü",
        "namespace": "ns",
        "name": "n",
        "node": None,
        "plugin": "P\n",
    }
    data = {"b": [1.0, 2.5, {"z": None}], "a": "✓", "big": 1e20}
    mine = event_json_parts(data_json=canonical_json(data), **columns).render(7, iso(when))
    plain = {
        **columns,
        "position": 7,
        "recorded_at": when.isoformat(),
        "data": {"a": "✓", "b": [1, 2.5, {"z": None}], "big": 10**20},
    }
    assert mine == json.dumps(plain, sort_keys=True, separators=(",", ":"))
    assert batch_hash(GENESIS, [mine]) == batch_hash("", [mine])


def test_chain_verifies(store: EventStore) -> None:
    assert store.verify_chain().ok
    assert store.verify_chain().batches == 0
    fill(store)
    report = store.verify_chain()
    assert report.ok, report.detail
    assert (report.batches, report.events, report.first_broken_batch) == (4, 12, None)
    assert len(report.last_hash) == 64


def test_hashes_link_each_batch_to_the_previous(store: EventStore) -> None:
    fill(store)
    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT batch, first_position, last_position, prev_hash, hash "
                "FROM event_batches ORDER BY batch"
            )
        ).all()
    assert [(r[0], r[1], r[2]) for r in rows] == [(1, 1, 3), (2, 4, 6), (3, 7, 9), (4, 10, 12)]
    assert rows[0][3] == GENESIS
    for before, after in itertools.pairwise(rows):
        assert after[3] == before[4]
    events = list(store.read(until=3))
    plain = [
        {
            "position": e.position,
            "recorded_at": e.recorded_at.isoformat(),
            "scheduler": e.scheduler,
            "instance": e.instance,
            "attempt": e.attempt,
            "kind": e.kind,
            "uid": e.uid,
            "namespace": e.namespace,
            "name": e.name,
            "node": e.node,
            "plugin": e.plugin,
            "data": e.data,
        }
        for e in events
    ]
    body = json.dumps(plain, sort_keys=True, separators=(",", ":"))
    assert rows[0][4] == hashlib.sha256(body.encode()).hexdigest()


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE events SET node = 'elsewhere' WHERE position = 1",
        "DELETE FROM events WHERE position = 1",
        "UPDATE event_batches SET hash = 'x' WHERE batch = 1",
        "DELETE FROM event_batches",
    ],
)
def test_update_and_delete_are_refused(store: EventStore, raw: sa.Engine, statement: str) -> None:
    fill(store)
    with pytest.raises(sa.exc.DBAPIError, match="append-only") as caught, raw.begin() as conn:
        conn.execute(sa.text(statement))
    assert APPEND_ONLY in str(caught.value)
    assert store.verify_chain().ok
    assert store.last_position() == 12


@pytest.mark.parametrize("backend", ["postgresql"])  # SQLite has no TRUNCATE
def test_truncate_is_refused_on_postgresql(store: EventStore, raw: sa.Engine) -> None:
    fill(store)
    with pytest.raises(sa.exc.DBAPIError, match="TRUNCATE is refused"), raw.begin() as conn:
        conn.execute(sa.text("TRUNCATE events"))


@pytest.mark.parametrize(
    ("statement", "broken", "words"),
    [
        (
            'UPDATE events SET data = \'{"batch": 1, "i": 9}\' WHERE position = 5',
            2,
            "does not match its hash",
        ),
        ("UPDATE events SET recorded_at = recorded_at WHERE position = 7", None, ""),
        ("UPDATE events SET instance = 'forged' WHERE position = 12", 4, "does not match its hash"),
        ("DELETE FROM events WHERE position = 8", 3, "event 8 of batch 3 is missing"),
        ("UPDATE event_batches SET prev_hash = 'x' WHERE batch = 3", 3, "prev_hash"),
        ("DELETE FROM event_batches WHERE batch = 2", 2, "batch 2 is missing"),
    ],
    ids=["data", "noop", "column", "deleted-event", "prev-hash", "deleted-batch"],
)
def test_tampering_is_found_at_the_first_broken_batch(
    store: EventStore, raw: sa.Engine, statement: str, broken: int | None, words: str
) -> None:
    fill(store)
    drop_triggers(raw)
    with raw.begin() as conn:
        conn.execute(sa.text(statement))
    report = store.verify_chain()
    if broken is None:
        assert report.ok, report.detail
        return
    assert not report.ok
    assert report.first_broken_batch == broken
    assert words in report.detail
    assert report.batches == broken - 1


def test_events_outside_any_batch_are_reported(store: EventStore, raw: sa.Engine) -> None:
    fill(store)
    store.append([EventRecord(kind="queued")])
    with raw.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO events (position, recorded_at, kind, data) "
                "VALUES (14, :at, 'queued', '{}')"
            ),
            {"at": datetime.now(UTC)},
        )
    report = store.verify_chain()
    assert not report.ok
    assert report.first_broken_batch == 6
    assert "not covered by any batch" in report.detail
