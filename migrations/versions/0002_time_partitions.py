"""PostgreSQL: `events` becomes a table partitioned by day of `recorded_at`.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23

Retention then drops whole days (`eventsched db prune`) instead of
deleting rows one by one, and a day that is no longer read costs nothing.
A partitioned table's primary key must hold the partition column, so the
key becomes (position, recorded_at); positions stay unique because every
append assigns them under the append lock. Existing events are copied
into the new table in this one transaction (minutes for tens of millions
of rows: run `eventsched db upgrade` while the scheduler is stopped).

SQLite has no partitions: there this revision changes nothing, and prune
deletes rows instead.

Frozen on purpose, like 0001: the store creates later days' partitions
with the same names and bounds (eventsched/events/partitions.py), and a
test checks that the two agree.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import context, op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

VIEWS = ("decisions", "placements", "filter_rejections", "plugin_scores")
INDEXES = {
    "ix_events_namespace_name": "namespace, name",
    "ix_events_uid": "uid",
    "ix_events_attempt": "attempt",
    "ix_events_kind": "kind",
    "ix_events_recorded_at": "recorded_at",
}
COLUMNS = """
    position BIGINT NOT NULL,
    recorded_at TIMESTAMP WITH TIME ZONE NOT NULL,
    scheduler TEXT NOT NULL DEFAULT '',
    instance TEXT NOT NULL DEFAULT '',
    attempt TEXT,
    kind TEXT NOT NULL,
    uid TEXT,
    namespace TEXT,
    name TEXT,
    node TEXT,
    plugin TEXT,
    data JSONB NOT NULL
"""
#: Days created ahead of today, so appends never wait for a partition to be made.
DAYS_AHEAD = 7

# One server-side block (so `alembic upgrade --sql` emits the same thing it runs):
# keep the views' definitions and the grants on events and the views, move the old
# table aside, create the new one, copy, drop the old, restore views and grants.
_SWAP = """
DO $swap$
DECLARE
    view_names text[] := ARRAY[{views}];
    kept_names text[] := '{{}}';
    kept_defs text[] := '{{}}';
    grants text[];
    name text;
    first_day date;
    last_day date;
    day date;
BEGIN
    SELECT coalesce(array_agg(format('GRANT %s ON %I TO %s', a.privilege_type, c.relname,
               CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END)), '{{}}')
      INTO grants
      FROM pg_class AS c
      CROSS JOIN LATERAL aclexplode(c.relacl) AS a
      LEFT JOIN pg_roles AS r ON r.oid = a.grantee
     WHERE c.oid IN (SELECT to_regclass(n) FROM unnest(view_names || 'events'::text) AS n)
       AND a.grantee <> c.relowner;
    FOREACH name IN ARRAY view_names LOOP
        IF to_regclass(name) IS NOT NULL THEN
            kept_names := kept_names || name;
            kept_defs := kept_defs || pg_get_viewdef(to_regclass(name), true);
            EXECUTE format('DROP VIEW %I', name);
        END IF;
    END LOOP;
    ALTER TABLE events RENAME TO {old};
    ALTER TABLE {old} RENAME CONSTRAINT events_pkey TO {old}_pkey;
    {drop_indexes}
    CREATE TABLE events ({columns}, {key});
    {create_indexes}
    CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
        FOR EACH ROW EXECUTE FUNCTION eventsched_refuse_change();
    CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
        FOR EACH STATEMENT EXECUTE FUNCTION eventsched_refuse_truncate();
    IF {partitioned} THEN
        SELECT coalesce((min(recorded_at) AT TIME ZONE 'UTC')::date,
                        (now() AT TIME ZONE 'UTC')::date),
               greatest(coalesce((max(recorded_at) AT TIME ZONE 'UTC')::date,
                                 (now() AT TIME ZONE 'UTC')::date),
                        (now() AT TIME ZONE 'UTC')::date)
          INTO first_day, last_day FROM {old};
        day := first_day;
        WHILE day <= last_day + {ahead} LOOP
            EXECUTE format('CREATE TABLE %I PARTITION OF events FOR VALUES FROM (%L) TO (%L)',
                           'events_' || to_char(day, 'YYYYMMDD'),
                           day::text || 'T00:00:00+00:00', (day + 1)::text || 'T00:00:00+00:00');
            day := day + 1;
        END LOOP;
    END IF;
    INSERT INTO events SELECT * FROM {old} ORDER BY position;
    DROP TABLE {old};
    FOR i IN 1 .. coalesce(array_length(kept_names, 1), 0) LOOP
        EXECUTE format('CREATE VIEW %I AS %s', kept_names[i], kept_defs[i]);
    END LOOP;
    FOREACH name IN ARRAY grants LOOP
        EXECUTE name;
    END LOOP;
END
$swap$
"""


def _swap(old: str, key: str, partitioned: bool) -> str:
    return _SWAP.format(
        views=", ".join(f"'{v}'" for v in VIEWS),
        old=old,
        drop_indexes="\n    ".join(f"DROP INDEX {index};" for index in INDEXES),
        columns=COLUMNS,
        key=key,
        create_indexes="\n    ".join(
            f"CREATE INDEX {index} ON events ({columns});" for index, columns in INDEXES.items()
        ),
        partitioned="true" if partitioned else "false",
        ahead=DAYS_AHEAD,
    )


def _postgresql() -> bool:
    return context.get_context().dialect.name == "postgresql"


def upgrade() -> None:
    if _postgresql():
        key = "PRIMARY KEY (position, recorded_at)) PARTITION BY RANGE (recorded_at"
        op.execute(_swap("events_unpartitioned", key, partitioned=True))


def downgrade() -> None:
    if _postgresql():
        op.execute(_swap("events_partitioned", "PRIMARY KEY (position)", partitioned=False))
