"""A slice of the log: a part of it taken elsewhere (`eventsched export`), and where it came from.

A slice is itself an event log (an SQLite file at the schema's head) holding
whole batches of another log, its *source*: the batches first..last, their
events, and a base as a pruned log has one (retention.py): the view and
projections folded up to just before the first batch, with the hash of the
batch before it, which the first batch's `prev_hash` pins. So replay,
explain, query and the web page read it as they read any log.

What a pruned log proves with a chained `pruned` event, a slice cannot: the
events before its first batch are not in it. Its `SliceOrigin` (a row of
`snapshots`, as the base is) records instead where it came from and what it
must hold: the source (its URL, password hidden), the selection, when it was
exported, the batches and hashes at both ends, the digest of its base and the
source's head at the time. `slice_problem` checks a slice against it; the
hashes at both ends are what a person compares with the source.

Exporting (reading the source, writing the file) is export.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from eventsched.events.chain import ChainPoint, ChainReport
from eventsched.events.errors import EventStoreError
from eventsched.events.retention import LogBase

if TYPE_CHECKING:
    from eventsched.events.reader import EventReader

#: The `snapshots.projection` of a slice's origin; one row, in slices only.
SLICE_NAME = "log-slice/v1"

__all__ = ["SLICE_NAME", "SliceOrigin", "SliceRange", "read_origin", "slice_problem"]


@dataclass(frozen=True, slots=True)
class SliceRange:
    """The whole batches a slice holds: first..last, positions first..last, and the hashes
    at both ends (the first batch's `prev_hash`, "" when it is the log's first batch; the
    last batch's hash)."""

    first_batch: int
    last_batch: int
    first_position: int
    last_position: int
    anchor_hash: str
    last_hash: str

    @property
    def anchor(self) -> ChainPoint:
        """What the slice starts after: the batch before its first, as the chain names it."""
        return ChainPoint(self.first_batch - 1, self.first_position - 1, self.anchor_hash)

    @property
    def batches(self) -> int:
        return self.last_batch - self.first_batch + 1

    @property
    def events(self) -> int:
        return self.last_position - self.first_position + 1


@dataclass(frozen=True, slots=True)
class SliceOrigin:
    """Where a slice came from, and the chain it must hold."""

    #: The source's URL, password hidden (an SQLite path made absolute).
    source: str
    #: The host the export ran on (an SQLite path means a file there).
    host: str
    #: What was asked for, in words: "pod shop/db-0", "batches recorded from ... to ...".
    selection: str
    #: When it was exported, ISO 8601 in UTC.
    exported_at: str
    #: The batches it holds.
    held: SliceRange
    #: The digest of the base the slice starts from (LogBase.digest).
    base_digest: str
    #: The source's newest batch when exported: its number, last position and hash.
    source_head: ChainPoint
    #: The eventsched that exported it.
    version: str

    def describe(self) -> str:
        """One line: what the slice holds and where from."""
        held = self.held
        return (
            f"slice of {self.source} (on {self.host}): {self.selection}; batches "
            f"{held.first_batch}..{held.last_batch}, positions {held.first_position}.."
            f"{held.last_position}; exported {self.exported_at} by eventsched {self.version}"
        )

    def to_state(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> SliceOrigin:
        held = SliceRange(**state["held"])
        for name in ("first_batch", "last_batch", "first_position", "last_position"):
            if not isinstance(getattr(held, name), int):
                raise TypeError(f"held.{name} is not a number")
        fields = {**state, "held": held, "source_head": ChainPoint(**state["source_head"])}
        return cls(**fields)


def read_origin(reader: EventReader) -> SliceOrigin | None:
    """The origin of the slice `reader` reads; None for a log that is not a slice."""
    found = reader.latest_snapshot(SLICE_NAME)
    if found is None:
        return None
    try:
        return SliceOrigin.from_state(found[1])
    except (KeyError, TypeError, ValueError) as exc:
        raise EventStoreError(
            f"the event log at {reader.url} is a slice of another log, but the record of "
            f"where it came from is unreadable ({exc}); export it again from its source"
        ) from exc


def slice_problem(origin: SliceOrigin, base: LogBase | None, report: ChainReport) -> str | None:
    """Why a slice whose chain verified as `report` (from `base`) is not what its origin
    says it holds, or None."""
    held = origin.held
    if base is None:
        return "the slice has no base to start from (its snapshots row was removed)"
    if base.batch != held.anchor.batch or base.hash != held.anchor_hash:
        return (
            f"the slice's base is batch {base.batch}, but it was exported to start after "
            f"batch {held.anchor.batch} (hash {held.anchor_hash or 'none'})"
        )
    if base.digest != origin.base_digest:
        return (
            f"the view the slice starts from (its base, position {base.position}) does not "
            "match the digest recorded when it was exported: it was changed"
        )
    reached = base.batch + report.batches
    if reached != held.last_batch or report.last_hash != held.last_hash:
        return (
            f"the slice ends at batch {reached}, but it was exported through batch "
            f"{held.last_batch} (hash {held.last_hash}): batches were added or cut"
        )
    return None
