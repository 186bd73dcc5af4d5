"""The local check of the hash chain (audit/integrity.py): only the batches holding the
positions shown are read, and any edit, removal or insertion there is found."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from eventsched.audit.integrity import check_batches
from eventsched.audit.queryintegrity import verify_chain
from eventsched.events import EventStore
from eventsched.events.chain import batch_hash, stored_event_json
from tests.events.test_event_chain import drop_triggers, fill  # four batches of three


@pytest.fixture
def raw(db_url: str) -> Iterator[sa.Engine]:
    """A plain engine of someone who owns the tables and dropped the append-only triggers."""
    engine = sa.create_engine(db_url)
    drop_triggers(engine)
    yield engine
    engine.dispose()


def edit(raw: sa.Engine, statement: str, **params: object) -> None:
    with raw.begin() as conn:
        conn.execute(sa.text(statement), params)


def test_an_untouched_log_verifies_where_shown(store: EventStore) -> None:
    fill(store)
    found = check_batches(store, [1, 5, 6, 12])
    assert found.ok and found.breaks == []
    assert (found.batches, found.events, found.newest_position) == (3, 9, 12)
    assert [b.batch for b in store.batches_holding([1, 5, 6, 12, 99])] == [1, 2, 4]
    assert [b.batch for b in store.batches([0, 2, 4, 9])] == [2, 4]


def test_an_edited_event_breaks_its_batch_and_nothing_else_is_read(
    store: EventStore, raw: sa.Engine
) -> None:
    fill(store)
    edit(raw, "UPDATE events SET uid = 'forged' WHERE position = 8")
    found = check_batches(store, [7, 8])
    assert not found.ok
    [broken] = found.breaks
    assert (broken.batch, broken.first_position, broken.last_position) == (3, 7, 9)
    assert "does not match its hash" in broken.detail
    # Shown elsewhere, the local check cannot see it: that is the whole chain's to find.
    assert check_batches(store, [1, 12]).ok


def test_a_deleted_event_is_missing_from_its_batch(store: EventStore, raw: sa.Engine) -> None:
    fill(store)
    edit(raw, "DELETE FROM events WHERE position = 5")
    [broken] = check_batches(store, [4]).breaks
    assert broken.batch == 2 and "event 5 of batch 2 is missing" in broken.detail


def test_an_event_inserted_around_the_append_is_in_no_batch(
    store: EventStore, raw: sa.Engine
) -> None:
    fill(store)
    edit(
        raw,
        "INSERT INTO events (position, recorded_at, kind, data) VALUES (13, :at, 'queued', '{}')",
        at=datetime.now(UTC),
    )
    found = check_batches(store, [12, 13])
    [broken] = found.breaks
    assert (broken.batch, broken.first_position, broken.last_position) == (None, 13, 13)
    assert "written around the store's append" in broken.detail
    assert found.batches == 1  # batch 4 itself verifies


def test_a_batch_rewritten_with_its_hash_breaks_the_next_link(
    store: EventStore, raw: sa.Engine
) -> None:
    fill(store)
    edit(raw, "UPDATE events SET uid = 'forged' WHERE position = 8")
    [row] = store.batches([3])
    rehashed = batch_hash(row.prev_hash, (stored_event_json(e) for e in store.read(6, 9)))
    edit(raw, "UPDATE event_batches SET hash = :h WHERE batch = 3", h=rehashed)
    [broken] = check_batches(store, [8]).breaks
    assert broken.batch == 3
    assert "batch 4's prev_hash does not match batch 3's hash" in broken.detail


def test_a_rewritten_range_leaves_an_event_in_no_batch(store: EventStore, raw: sa.Engine) -> None:
    fill(store)
    edit(raw, "UPDATE event_batches SET last_position = 8 WHERE batch = 3")
    found = check_batches(store, [7, 9])
    assert [(b.batch, b.first_position) for b in found.breaks] == [(3, 7), (None, 9)]
    assert "does not match its hash" in found.breaks[0].detail


def test_the_budget_checks_the_newest_batches_first(store: EventStore, raw: sa.Engine) -> None:
    fill(store)
    edit(raw, "UPDATE events SET uid = 'forged' WHERE position IN (1, 10)")
    found = check_batches(store, [1, 4, 7, 10], max_events=7)
    assert (found.batches, found.events, found.unchecked, found.unchecked_events) == (2, 6, 2, 6)
    assert [b.batch for b in found.breaks] == [4]  # batch 1 was not read
    # A batch larger than the budget is left unchecked, and counted.
    found = check_batches(store, [10], max_events=2)
    assert (found.batches, found.unchecked, found.unchecked_events) == (0, 1, 3)
    assert found.ok


def test_a_count_verifies_the_newest_part_of_the_chain_and_says_so(
    store: EventStore, raw: sa.Engine
) -> None:
    """What `query` does with a result that names no position (queryintegrity.py)."""
    fill(store)
    whole = verify_chain(store, None)
    assert whole.integrity.ok and whole.note == "" and whole.integrity.verified_through == 12
    edit(raw, "UPDATE events SET uid = 'forged' WHERE position = 2")
    newest = verify_chain(store, 5)  # batches 3 and 4: whole batches holding the newest 5
    assert newest.integrity.ok and newest.integrity.events == 6
    assert newest.note == (
        "hash chain verified for the newest 6 events (positions 7..12); older ones not "
        "checked: --verify all checks them"
    )
    [broken] = verify_chain(store, None).integrity.breaks
    assert (broken.batch, broken.first_position, broken.found_by) == (1, 1, "chain")
    edit(raw, "UPDATE events SET uid = 'forged' WHERE position = 11")
    [broken] = verify_chain(store, 5).integrity.breaks
    assert (broken.batch, broken.first_position) == (4, 10)
