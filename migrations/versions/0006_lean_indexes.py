"""Leaner indexes on `events`: BRIN on `recorded_at`, `kind` indexed for the rare kinds only.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25

Every appended event paid for five B-tree entries besides the primary key,
about a fifth of the log's bytes. Two of them did not earn their keep:

- `recorded_at` only ever grows along positions (the store never lets time
  go back), so on PostgreSQL a BRIN index (a few pages per partition) finds
  a time range as well as the B-tree did.
- `kind` has some twenty values, and the B-tree on it was read for the rare
  ones only (`config_loaded` and `maintenance` at every start, `preempted`,
  `node_observed` and the other kinds of a few events per thousand for their
  views and the web page): a
  partial index on (kind, position) over those kinds keeps that fast; the
  kinds every pod writes (`queued`, `filtered`, `scored`, `bound`, ...) are
  found through the pod's own columns, time or position instead.

A third index, on (node, position), finds what happened on one node (the
web page's node page and search: the pods bound to it, failed bindings and
preemptions there, its last observation) without reading the log backwards;
on PostgreSQL it holds only `bound`, `bind_failed`, `preempted`,
`node_observed` and `node_removed` rows, about one per placed pod.

SQLite keeps its B-trees on kind and recorded_at and gets the node index
whole: it has no BRIN, and its planner cannot tell that `kind = 'bound'`
falls under a partial index's `kind IN (...)`.

Frozen on purpose, like 0001: no eventsched import; eventsched/events/schema.py
lists the same kinds, and a test checks that the two agree.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import context, op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: The kinds the partial index on kind covers (schema.RARE_KINDS at this revision).
RARE_KINDS = (
    "bind_failed",
    "config_loaded",
    "evicted",
    "maintenance",
    "node_observed",
    "node_removed",
    "object_removed",
    "post_filtered",
    "preempted",
    "unreserved",
    "unschedulable",
)
#: The kinds the index on (node, position) covers on PostgreSQL.
NODE_KINDS = ("bind_failed", "bound", "node_observed", "node_removed", "preempted")
_RARE = ", ".join(f"'{kind}'" for kind in RARE_KINDS)
_NODE = ", ".join(f"'{kind}'" for kind in NODE_KINDS)


def _postgresql() -> bool:
    return context.get_context().dialect.name == "postgresql"


def upgrade() -> None:
    if not _postgresql():
        op.execute("CREATE INDEX ix_events_node ON events (node, position)")
        return
    # On the partitioned table: every day partition's index is replaced with it.
    op.execute("DROP INDEX ix_events_kind")
    op.execute(f"CREATE INDEX ix_events_kind ON events (kind) WHERE kind IN ({_RARE})")
    op.execute("DROP INDEX ix_events_recorded_at")
    op.execute("CREATE INDEX ix_events_recorded_at ON events USING brin (recorded_at)")
    op.execute(f"CREATE INDEX ix_events_node ON events (node, position) WHERE kind IN ({_NODE})")


def downgrade() -> None:
    op.execute("DROP INDEX ix_events_node")
    if not _postgresql():
        return
    op.execute("DROP INDEX ix_events_kind")
    op.execute("CREATE INDEX ix_events_kind ON events (kind)")
    op.execute("DROP INDEX ix_events_recorded_at")
    op.execute("CREATE INDEX ix_events_recorded_at ON events (recorded_at)")
