"""Shadow mode: `decisions` holds `shadow_verdict`; view `shadow_verdicts`; kind indexed.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26

`eventsched shadow` ends each of its attempts with a `shadow_verdict`: what
the shadowed scheduler did with the pod (placed, unschedulable, nominated),
the node eventsched picks and whether the two agree. The `decisions` view
is redefined with the new decision kind, and the view `shadow_verdicts`
has one row per verdict, its data spelled out as columns: the shadowed
`scheduler` (data.scheduler), `observed`, `verdict`, that scheduler's
`node`, eventsched's `picked`, the two messages, the `cause`, the weighted
totals of both nodes and `lag_seconds`.

On PostgreSQL the partial index on kind (migration 0006) also covers
`shadow_verdict`: the view reads the verdicts across the whole log, one
event in eight of a shadow's log and none of a scheduler's.

Frozen on purpose, like 0001: no eventsched import; eventsched/events/schema.py
lists the same kinds, and a test checks that the two agree.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import context, op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: vocabulary.DECISION_KINDS as of this revision.
DECISION_KINDS = (
    "queued",
    "attempt_started",
    "prefiltered",
    "filtered",
    "post_filtered",
    "preempted",
    "evicted",
    "scored",
    "selected",
    "reserved",
    "unreserved",
    "permitted",
    "prebound",
    "bound",
    "bind_failed",
    "unschedulable",
    "requeued",
    "shadow_verdict",
    "maintenance",
)
#: DECISION_KINDS of revision 0005, which a downgrade restores.
PREVIOUS_DECISION_KINDS = tuple(k for k in DECISION_KINDS if k != "shadow_verdict")

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
    "shadow_verdict",
    "unreserved",
    "unschedulable",
)
#: RARE_KINDS of revision 0006, which a downgrade restores.
PREVIOUS_RARE_KINDS = tuple(k for k in RARE_KINDS if k != "shadow_verdict")

EVENT_COLUMNS = (
    "position, recorded_at, scheduler, instance, attempt, kind, uid, namespace, name, node, "
    "plugin, data"
)


def _decisions(kinds: Sequence[str]) -> str:
    return f"SELECT {EVENT_COLUMNS} FROM events WHERE kind IN ({_kinds(kinds)})"


def _kinds(kinds: Sequence[str]) -> str:
    return ", ".join(f"'{kind}'" for kind in kinds)


# -- PostgreSQL ---------------------------------------------------------------

_PG_SHADOW_VERDICTS = """
CREATE VIEW shadow_verdicts AS
SELECT e.position, e.recorded_at, e.namespace, e.name, e.uid,
       e.data ->> 'scheduler' AS scheduler,
       e.data ->> 'observed' AS observed,
       e.data ->> 'verdict' AS verdict,
       COALESCE(e.node, e.data ->> 'node') AS node,
       e.data ->> 'picked' AS picked,
       e.data ->> 'message' AS message,
       e.data ->> 'ourMessage' AS our_message,
       e.data ->> 'cause' AS cause,
       CAST(TRUNC(CAST(e.data -> 'totals' ->> 'ours' AS NUMERIC)) AS BIGINT) AS our_total,
       CAST(TRUNC(CAST(e.data -> 'totals' ->> 'theirs' AS NUMERIC)) AS BIGINT) AS their_total,
       CAST(e.data ->> 'lagSeconds' AS DOUBLE PRECISION) AS lag_seconds,
       e.attempt
FROM events AS e
WHERE e.kind = 'shadow_verdict'
"""

# -- SQLite -------------------------------------------------------------------

_SQLITE_SHADOW_VERDICTS = """
CREATE VIEW shadow_verdicts AS
SELECT e.position, e.recorded_at, e.namespace, e.name, e.uid,
       json_extract(e.data, '$.scheduler') AS scheduler,
       json_extract(e.data, '$.observed') AS observed,
       json_extract(e.data, '$.verdict') AS verdict,
       COALESCE(e.node, json_extract(e.data, '$.node')) AS node,
       json_extract(e.data, '$.picked') AS picked,
       json_extract(e.data, '$.message') AS message,
       json_extract(e.data, '$.ourMessage') AS our_message,
       json_extract(e.data, '$.cause') AS cause,
       CAST(json_extract(e.data, '$.totals.ours') AS INTEGER) AS our_total,
       CAST(json_extract(e.data, '$.totals.theirs') AS INTEGER) AS their_total,
       CAST(json_extract(e.data, '$.lagSeconds') AS REAL) AS lag_seconds,
       e.attempt
FROM events AS e
WHERE e.kind = 'shadow_verdict'
"""


def _postgresql() -> bool:
    return context.get_context().dialect.name == "postgresql"


def _set_decisions(kinds: Sequence[str]) -> None:
    if _postgresql():
        # Same columns: CREATE OR REPLACE keeps the view's grants.
        op.execute(f"CREATE OR REPLACE VIEW decisions AS {_decisions(kinds)}")
    else:
        op.execute("DROP VIEW IF EXISTS decisions")
        op.execute(f"CREATE VIEW decisions AS {_decisions(kinds)}")


def _set_rare_kinds(kinds: Sequence[str]) -> None:
    """PostgreSQL's partial index on kind, over `kinds` (SQLite indexes the whole column)."""
    if not _postgresql():
        return
    # On the partitioned table: every day partition's index is replaced with it.
    op.execute("DROP INDEX ix_events_kind")
    op.execute(f"CREATE INDEX ix_events_kind ON events (kind) WHERE kind IN ({_kinds(kinds)})")


def upgrade() -> None:
    _set_decisions(DECISION_KINDS)
    _set_rare_kinds(RARE_KINDS)
    op.execute(_PG_SHADOW_VERDICTS if _postgresql() else _SQLITE_SHADOW_VERDICTS)


def downgrade() -> None:
    op.execute("DROP VIEW IF EXISTS shadow_verdicts")
    _set_rare_kinds(PREVIOUS_RARE_KINDS)
    _set_decisions(PREVIOUS_DECISION_KINDS)
