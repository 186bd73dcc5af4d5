"""A node's page: the pods placed on it over time and the rejections it got, by plugin."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.engine import Engine

from eventsched.ui import reads


@dataclass(slots=True)
class NodePage:
    name: str
    last_seen: reads.Row | None
    placed: list[reads.Row]
    rejections: list[tuple[str, str, int, datetime]]
    since: datetime

    def rows(self) -> list[reads.Row]:
        """The events the page lists."""
        return self.placed + ([self.last_seen] if self.last_seen is not None else [])


def load(engine: Engine, name: str, since: datetime) -> NodePage | None:
    """None when the log never mentions the node."""
    seen = reads.node_observed(engine, name)
    placed = reads.node_placements(engine, name)
    rejections = reads.node_rejections(engine, name, since)
    if seen is None and not placed and not rejections:
        return None
    return NodePage(name, seen, placed, rejections, since)
