"""Concurrent writers: positions stay 1..N, gap-free, each batch contiguous, chain intact."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ThreadPoolExecutor

from event_workers import append_batches

from eventsched.events import EventStore


def check_log(store: EventStore, results: list[list[list[int]]], size: int) -> None:
    batches = [positions for writer in results for positions in writer]
    total = len(batches) * size
    assert sorted(p for positions in batches for p in positions) == list(range(1, total + 1))
    for positions in batches:
        assert positions == list(range(positions[0], positions[0] + size))
    stored = list(store.read())
    assert [e.position for e in stored] == list(range(1, total + 1))
    # Within each writer, its batches were committed in the order it appended them.
    for writer in results:
        firsts = [positions[0] for positions in writer]
        assert firsts == sorted(firsts)
    # Each batch's events are the events that writer appended for that batch.
    by_position = {e.position: e for e in stored}
    for writer in results:
        for b, positions in enumerate(writer):
            events = [by_position[p] for p in positions]
            assert len({e.instance for e in events}) == 1
            assert [e.data for e in events] == [{"batch": b, "i": i} for i in range(size)]
    report = store.verify_chain()
    assert report.ok, report.detail
    assert report.batches == len(batches)
    assert report.events == total


def test_threads_append_without_gaps_or_duplicates(store: EventStore, db_url: str) -> None:
    threads, batches, size = 8, 50, 4
    with ThreadPoolExecutor(threads) as pool:
        results = list(
            pool.map(lambda w: append_batches(db_url, f"t{w}", batches, size), range(threads))
        )
    check_log(store, results, size)


def test_processes_append_without_gaps_or_duplicates(store: EventStore, db_url: str) -> None:
    processes, batches, size = 3, 40, 5
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes) as pool:
        results = pool.starmap(
            append_batches, [(db_url, f"p{w}", batches, size) for w in range(processes)]
        )
    check_log(store, results, size)


def test_threads_sharing_one_store(store: EventStore) -> None:
    """The scheduler shares one store between its loop and its binders."""
    from eventsched.events import EventRecord

    def work(w: int) -> list[list[int]]:
        return [
            store.append(
                [
                    EventRecord(kind="queued", instance=f"s{w}", data={"batch": b, "i": i})
                    for i in range(3)
                ]
            )
            for b in range(25)
        ]

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(8)))
    check_log(store, results, 3)
