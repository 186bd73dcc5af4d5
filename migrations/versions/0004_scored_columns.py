"""plugin_scores reads `scored` events kept as per-plugin columns as well as the older shape.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24

A `scored` event used to keep one object per (node, plugin) under
`scores` (about 2.3 KB of a scheduled pod's ~5.5 KB at 5,000 nodes). It now
keeps, in each `plugins` entry, the raw and normalized scores of the top
nodes as arrays aligned with `top`; weighted is normalized times the
plugin's weight. The view gives the same rows for either shape, so a log
that spans the upgrade reads as one.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import context, op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

POD_COLUMNS = "e.position, e.recorded_at, e.scheduler, e.attempt, e.namespace, e.name, e.uid"

_PG_CELLS = f"""
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
"""

_PG_COLUMNS = f"""
    SELECT {POD_COLUMNS},
           e.data -> 'top' -> CAST(n.idx - 1 AS INTEGER) ->> 'node' AS node,
           p.value ->> 'name' AS plugin,
           CAST(TRUNC(CAST(p.value -> 'raw' ->> CAST(n.idx - 1 AS INTEGER) AS NUMERIC))
                AS BIGINT) AS raw,
           CAST(TRUNC(CAST(n.value #>> '{{}}' AS NUMERIC)) AS BIGINT) AS normalized,
           CAST(TRUNC(CAST(n.value #>> '{{}}' AS NUMERIC)
                      * CAST(coalesce(p.value ->> 'weight', '1') AS NUMERIC)) AS BIGINT)
               AS weighted
    FROM events AS e
    CROSS JOIN LATERAL jsonb_array_elements(
        CASE WHEN jsonb_typeof(e.data -> 'plugins') = 'array'
             THEN e.data -> 'plugins' ELSE '[]'::jsonb END) AS p(value)
    CROSS JOIN LATERAL jsonb_array_elements(
        CASE WHEN jsonb_typeof(p.value -> 'normalized') = 'array'
             THEN p.value -> 'normalized' ELSE '[]'::jsonb END) WITH ORDINALITY AS n(value, idx)
    WHERE e.kind = 'scored'
"""

_SQLITE_CELLS = f"""
    SELECT {POD_COLUMNS},
           json_extract(s.value, '$.node') AS node, json_extract(s.value, '$.plugin') AS plugin,
           CAST(json_extract(s.value, '$.raw') AS INTEGER) AS raw,
           CAST(json_extract(s.value, '$.normalized') AS INTEGER) AS normalized,
           CAST(json_extract(s.value, '$.weighted') AS INTEGER) AS weighted
    FROM events AS e
    JOIN json_each(e.data, '$.scores') AS s
    WHERE e.kind = 'scored' AND s.type = 'object'
"""

_SQLITE_COLUMNS = f"""
    SELECT {POD_COLUMNS},
           json_extract(e.data, '$.top[' || n.key || '].node') AS node,
           json_extract(p.value, '$.name') AS plugin,
           CAST(json_extract(p.value, '$.raw[' || n.key || ']') AS INTEGER) AS raw,
           CAST(n.value AS INTEGER) AS normalized,
           CAST(n.value AS INTEGER) * CAST(coalesce(json_extract(p.value, '$.weight'), 1) AS INTEGER)
               AS weighted
    FROM events AS e
    JOIN json_each(e.data, '$.plugins') AS p
    JOIN json_each(p.value, '$.normalized') AS n
    WHERE e.kind = 'scored' AND p.type = 'object'
"""


def _postgresql() -> bool:
    return context.get_context().dialect.name == "postgresql"


def _set_view(*selects: str) -> None:
    body = "\n    UNION ALL\n".join(selects)
    if _postgresql():
        # Same columns: CREATE OR REPLACE keeps the view's grants.
        op.execute(f"CREATE OR REPLACE VIEW plugin_scores AS {body}")
    else:
        op.execute("DROP VIEW IF EXISTS plugin_scores")
        op.execute(f"CREATE VIEW plugin_scores AS {body}")


def upgrade() -> None:
    if _postgresql():
        _set_view(_PG_COLUMNS, _PG_CELLS)
    else:
        _set_view(_SQLITE_COLUMNS, _SQLITE_CELLS)


def downgrade() -> None:
    if _postgresql():
        _set_view(_PG_CELLS)
    else:
        _set_view(_SQLITE_CELLS)
