"""Errors of the event log.

Every failure of the log surfaces as an `EventStoreError`: the scheduler
must stop deciding when it cannot record, so nothing here is swallowed or
retried behind the caller's back. Messages name the database (password
hidden) and the command or setting that fixes the problem, because they
end up in front of an operator, not a developer.
"""

from __future__ import annotations

from typing import Any


class EventStoreError(Exception):
    """The event log could not do what was asked; nothing was written."""


class DatabaseUnavailableError(EventStoreError):
    """The database did not answer: wrong URL, server down, network, credentials."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(
            f"cannot reach the event log at {url}: {reason}; check the URL "
            "(--db or EVENTSCHED_DATABASE_URL) and that the database is running"
        )


class AppendInDoubtError(DatabaseUnavailableError):
    """The connection died during COMMIT: the batch may or may not be in the log.

    Appending the same records again could record them twice, so the caller
    asks `EventStore.batch_committed(batch, hash)` first, once the database
    answers. `stored` are the events as they are in the log if it was.
    """

    def __init__(self, url: str, reason: str, batch: int, batch_hash: str) -> None:
        super().__init__(url, reason)
        self.batch = batch
        self.batch_hash = batch_hash
        self.stored: list[Any] = []


class LogTailLostError(EventStoreError):
    """The log no longer holds the last batch this process appended: the database failed
    over to a replica that had not received it (asynchronous replication). Nothing of the
    batch being appended was written. `appended` and `head` are (batch, last position,
    hash) of what this process appended last and of the log's head now."""

    def __init__(self, url: str, appended: Any, head: Any) -> None:
        self.url = url
        self.appended = appended
        self.head = head
        super().__init__(
            f"the event log at {url} lost its tail: it ends at batch {head.batch} "
            f"(position {head.position}) but this process appended batch {appended.batch} "
            f"(position {appended.position}); the database failed over to a replica that "
            "had not received it"
        )


class SchemaOutdatedError(EventStoreError):
    """The database's schema is not the one this eventsched was built for."""

    def __init__(self, message: str, current: str | None, needed: str) -> None:
        self.current = current
        self.needed = needed
        super().__init__(message)
