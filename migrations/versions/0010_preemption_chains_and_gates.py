"""`preemption_victims` says why and by whom; view `scheduling_gates`.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-28

`preemption_victims` (migration 0005) gains three columns after its others:
`preemptor_priority` (the priority of the preemptor's last `pod_observed`
before the decision: a victim is one because its `priority` is lower),
`chosen_by` (the criterion that chose the node, from the `preempted` event)
and `plugin` (the preemption plugin that decided). On PostgreSQL the view is
replaced in place (new columns go last, so its grants stay); a downgrade
drops and re-creates it there, so run deploy/base/readonly-role.sql again
after one.

The view `scheduling_gates` has one row per gate a pod was observed held by:
the pod (`namespace`, `name`, `uid`), the `gate`, the first observation that
named it (`held_position`, `held_since`) and the observation after the last
one that named it, which no longer does (`lifted_position`, `lifted_at`;
NULL while the gate holds the pod, or if the pod was deleted held). The
gates are `pod_observed`'s `schedulingGates`, so the view reads every pod
observation that has them.

Frozen on purpose, like 0001: no eventsched import.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import context, op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# -- PostgreSQL ---------------------------------------------------------------

_PG_VICTIMS = (
    "CASE WHEN jsonb_typeof(e.data -> 'victims') = 'array' "
    "THEN e.data -> 'victims' ELSE '[]'::jsonb END"
)

#: preemption_victims of migration 0005, then (with `extra`) the columns added here.
_PG_PREEMPTION_VICTIMS = """
CREATE OR REPLACE VIEW preemption_victims AS
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
       x.position AS evicted_position, x.recorded_at AS evicted_at{extra}
FROM events AS e
CROSS JOIN LATERAL jsonb_array_elements({victims}) AS v(value)
LEFT JOIN LATERAL (
    SELECT y.position, y.recorded_at, y.data FROM events AS y
    WHERE y.kind = 'evicted' AND y.attempt = e.attempt AND y.uid = v.value ->> 'uid'
    ORDER BY y.position DESC LIMIT 1
) AS x ON TRUE
WHERE e.kind = 'preempted'
"""

_PG_EXTRA = """,
       (SELECT CAST(TRUNC(CAST(o.data ->> 'priority' AS NUMERIC)) AS BIGINT)
        FROM events AS o
        WHERE o.kind = 'pod_observed' AND o.uid = e.uid AND o.position < e.position
        ORDER BY o.position DESC LIMIT 1) AS preemptor_priority,
       e.data ->> 'chosenBy' AS chosen_by,
       e.plugin"""

_PG_SCHEDULING_GATES = """
CREATE VIEW scheduling_gates AS
WITH held AS (
    SELECT e.uid, e.namespace, e.name, g.gate,
           MIN(e.position) AS held_position, MIN(e.recorded_at) AS held_since,
           MAX(e.position) AS last_held
    FROM events AS e
    CROSS JOIN LATERAL jsonb_array_elements_text(e.data -> 'schedulingGates') AS g(gate)
    WHERE e.kind = 'pod_observed' AND jsonb_typeof(e.data -> 'schedulingGates') = 'array'
    GROUP BY e.uid, e.namespace, e.name, g.gate
)
SELECT h.namespace, h.name, h.uid, h.gate, h.held_position, h.held_since,
       x.position AS lifted_position, x.recorded_at AS lifted_at
FROM held AS h
LEFT JOIN LATERAL (
    SELECT n.position, n.recorded_at FROM events AS n
    WHERE n.kind = 'pod_observed' AND n.uid = h.uid AND n.position > h.last_held
    ORDER BY n.position LIMIT 1
) AS x ON TRUE
"""

# -- SQLite -------------------------------------------------------------------

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
       x.position AS evicted_position, x.recorded_at AS evicted_at{extra}
FROM events AS e
JOIN json_each(e.data, '$.victims') AS v
LEFT JOIN events AS x ON x.position = (
    SELECT MAX(y.position) FROM events AS y
    WHERE y.kind = 'evicted' AND y.attempt = e.attempt
      AND y.uid = json_extract(v.value, '$.uid'))
WHERE e.kind = 'preempted' AND v.type = 'object'
"""

_SQLITE_EXTRA = """,
       (SELECT CAST(json_extract(o.data, '$.priority') AS INTEGER)
        FROM events AS o
        WHERE o.kind = 'pod_observed' AND o.uid = e.uid AND o.position < e.position
        ORDER BY o.position DESC LIMIT 1) AS preemptor_priority,
       json_extract(e.data, '$.chosenBy') AS chosen_by,
       e.plugin"""

#: held_since is read from the first event's row, not as MIN(recorded_at): an aggregate
#: loses the column's declared type, and the time would read as bare text.
_SQLITE_SCHEDULING_GATES = """
CREATE VIEW scheduling_gates AS
WITH held AS (
    SELECT e.uid, e.namespace, e.name, g.value AS gate,
           MIN(e.position) AS held_position, MAX(e.position) AS last_held
    FROM events AS e
    JOIN json_each(e.data, '$.schedulingGates') AS g
    WHERE e.kind = 'pod_observed' AND json_type(e.data, '$.schedulingGates') = 'array'
    GROUP BY e.uid, e.namespace, e.name, g.value
)
SELECT h.namespace, h.name, h.uid, h.gate, h.held_position, f.recorded_at AS held_since,
       x.position AS lifted_position, x.recorded_at AS lifted_at
FROM held AS h
JOIN events AS f ON f.position = h.held_position
LEFT JOIN events AS x ON x.position = (
    SELECT MIN(n.position) FROM events AS n
    WHERE n.kind = 'pod_observed' AND n.uid = h.uid AND n.position > h.last_held)
"""


def _postgresql() -> bool:
    return context.get_context().dialect.name == "postgresql"


def _set_preemption_victims(extra: str) -> None:
    if _postgresql():
        if not extra:  # columns cannot be dropped in place
            op.execute("DROP VIEW IF EXISTS preemption_victims")
        op.execute(_PG_PREEMPTION_VICTIMS.format(extra=extra, victims=_PG_VICTIMS))
    else:
        op.execute("DROP VIEW IF EXISTS preemption_victims")
        op.execute(_SQLITE_PREEMPTION_VICTIMS.format(extra=extra))


def upgrade() -> None:
    _set_preemption_victims(_PG_EXTRA if _postgresql() else _SQLITE_EXTRA)
    op.execute(_PG_SCHEDULING_GATES if _postgresql() else _SQLITE_SCHEDULING_GATES)


def downgrade() -> None:
    op.execute("DROP VIEW IF EXISTS scheduling_gates")
    _set_preemption_victims("")
