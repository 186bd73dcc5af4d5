"""`db prune`'s fold: what a pruned log must keep so that replay and restarts still work.

The base of a pruned log (events.retention) holds, as of the cut, the
scheduler's projections and the saved form of `ClusterView`: nodes in table
order, every observed pod, the placements (assumed ones included), recorded
plugin inputs and the profiles seen. The dropped events are applied by the
same `ClusterView.apply` that the scheduler and replay use, so replaying
from the base and replaying the whole log agree on every later attempt (a
test replays both).

Folding only reads; planning and carrying out the cut (events.prune) is
`eventsched db prune`'s, with the store that appends. `eventsched export`
folds a slice's base the same way (`fold_until`, events.export).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from eventsched.audit.base import base_state, loaded
from eventsched.events.reader import EventReader
from eventsched.events.retention import LogBase, PrunePlan

__all__ = ["FoldedBase", "fold_base", "fold_until"]


@dataclass(frozen=True, slots=True)
class FoldedBase:
    """The base a prune keeps, and the counts its `maintenance` event records."""

    state: dict[str, object]
    detail: dict[str, int]


def fold_base(
    reader: EventReader, cut: PrunePlan, progress: Callable[[int], None] | None = None
) -> FoldedBase:
    """Fold the events `cut` drops onto the log's current base: the base after the cut."""
    return fold_until(reader, cut.since, cut.position, progress)


def fold_until(
    reader: EventReader,
    since: LogBase,
    through: int,
    progress: Callable[[int], None] | None = None,
) -> FoldedBase:
    """Fold the events after `since` through position `through` onto it: the base of a log
    that starts after `through` (a prune's cut, or a slice's first batch)."""
    view, projections = loaded(since)
    for event in reader.read(after=since.position, until=through):
        view.apply(event)
        projections.apply(event)
        if progress is not None:
            progress(event.position)
    detail = {
        "firstPlacements": len(projections.first_placements),
        "openReservations": len(projections.open_reservations),
    }
    return FoldedBase(base_state(view, projections), detail)
