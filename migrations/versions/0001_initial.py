"""The event log: events, the batch hash chain, snapshots, append-only triggers, views.

Revision ID: 0001
Revises:
Create Date: 2025-01-01

Frozen on purpose: this file never imports eventsched (the vocabulary or
the schema module may change later; what revision 0001 created must not).
A later change is a new revision.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import context, op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APPEND_ONLY = "events is append-only: UPDATE and DELETE are refused (use `eventsched db prune`)"
NO_TRUNCATE = "events is append-only: TRUNCATE is refused (use `eventsched db prune`)"

#: vocabulary.DECISION_KINDS as of this revision.
DECISION_KINDS = (
    "queued",
    "attempt_started",
    "prefiltered",
    "filtered",
    "post_filtered",
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
    "maintenance",
)

EVENT_COLUMNS = (
    "position, recorded_at, scheduler, instance, attempt, kind, uid, namespace, name, node, "
    "plugin, data"
)
POD_COLUMNS = "e.position, e.recorded_at, e.scheduler, e.attempt, e.namespace, e.name, e.uid"
PROTECTED = ("events", "event_batches")
VIEWS = ("plugin_scores", "filter_rejections", "placements", "decisions")


def _json() -> sa.types.TypeEngine[object]:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def _position() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _dialect() -> str:
    return context.get_context().dialect.name


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("position", _position(), primary_key=True, autoincrement=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("scheduler", sa.Text(), nullable=False, server_default=""),
        sa.Column("instance", sa.Text(), nullable=False, server_default=""),
        sa.Column("attempt", sa.Text(), nullable=True),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("uid", sa.Text(), nullable=True),
        sa.Column("namespace", sa.Text(), nullable=True),
        sa.Column("name", sa.Text(), nullable=True),
        sa.Column("node", sa.Text(), nullable=True),
        sa.Column("plugin", sa.Text(), nullable=True),
        sa.Column("data", _json(), nullable=False),
    )
    op.create_index("ix_events_namespace_name", "events", ["namespace", "name"])
    op.create_index("ix_events_uid", "events", ["uid"])
    op.create_index("ix_events_attempt", "events", ["attempt"])
    op.create_index("ix_events_kind", "events", ["kind"])
    op.create_index("ix_events_recorded_at", "events", ["recorded_at"])

    op.create_table(
        "event_batches",
        sa.Column("batch", _position(), primary_key=True, autoincrement=False),
        sa.Column("first_position", sa.BigInteger(), nullable=False),
        sa.Column("last_position", sa.BigInteger(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("prev_hash", sa.Text(), nullable=False),
        sa.Column("hash", sa.Text(), nullable=False),
    )

    op.create_table(
        "snapshots",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("projection", sa.Text(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("state", _json(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_snapshots_projection_position", "snapshots", ["projection", "position"])

    if _dialect() == "postgresql":
        _postgresql_triggers()
        _create_views(POSTGRESQL_VIEWS)
    else:
        _sqlite_triggers()
        _create_views(SQLITE_VIEWS)


def downgrade() -> None:
    for view in VIEWS:
        op.execute(f"DROP VIEW IF EXISTS {view}")
    if _dialect() == "postgresql":
        for table in PROTECTED:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}")
            op.execute(f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table}")
        op.execute("DROP FUNCTION IF EXISTS eventsched_refuse_change()")
        op.execute("DROP FUNCTION IF EXISTS eventsched_refuse_truncate()")
    else:
        for table in PROTECTED:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_no_update")
            op.execute(f"DROP TRIGGER IF EXISTS {table}_no_delete")
    op.drop_index("ix_snapshots_projection_position", table_name="snapshots")
    op.drop_table("snapshots")
    op.drop_table("event_batches")
    for index in ("recorded_at", "kind", "attempt", "uid", "namespace_name"):
        op.drop_index(f"ix_events_{index}", table_name="events")
    op.drop_table("events")


# -- append-only ----------------------------------------------------------------


def _postgresql_triggers() -> None:
    op.execute(
        f"""
        CREATE FUNCTION eventsched_refuse_change() RETURNS trigger
        LANGUAGE plpgsql AS $body$
        BEGIN
            RAISE EXCEPTION '{APPEND_ONLY}' USING ERRCODE = 'insufficient_privilege';
        END
        $body$
        """
    )
    op.execute(
        f"""
        CREATE FUNCTION eventsched_refuse_truncate() RETURNS trigger
        LANGUAGE plpgsql AS $body$
        BEGIN
            RAISE EXCEPTION '{NO_TRUNCATE}' USING ERRCODE = 'insufficient_privilege';
        END
        $body$
        """
    )
    for table in PROTECTED:
        op.execute(
            f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION eventsched_refuse_change()"
        )
        op.execute(
            f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION eventsched_refuse_truncate()"
        )


def _sqlite_triggers() -> None:
    for table in PROTECTED:
        for action in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER {table}_no_{action.lower()} BEFORE {action} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END"
            )


# -- views --------------------------------------------------------------------

_DECISIONS = (
    f"CREATE VIEW decisions AS SELECT {EVENT_COLUMNS} FROM events "
    f"WHERE kind IN ({', '.join(repr(k) for k in DECISION_KINDS)})"
)

# A pod identity's first `bound` event is its 'first' placement; later ones are 'repeat'.
_PLACEMENTS = """
CREATE VIEW placements AS
SELECT position, recorded_at AS bound_at, scheduler, attempt, namespace, name, uid, node,
       identity,
       FIRST_VALUE(node) OVER by_identity AS first_node,
       CASE WHEN ROW_NUMBER() OVER by_identity = 1 THEN 'first' ELSE 'repeat' END AS placement
FROM (
    SELECT position, recorded_at, scheduler, attempt, namespace, name, uid, node,
           COALESCE({identity}, namespace || '/' || name) AS identity
    FROM events
    WHERE kind = 'bound'
) AS bound
WINDOW by_identity AS (PARTITION BY identity ORDER BY position)
"""

POSTGRESQL_VIEWS = (
    _DECISIONS,
    _PLACEMENTS.format(identity="data ->> 'identity'"),
    # LEFT JOIN on reasons: a rejection without reasons still shows, with reason NULL.
    f"""
    CREATE VIEW filter_rejections AS
    SELECT {POD_COLUMNS},
           n.value AS node, r.value ->> 'plugin' AS plugin,
           r.value ->> 'code' AS code, reason.value AS reason
    FROM events AS e
    CROSS JOIN LATERAL jsonb_array_elements(
        CASE WHEN jsonb_typeof(e.data -> 'rejections') = 'array'
             THEN e.data -> 'rejections' ELSE '[]'::jsonb END) AS r(value)
    CROSS JOIN LATERAL jsonb_array_elements_text(
        CASE WHEN jsonb_typeof(r.value -> 'nodes') = 'array'
             THEN r.value -> 'nodes' ELSE '[]'::jsonb END) AS n(value)
    LEFT JOIN LATERAL jsonb_array_elements_text(
        CASE WHEN jsonb_typeof(r.value -> 'reasons') = 'array'
             THEN r.value -> 'reasons' ELSE '[]'::jsonb END) AS reason(value) ON TRUE
    WHERE e.kind = 'filtered'
    """,
    f"""
    CREATE VIEW plugin_scores AS
    SELECT {POD_COLUMNS},
           s.value ->> 'node' AS node, s.value ->> 'plugin' AS plugin,
           CAST(TRUNC(CAST(s.value ->> 'raw' AS NUMERIC)) AS BIGINT) AS raw,
           CAST(TRUNC(CAST(s.value ->> 'normalized' AS NUMERIC)) AS BIGINT) AS normalized,
           CAST(TRUNC(CAST(s.value ->> 'weighted' AS NUMERIC)) AS BIGINT) AS weighted
    FROM events AS e
    CROSS JOIN LATERAL jsonb_array_elements(
        CASE WHEN jsonb_typeof(e.data -> 'scores') = 'array'
             THEN e.data -> 'scores' ELSE '[]'::jsonb END) AS s(value)
    WHERE e.kind = 'scored'
    """,
)

SQLITE_VIEWS = (
    _DECISIONS,
    _PLACEMENTS.format(identity="json_extract(data, '$.identity')"),
    f"""
    CREATE VIEW filter_rejections AS
    SELECT {POD_COLUMNS},
           n.value AS node, json_extract(r.value, '$.plugin') AS plugin,
           json_extract(r.value, '$.code') AS code, reason.value AS reason
    FROM events AS e
    JOIN json_each(e.data, '$.rejections') AS r
    JOIN json_each(r.value, '$.nodes') AS n
    LEFT JOIN json_each(r.value, '$.reasons') AS reason
    WHERE e.kind = 'filtered' AND r.type = 'object'
    """,
    f"""
    CREATE VIEW plugin_scores AS
    SELECT {POD_COLUMNS},
           json_extract(s.value, '$.node') AS node, json_extract(s.value, '$.plugin') AS plugin,
           CAST(json_extract(s.value, '$.raw') AS INTEGER) AS raw,
           CAST(json_extract(s.value, '$.normalized') AS INTEGER) AS normalized,
           CAST(json_extract(s.value, '$.weighted') AS INTEGER) AS weighted
    FROM events AS e
    JOIN json_each(e.data, '$.scores') AS s
    WHERE e.kind = 'scored' AND s.type = 'object'
    """,
)


def _create_views(statements: Sequence[str]) -> None:
    for statement in statements:
        op.execute(statement)
