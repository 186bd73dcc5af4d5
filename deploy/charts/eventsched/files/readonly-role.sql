-- eventsched_reader: a PostgreSQL role for `eventsched query`, `eventsched ui` and
-- for people who run SQL over the event log. It may connect, and read the events
-- table, the views (decisions, placements, filter_rejections, plugin_scores,
-- preemptions, preemption_victims, scheduling_gates, shadow_verdicts),
-- event_batches (the hash chain, which the web page verifies) and snapshots (a
-- pruned log's base, which explain --full and the what-if replay start from);
-- nothing else of eventsched's (no alembic_version, no writes).
--
-- `eventsched query` already runs every statement in a READ ONLY transaction;
-- this role is the second wall, for what a read-only transaction still allows
-- and for anyone who connects with psql or a BI tool instead.
--
-- Run it once, after `eventsched db upgrade`, as the owner of the eventsched
-- tables, in the event log's database, with search_path at the eventsched schema
-- (public unless you changed it):
--
--   psql "postgresql://OWNER@HOST:5432/eventsched" -f deploy/base/readonly-role.sql
--
-- then give the role a password and use it:
--
--   psql ... -c '\password eventsched_reader'
--   eventsched query --db postgresql://eventsched_reader:PASSWORD@HOST:5432/eventsched "SELECT ..."
--
-- Running it again is harmless. It is not a Kubernetes manifest: kustomize does
-- not apply it. PUBLIC's defaults still apply to this role as to every role
-- (TEMP on the database, EXECUTE on functions); revoke them from PUBLIC if your
-- policy requires.

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'eventsched_reader') THEN
        CREATE ROLE eventsched_reader
            LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS;
    END IF;
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO eventsched_reader', current_database());
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO eventsched_reader', current_schema());
END
$$;

-- Every session of the role starts read-only, whatever client it uses.
ALTER ROLE eventsched_reader SET default_transaction_read_only = on;

GRANT SELECT ON events, decisions, placements, filter_rejections, plugin_scores, preemptions,
    preemption_victims, scheduling_gates, shadow_verdicts, pod_queue, resource_rejections,
    event_batches, snapshots
    TO eventsched_reader;
