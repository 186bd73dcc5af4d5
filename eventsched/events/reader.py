"""The read-only interface of the event log: what explain, replay, the web page and the
chain checks read, and all they may do with it.

`EventStore` (store.py) implements it structurally, and so does `LogReader`
(logreader.py), the log opened only to read. Whoever only reads takes an
`EventReader`, so nothing that only reads can append; appending is the store's
`Appender` (append.py), which the read paths never import (an import-linter
contract in pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from eventsched.events.chain import BatchRow, ChainPoint, ChainReport
from eventsched.events.record import StoredEvent


@dataclass(frozen=True, slots=True)
class ChosenVictim:
    """A preemption decision that chose the pod `uid` as a victim and whose eviction of it
    is not in the log (under way, never made, or an earlier victim's failed)."""

    attempt: str
    uid: str


class EventReader(Protocol):
    """The log, read: events by range, pod and attempt, the hash chain, snapshots."""

    @property
    def url(self) -> str:
        """The database URL with the password hidden, for messages."""
        ...

    def read(
        self,
        after: int = 0,
        until: int | None = None,
        kinds: Collection[str] | None = None,
        limit: int | None = None,
    ) -> Iterator[StoredEvent]:
        """Events with `after < position <= until`, in order, fetched a page at a time."""
        ...

    def read_pod(self, namespace: str, name: str) -> list[StoredEvent]:
        """Every event of the pod(s) named namespace/name, across re-creations (uids)."""
        ...

    def read_uid(self, uid: str) -> list[StoredEvent]:
        """Every event of the pod with this uid."""
        ...

    def read_attempt(self, attempt: str) -> list[StoredEvent]:
        """Every event of one attempt: its pod's events with that attempt id, and its evictions."""
        ...

    def read_uids(self, uids: Collection[str], kinds: Collection[str]) -> list[StoredEvent]:
        """The events of these kinds of the pods with these uids, in order."""
        ...

    def victims_not_evicted(self, uids: Collection[str]) -> list[ChosenVictim]:
        """The decisions that chose one of `uids` as a victim and logged no eviction of it."""
        ...

    def pods_labelled(self, namespace: str, key: str, value: str) -> list[str]:
        """The names of the pods of `namespace` ever observed with the label key=value, in
        the order first observed (a gang's members, by its pod-group label)."""
        ...

    def last_position(self) -> int:
        """The position of the newest event; 0 for an empty log."""
        ...

    def latest_snapshot(self, projection: str) -> tuple[int, dict[str, Any]] | None:
        """The newest snapshot of `projection` (position, state), if any."""
        ...

    def batches(self, numbers: Collection[int]) -> list[BatchRow]:
        """The stored batches with these numbers, in order (a number not stored has none)."""
        ...

    def batches_holding(self, positions: Collection[int]) -> list[BatchRow]:
        """The batches that hold these positions, in order (a position no batch holds, an
        event written around the append, has none): one index probe per batch."""
        ...

    def verify_chain(self) -> ChainReport:
        """Recompute every batch hash from the stored events."""
        ...

    def chain_head(self) -> ChainPoint:
        """The last batch appended, as a point to verify from (ChainPoint() when none)."""
        ...

    def verify_chain_since(
        self, start: ChainPoint, max_events: int | None = None
    ) -> tuple[ChainReport, ChainPoint]:
        """Verify the batches appended after the trusted `start`: the report and the point
        reached (`start` again when the chain is broken)."""
        ...
