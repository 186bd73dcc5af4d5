"""`db prune`'s fold: what a pruned log must keep so that replay and restarts still work.

The base of a pruned log (events.retention) holds, as of the cut, the
scheduler's projections and the saved form of `ClusterView`: nodes in table
order, every observed pod, the placements (assumed ones included), recorded
plugin inputs and the profiles seen. The dropped events are applied by the
same `ClusterView.apply` that the scheduler and replay use, so replaying
from the base and replaying the whole log agree on every later attempt (a
test replays both).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from eventsched.audit.base import base_state, loaded
from eventsched.events import EventStore, PrunePlan, StoredEvent
from eventsched.events.retention import carry_out, plan

__all__ = ["PruneResult", "prune"]


@dataclass(frozen=True, slots=True)
class PruneResult:
    plan: PrunePlan
    #: The `maintenance` event that records the prune (None for a dry run).
    recorded: StoredEvent | None


def prune(
    store: EventStore,
    before: datetime,
    *,
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
) -> PruneResult | None:
    """Drop the log before `before`, keeping a base folded from the dropped events.

    None when nothing lies before `before` (or, on PostgreSQL, before the
    midnight UTC at or before it: whole days are dropped).
    """
    cut = plan(store, before)
    if cut is None:
        return None
    if dry_run:
        return PruneResult(cut, None)
    view, projections = loaded(cut.since)
    for event in store.read(after=cut.since.position, until=cut.position):
        view.apply(event)
        projections.apply(event)
        if progress is not None:
            progress(event.position)
    detail = {
        "firstPlacements": len(projections.first_placements),
        "openReservations": len(projections.open_reservations),
    }
    state = base_state(view, projections)
    return PruneResult(cut, carry_out(store, cut, state, detail))
