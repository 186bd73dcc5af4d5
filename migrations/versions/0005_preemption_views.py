"""Preemption: `decisions` holds `preempted` and `evicted`; views `preemptions`, `preemption_victims`.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24

DefaultPreemption writes `preempted` (the preemptor's attempt chose a node
and victims) and `evicted` (one victim, after the API answered). The
`decisions` view is redefined with the two new decision kinds. Two views
read them: `preemptions`, one row per `preempted` event (the victims
counted and named "ns/a, ns/b" in the order recorded, which reads the same
in psql and sqlite3), and `preemption_victims`, one row per victim with the
outcome of its `evicted` event of the same attempt (the latest, if several;
NULL while none was written).

Frozen on purpose, like 0001: no eventsched import.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import context, op

revision: str = "0005"
down_revision: str | None = "0004"
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
    "maintenance",
)
#: DECISION_KINDS of revision 0001, which a downgrade restores.
PREVIOUS_DECISION_KINDS = tuple(k for k in DECISION_KINDS if k not in ("preempted", "evicted"))

EVENT_COLUMNS = (
    "position, recorded_at, scheduler, instance, attempt, kind, uid, namespace, name, node, "
    "plugin, data"
)
NEW_VIEWS = ("preemption_victims", "preemptions")


def _decisions(kinds: Sequence[str]) -> str:
    return f"SELECT {EVENT_COLUMNS} FROM events WHERE kind IN ({', '.join(repr(k) for k in kinds)})"


# -- PostgreSQL ---------------------------------------------------------------

_PG_VICTIMS = (
    "CASE WHEN jsonb_typeof(e.data -> 'victims') = 'array' "
    "THEN e.data -> 'victims' ELSE '[]'::jsonb END"
)

_PG_PREEMPTIONS = f"""
CREATE VIEW preemptions AS
SELECT e.position, e.recorded_at, e.scheduler, e.attempt, e.namespace, e.name, e.uid, e.node,
       jsonb_array_length({_PG_VICTIMS}) AS victims,
       (SELECT string_agg((v.value ->> 'namespace') || '/' || (v.value ->> 'name'), ', '
                          ORDER BY v.idx)
        FROM jsonb_array_elements({_PG_VICTIMS}) WITH ORDINALITY AS v(value, idx)
       ) AS victim_names,
       e.data ->> 'chosenBy' AS chosen_by,
       CASE WHEN jsonb_typeof(e.data -> 'candidates') = 'array'
            THEN jsonb_array_length(e.data -> 'candidates') END AS candidates
FROM events AS e
WHERE e.kind = 'preempted'
"""

_PG_PREEMPTION_VICTIMS = f"""
CREATE VIEW preemption_victims AS
SELECT e.position, e.recorded_at, e.scheduler, e.attempt,
       e.namespace AS preemptor_namespace, e.name AS preemptor_name, e.uid AS preemptor_uid,
       e.node,
       v.value ->> 'namespace' AS victim_namespace, v.value ->> 'name' AS victim_name,
       v.value ->> 'uid' AS victim_uid,
       CAST(TRUNC(CAST(v.value ->> 'priority' AS NUMERIC)) AS BIGINT) AS priority,
       CAST(v.value ->> 'pdbViolation' AS BOOLEAN) AS pdb_violation,
       x.data ->> 'outcome' AS outcome,
       CAST(TRUNC(CAST(x.data ->> 'code' AS NUMERIC)) AS BIGINT) AS code,
       x.data ->> 'reason' AS reason,
       x.position AS evicted_position, x.recorded_at AS evicted_at
FROM events AS e
CROSS JOIN LATERAL jsonb_array_elements({_PG_VICTIMS}) AS v(value)
LEFT JOIN LATERAL (
    SELECT y.position, y.recorded_at, y.data FROM events AS y
    WHERE y.kind = 'evicted' AND y.attempt = e.attempt AND y.uid = v.value ->> 'uid'
    ORDER BY y.position DESC LIMIT 1
) AS x ON TRUE
WHERE e.kind = 'preempted'
"""

# -- SQLite -------------------------------------------------------------------

_SQLITE_PREEMPTIONS = """
CREATE VIEW preemptions AS
SELECT e.position, e.recorded_at, e.scheduler, e.attempt, e.namespace, e.name, e.uid, e.node,
       COALESCE(json_array_length(e.data, '$.victims'), 0) AS victims,
       (SELECT group_concat(victim, ', ') FROM (
            SELECT json_extract(v.value, '$.namespace') || '/' || json_extract(v.value, '$.name')
                   AS victim
            FROM json_each(e.data, '$.victims') AS v
            WHERE v.type = 'object'
            ORDER BY v.key)
       ) AS victim_names,
       json_extract(e.data, '$.chosenBy') AS chosen_by,
       CASE WHEN json_type(e.data, '$.candidates') = 'array'
            THEN json_array_length(e.data, '$.candidates') END AS candidates
FROM events AS e
WHERE e.kind = 'preempted'
"""

_SQLITE_PREEMPTION_VICTIMS = """
CREATE VIEW preemption_victims AS
SELECT e.position, e.recorded_at, e.scheduler, e.attempt,
       e.namespace AS preemptor_namespace, e.name AS preemptor_name, e.uid AS preemptor_uid,
       e.node,
       json_extract(v.value, '$.namespace') AS victim_namespace,
       json_extract(v.value, '$.name') AS victim_name,
       json_extract(v.value, '$.uid') AS victim_uid,
       CAST(json_extract(v.value, '$.priority') AS INTEGER) AS priority,
       json_extract(v.value, '$.pdbViolation') AS pdb_violation,
       json_extract(x.data, '$.outcome') AS outcome,
       CAST(json_extract(x.data, '$.code') AS INTEGER) AS code,
       json_extract(x.data, '$.reason') AS reason,
       x.position AS evicted_position, x.recorded_at AS evicted_at
FROM events AS e
JOIN json_each(e.data, '$.victims') AS v
LEFT JOIN events AS x ON x.position = (
    SELECT MAX(y.position) FROM events AS y
    WHERE y.kind = 'evicted' AND y.attempt = e.attempt
      AND y.uid = json_extract(v.value, '$.uid'))
WHERE e.kind = 'preempted' AND v.type = 'object'
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


def upgrade() -> None:
    _set_decisions(DECISION_KINDS)
    if _postgresql():
        op.execute(_PG_PREEMPTIONS)
        op.execute(_PG_PREEMPTION_VICTIMS)
    else:
        op.execute(_SQLITE_PREEMPTIONS)
        op.execute(_SQLITE_PREEMPTION_VICTIMS)


def downgrade() -> None:
    for view in NEW_VIEWS:
        op.execute(f"DROP VIEW IF EXISTS {view}")
    _set_decisions(PREVIOUS_DECISION_KINDS)
