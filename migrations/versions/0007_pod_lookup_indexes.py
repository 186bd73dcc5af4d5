"""Partial indexes on (namespace, name) and on attempt: the rows that name a pod or an attempt.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25

Every decision row of an attempt (`prefiltered`, `filtered`, `scored`,
`selected`, `reserved`, `permitted`, `bound`, ...) carries the pod's
namespace, name, uid and the attempt, and every one of them had an entry in
three B-trees besides the primary key: about 300 bytes of index a pod at
5,000 nodes. A pod's events are all found by its uid, so on PostgreSQL:

- (namespace, name) is indexed only where a row names a pod first:
  `pod_observed` (every pod has one) and `attempt_started` (which a prune
  leaves for every pod tried since). A read by name finds the uids there,
  then the events by uid.
- attempt is indexed only on `attempt_started` (whose uid finds the rest of
  the attempt) and `evicted` (the victims of the attempt's preemption, whose
  uids are theirs, not the preemptor's).

SQLite keeps both indexes whole: its planner cannot tell that `kind =
'pod_observed'` falls under a partial index's `kind IN (...)`.

Frozen on purpose, like 0001: no eventsched import; eventsched/events/schema.py
lists the same kinds, and a test checks that the two agree.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import context, op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: The kinds the index on (namespace, name) covers (schema.POD_NAMING_KINDS).
POD_NAMING_KINDS = ("attempt_started", "pod_observed")
#: The kinds the index on attempt covers (schema.ATTEMPT_KINDS).
ATTEMPT_KINDS = ("attempt_started", "evicted")


def _postgresql() -> bool:
    return context.get_context().dialect.name == "postgresql"


def _kinds(kinds: Sequence[str]) -> str:
    return ", ".join(f"'{kind}'" for kind in kinds)


def upgrade() -> None:
    if not _postgresql():
        return
    # On the partitioned table: every day partition's index is replaced with it.
    op.execute("DROP INDEX ix_events_namespace_name")
    op.execute(
        "CREATE INDEX ix_events_namespace_name ON events (namespace, name) "
        f"WHERE kind IN ({_kinds(POD_NAMING_KINDS)})"
    )
    op.execute("DROP INDEX ix_events_attempt")
    op.execute(
        f"CREATE INDEX ix_events_attempt ON events (attempt) WHERE kind IN ({_kinds(ATTEMPT_KINDS)})"
    )


def downgrade() -> None:
    if not _postgresql():
        return
    op.execute("DROP INDEX ix_events_namespace_name")
    op.execute("CREATE INDEX ix_events_namespace_name ON events (namespace, name)")
    op.execute("DROP INDEX ix_events_attempt")
    op.execute("CREATE INDEX ix_events_attempt ON events (attempt)")
