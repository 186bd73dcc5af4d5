"""Retention: what a pruned log starts from, and whether it can be trusted.

`eventsched db prune --before TIME` drops every batch recorded before TIME
(on PostgreSQL whole day partitions, so TIME is rounded down to midnight
UTC). What later events still depend on is kept as the log's *base*: the
projections (first placements, open reservations, backoff) and the view
replay needs (nodes, pods, placements, recorded inputs, profiles) as of
the cut, plus the hash of the last dropped batch, which the first kept
batch chains to.

The cut is itself recorded: a `maintenance` event `{"action": "pruned"}`
appended in the same transaction that drops the rows, naming the cut, the
anchor hash and the digest of the base. The base lives in `snapshots`
(not chained), so `verify_chain` checks it against that chained event: a
base edited afterwards is reported like an edited event.

This module reads the base back (`read_base`, `base_problem`) through an
`EventReader`; planning and carrying out a cut is prune.py's, and building
the base is the caller's (audit.retention folds the log with replay's own view).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from eventsched.events.canonical import digest
from eventsched.events.chain import GENESIS
from eventsched.events.errors import EventStoreError

if TYPE_CHECKING:
    from eventsched.events.reader import EventReader

#: The `snapshots.projection` of the base; exactly one row at a time.
BASE_NAME = "log-base/v1"
PRUNED = "pruned"

__all__ = ["BASE_NAME", "PRUNED", "LogBase", "PrunePlan", "base_problem", "read_base"]


@dataclass(frozen=True, slots=True)
class LogBase:
    """What the log starts from once its beginning was pruned."""

    #: The last dropped batch, its last position and its hash (the first kept batch's prev_hash).
    batch: int
    position: int
    hash: str
    #: The whole stored state: "anchor", "projections" (Projections.to_state), "replay".
    state: Mapping[str, Any]

    @property
    def projections(self) -> Mapping[str, Any]:
        return self.state.get("projections") or {}

    @property
    def replay(self) -> Mapping[str, Any]:
        return self.state.get("replay") or {}

    @property
    def digest(self) -> str:
        return digest(dict(self.state))

    @classmethod
    def genesis(cls) -> LogBase:
        return cls(0, 0, GENESIS, {})


@dataclass(frozen=True, slots=True)
class PrunePlan:
    """Which batches a prune drops: everything through `batch` (positions through `position`)."""

    before: datetime
    #: Where the cut really falls: `before`, or on PostgreSQL the midnight UTC at or before it.
    cut: datetime
    batch: int
    position: int
    hash: str
    #: The base the log had when planned (the new base is folded from it).
    since: LogBase
    partitions: list[str] = field(default_factory=list)

    @property
    def events(self) -> int:
        return self.position - self.since.position

    @property
    def batches(self) -> int:
        return self.batch - self.since.batch


def read_base(reader: EventReader) -> LogBase | None:
    """The log's base, None for a log never pruned."""
    found = reader.latest_snapshot(BASE_NAME)
    if found is None:
        return None
    position, state = found
    anchor = state.get("anchor")
    try:
        assert isinstance(anchor, Mapping)
        base = LogBase(int(anchor["batch"]), int(anchor["position"]), str(anchor["hash"]), state)
    except (AssertionError, KeyError, TypeError, ValueError) as exc:
        raise EventStoreError(
            f"the event log at {reader.url} was pruned through position {position}, but its "
            "base snapshot is unreadable; the events before it are gone, so restore the "
            "snapshots table from a backup"
        ) from exc
    return base


def base_problem(reader: EventReader, base: LogBase) -> str | None:
    """Why `base` cannot be trusted, or None: it must match the newest chained `pruned` event."""
    pruned = [
        e
        for e in reader.read(after=base.position, kinds=["maintenance"])
        if e.data.get("action") == PRUNED
    ]
    if not pruned:
        return f"the log starts after position {base.position}, but no prune is recorded"
    event = pruned[-1]
    if event.data.get("throughBatch") != base.batch or event.data.get("anchorHash") != base.hash:
        return (
            f"the log starts after batch {base.batch}, but the newest prune (position "
            f"{event.position}) cut through batch {event.data.get('throughBatch')}"
        )
    if event.data.get("baseDigest") != base.digest:
        return (
            f"the base snapshot the log starts from (position {base.position}) does not "
            f"match the digest its prune recorded at position {event.position}: it was changed"
        )
    return None
