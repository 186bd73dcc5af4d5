"""Code run in child processes by the concurrency tests (spawned children import it by name)."""

from __future__ import annotations

from eventsched.events import EventRecord, EventStore


def append_batches(url: str, writer: str, batches: int, size: int) -> list[list[int]]:
    """Append `batches` batches of `size` events; returns the positions of each batch."""
    with EventStore.connect(url) as store:
        return [
            store.append(
                [
                    EventRecord(kind="queued", instance=writer, data={"batch": b, "i": i})
                    for i in range(size)
                ]
            )
            for b in range(batches)
        ]
