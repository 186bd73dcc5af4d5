"""`db prune`'s fold: what a pruned log must keep so that replay and restarts still work.

The base of a pruned log (events.retention) holds, as of the cut, the
scheduler's projections and replay's own view: nodes in table order, every
observed pod, the cache's placements (assumed ones included), recorded
plugin inputs and the profiles seen. It is folded by the same `Replayer`
that replays, so replaying from the base and replaying the whole log agree
on every later attempt (a test replays both).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from eventsched.audit.replay import Replayer
from eventsched.audit.view import seed, view_state
from eventsched.events import EventStore, PrunePlan, StoredEvent
from eventsched.events.retention import carry_out, plan
from eventsched.framework import Registry

__all__ = ["PruneResult", "prune"]


@dataclass(frozen=True, slots=True)
class PruneResult:
    plan: PrunePlan
    #: The `maintenance` event that records the prune (None for a dry run).
    recorded: StoredEvent | None


def prune(
    store: EventStore,
    registry: Registry,
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
    replayer = Replayer(registry)
    if cut.since.position:
        seed(replayer, cut.since)
    for _ in replayer.walk(store.read(after=cut.since.position, until=cut.position), progress):
        pass
    state = {"projections": replayer.projections.to_state(), "replay": view_state(replayer)}
    detail = {
        "firstPlacements": len(replayer.projections.first_placements),
        "openReservations": len(replayer.projections.open_reservations),
    }
    return PruneResult(cut, carry_out(store, cut, state, detail))
