"""Where a (possibly pruned) log starts: the view and projections of its base, or empty ones."""

from __future__ import annotations

from eventsched.events.projections import Projections
from eventsched.events.reader import EventReader
from eventsched.events.retention import LogBase, read_base
from eventsched.view import ClusterView

__all__ = ["base_state", "from_base", "loaded"]


def loaded(base: LogBase | None) -> tuple[ClusterView, Projections]:
    """The view and projections a base saved (`base_state`), loaded by `ClusterView.from_state`;
    empty ones where the log was never pruned (no base, or the zero base at position 0)."""
    if base is None or not base.position:
        return ClusterView(), Projections()
    return ClusterView.from_state(base.replay), Projections.from_state(base.projections)


def from_base(reader: EventReader) -> tuple[ClusterView, Projections]:
    """The state the log's first kept event applies to: its base's, or empty."""
    return loaded(read_base(reader))


def base_state(view: ClusterView, projections: Projections) -> dict[str, object]:
    """What a pruned log's base stores: the projections and the view's saved form."""
    return {"projections": projections.to_state(), "replay": view.to_state()}
