"""The running scheduler's hash-chain watch: each check verifies what was appended since
the previous one, from the head it found first, and a tampered batch is reported."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from eventsched.events import ChainPoint, EventRecord, EventStore
from eventsched.events.chainwatch import ChainCheck, ChainWatch
from eventsched.metrics import SchedulerMetrics
from tests.events.test_event_chain import drop_triggers


@pytest.fixture
def raw(db_url: str) -> Iterator[sa.Engine]:
    engine = sa.create_engine(db_url)
    yield engine
    engine.dispose()


def append_batches(store: EventStore, count: int, tag: str) -> None:
    for b in range(count):
        store.append([EventRecord(kind="queued", uid=f"{tag}{b}", data={"i": i}) for i in range(3)])


def test_each_check_verifies_what_came_since_the_previous(store: EventStore) -> None:
    append_batches(store, 2, "before")  # before the watch: replay's to audit, not the watch's
    watch = ChainWatch(store, interval=3600)
    first = watch.check()
    assert first == ChainCheck("ok", store.chain_head())
    assert first.reached.batch == 2 and first.reached.position == 6

    append_batches(store, 3, "after")
    second = watch.check()
    assert second.result == "ok"
    assert second.report is not None and second.report.batches == 3
    assert second.reached == store.chain_head() == ChainPoint(5, 15, second.reached.hash)

    third = watch.check()  # nothing new: nothing to verify, the same point
    assert third.result == "ok" and third.reached == second.reached


def test_a_batch_edited_after_it_was_appended_is_reported(
    store: EventStore, raw: sa.Engine
) -> None:
    metrics = SchedulerMetrics()
    checks: list[ChainCheck] = []

    def told(check: ChainCheck) -> None:
        checks.append(check)
        metrics.chain_checked(check.result, check.reached.position)

    watch = ChainWatch(store, interval=3600, on_check=told)
    watch.check()
    append_batches(store, 3, "b")
    drop_triggers(raw)
    with raw.begin() as conn:
        conn.execute(sa.text("UPDATE events SET node = 'elsewhere' WHERE position = 5"))
    broken = watch.check()
    assert broken.result == "broken"
    assert broken.report is not None and broken.report.first_broken_batch == 2
    assert broken.reached == ChainPoint()  # it stays where the chain last verified
    assert watch.check().result == "broken"  # and says so at every check
    sample = metrics.registry.get_sample_value
    assert sample("eventsched_log_chain_broken") == 1
    assert sample("eventsched_log_chain_checks_total", {"result": "broken"}) == 2
    assert [c.result for c in checks] == ["ok", "broken", "broken"]


def test_the_watch_runs_on_its_own_thread_until_stopped(store: EventStore) -> None:
    seen: list[ChainCheck] = []
    ready = threading.Event()

    def told(check: ChainCheck) -> None:
        seen.append(check)
        if len(seen) >= 2:
            ready.set()

    watch = ChainWatch(store, interval=0.01, on_check=told)
    watch.start()
    append_batches(store, 1, "t")
    assert ready.wait(10), "the watch did not check twice"
    watch.stop()
    assert all(c.result == "ok" for c in seen)


def test_a_check_verifies_whole_batches_up_to_its_budget(store: EventStore) -> None:
    """Three events a batch, a budget of five: one batch a check (a batch that alone is
    over the budget is still verified whole), so the watch catches up over checks."""
    watch = ChainWatch(store, interval=3600, max_events=5)
    watch.check()
    append_batches(store, 3, "b")
    reached = [watch.check().reached.batch for _ in range(4)]
    assert reached == [1, 2, 3, 3]
    tight = ChainWatch(store, interval=3600, max_events=1)
    tight.point = ChainPoint()
    assert tight.check().reached.batch == 1
