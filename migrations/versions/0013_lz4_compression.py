"""PostgreSQL: large events and snapshots are compressed with LZ4, not pglz.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-29

A value over about 2 kB is compressed when it is stored (TOAST). pglz, the
default, is slow to compress: a restart at 5,000 nodes and 10,000 pods appends
a `listed` maintenance event of about 1 MB (every node and pod it installs,
in list order) and waits for it to be durable before it schedules; that
append took 30 ms with pglz and 10 ms with LZ4 on the development machine.
Snapshots (`snapshots.state`), written at a stop and read at a start, are
large values too.

`ALTER COLUMN ... SET COMPRESSION` changes the catalog only: values stored
before keep their compression and read as before. On a partitioned `events`
it is set on each existing day partition too (PostgreSQL does not pass it
down); partitions made later take it from `events`. Servers before
PostgreSQL 14, or built without LZ4, keep pglz: nothing is changed there.
SQLite compresses nothing; there this revision changes nothing.

Frozen on purpose, like 0001: no eventsched import.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import context, op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Table and column compressed: the events' data and the snapshots' state.
COLUMNS = (("events", "data"), ("snapshots", "state"))


def _set(method: str) -> str:
    """One block the server runs (with `alembic upgrade --sql` too): the column of each
    table and of each of its partitions, where the server has LZ4."""
    statements = "\n".join(
        f"""
  EXECUTE format('ALTER TABLE %s ALTER COLUMN {column} SET COMPRESSION {method}',
                 to_regclass('{table}'));
  FOR part IN SELECT inhrelid::regclass FROM pg_inherits
              WHERE inhparent = to_regclass('{table}') ORDER BY 1 LOOP
    EXECUTE format('ALTER TABLE %s ALTER COLUMN {column} SET COMPRESSION {method}', part);
  END LOOP;"""
        for table, column in COLUMNS
    )
    return f"""DO $$
DECLARE part regclass;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression'
                 AND 'lz4' = ANY(enumvals)) THEN
    RETURN;
  END IF;{statements}
END $$"""


def upgrade() -> None:
    if context.get_context().dialect.name == "postgresql":
        op.execute(_set("lz4"))


def downgrade() -> None:
    if context.get_context().dialect.name == "postgresql":
        op.execute(_set("default"))
