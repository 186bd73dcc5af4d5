"""The queue and the numbers in SQL: views `pod_queue` and `resource_rejections`.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-28

`pod_queue` has one row per pod that is in a scheduling queue at the log's
head: the pod's last queue event (`queued`, `requeued`, or the `unschedulable`
that sent it back) when no `attempt_started`, `bound`, `pod_removed` or shadow
verdict came after it, nor a scheduler's start (which queues anew what it finds
pending); its `queue` (active, backoff, unschedulable, gated),
`since`, the `reason` it went there (the cluster event, or "failed scheduling
cycle"), its `priority` (its last observation's) and its `place` in that queue
by priority, then time (PrioritySort's order; 1 is the next to pop).

`resource_rejections` has one row per node and resource a NodeResourcesFit
rejection names ("Insufficient cpu", "Too many pods"): the pod's `request` of
that resource as last observed before the attempt and the node's `allocatable`
as last observed before it (cpu in millicores, memory in bytes, pods 1 and the
node's pod capacity). What the node had `requested` then needs the log folded
to the attempt (assumed pods, relists); `eventsched explain --json` gives it.

Frozen on purpose, like 0001: no eventsched import.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import context, op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_QUEUE_KINDS = "'queued', 'requeued', 'unschedulable'"
_LEAVING_KINDS = "'attempt_started', 'bound', 'pod_removed', 'shadow_verdict'"

# -- PostgreSQL ---------------------------------------------------------------

_PG_POD_QUEUE = f"""
CREATE VIEW pod_queue AS
SELECT q.*,
       RANK() OVER (PARTITION BY q.queue ORDER BY q.priority DESC, q.since, q.position) AS place
FROM (
    SELECT e.position, e.recorded_at AS since, e.namespace, e.name, e.uid,
           CASE e.kind WHEN 'requeued' THEN e.data ->> 'to' ELSE e.data ->> 'queue' END AS queue,
           CASE e.kind WHEN 'unschedulable' THEN 'failed scheduling cycle'
                ELSE e.data ->> 'event' END AS reason,
           COALESCE((SELECT CAST(o.data ->> 'priority' AS BIGINT) FROM events AS o
                     WHERE o.uid = e.uid AND o.kind = 'pod_observed' AND o.position < e.position
                     ORDER BY o.position DESC LIMIT 1), 0) AS priority
    FROM events AS e
    WHERE e.kind IN ({_QUEUE_KINDS})
      AND e.data ->> CASE e.kind WHEN 'requeued' THEN 'to' ELSE 'queue' END IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM events AS l
                      WHERE l.uid = e.uid AND l.position > e.position
                        AND l.kind IN ({_QUEUE_KINDS}, {_LEAVING_KINDS}))
      AND NOT EXISTS (SELECT 1 FROM events AS m
                      WHERE m.kind = 'maintenance' AND m.position > e.position
                        AND m.data ->> 'action' = 'scheduler_started')
) AS q
"""

_PG_RESOURCE_REJECTIONS = """
CREATE VIEW resource_rejections AS
SELECT r.position, r.recorded_at, r.scheduler, r.attempt, r.namespace, r.name, r.uid, r.node,
       r.reason,
       CASE WHEN r.reason = 'Too many pods' THEN 'pods'
            ELSE substr(r.reason, length('Insufficient ') + 1) END AS resource,
       CASE WHEN r.reason = 'Too many pods' THEN 1
            ELSE (SELECT CAST(o.data -> 'requests' ->> substr(r.reason, length('Insufficient ') + 1)
                              AS BIGINT)
                  FROM events AS o
                  WHERE o.uid = r.uid AND o.kind = 'pod_observed' AND o.position < r.position
                  ORDER BY o.position DESC LIMIT 1) END AS request,
       (SELECT CAST(n.data -> 'allocatable' ->> (CASE WHEN r.reason = 'Too many pods' THEN 'pods'
                    ELSE substr(r.reason, length('Insufficient ') + 1) END) AS BIGINT)
        FROM events AS n
        WHERE n.node = r.node AND n.kind = 'node_observed' AND n.position < r.position
        ORDER BY n.position DESC LIMIT 1) AS allocatable
FROM filter_rejections AS r
WHERE r.plugin = 'NodeResourcesFit'
  AND (r.reason = 'Too many pods' OR r.reason LIKE 'Insufficient %')
"""

# -- SQLite -------------------------------------------------------------------

_SQLITE_POD_QUEUE = f"""
CREATE VIEW pod_queue AS
SELECT q.*,
       RANK() OVER (PARTITION BY q.queue ORDER BY q.priority DESC, q.since, q.position) AS place
FROM (
    SELECT e.position, e.recorded_at AS since, e.namespace, e.name, e.uid,
           CASE e.kind WHEN 'requeued' THEN json_extract(e.data, '$.to')
                ELSE json_extract(e.data, '$.queue') END AS queue,
           CASE e.kind WHEN 'unschedulable' THEN 'failed scheduling cycle'
                ELSE json_extract(e.data, '$.event') END AS reason,
           COALESCE((SELECT CAST(json_extract(o.data, '$.priority') AS INTEGER) FROM events AS o
                     WHERE o.uid = e.uid AND o.kind = 'pod_observed' AND o.position < e.position
                     ORDER BY o.position DESC LIMIT 1), 0) AS priority
    FROM events AS e
    WHERE e.kind IN ({_QUEUE_KINDS})
      AND (CASE e.kind WHEN 'requeued' THEN json_extract(e.data, '$.to')
                ELSE json_extract(e.data, '$.queue') END) IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM events AS l
                      WHERE l.uid = e.uid AND l.position > e.position
                        AND l.kind IN ({_QUEUE_KINDS}, {_LEAVING_KINDS}))
      AND NOT EXISTS (SELECT 1 FROM events AS m
                      WHERE m.kind = 'maintenance' AND m.position > e.position
                        AND json_extract(m.data, '$.action') = 'scheduler_started')
) AS q
"""

_SQLITE_RESOURCE_REJECTIONS = """
CREATE VIEW resource_rejections AS
SELECT r.position, r.recorded_at, r.scheduler, r.attempt, r.namespace, r.name, r.uid, r.node,
       r.reason,
       CASE WHEN r.reason = 'Too many pods' THEN 'pods'
            ELSE substr(r.reason, length('Insufficient ') + 1) END AS resource,
       CASE WHEN r.reason = 'Too many pods' THEN 1
            ELSE (SELECT CAST(json_extract(o.data, '$.requests."' ||
                              substr(r.reason, length('Insufficient ') + 1) || '"') AS INTEGER)
                  FROM events AS o
                  WHERE o.uid = r.uid AND o.kind = 'pod_observed' AND o.position < r.position
                  ORDER BY o.position DESC LIMIT 1) END AS request,
       (SELECT CAST(json_extract(n.data, '$.allocatable."' ||
                    (CASE WHEN r.reason = 'Too many pods' THEN 'pods'
                     ELSE substr(r.reason, length('Insufficient ') + 1) END) || '"') AS INTEGER)
        FROM events AS n
        WHERE n.node = r.node AND n.kind = 'node_observed' AND n.position < r.position
        ORDER BY n.position DESC LIMIT 1) AS allocatable
FROM filter_rejections AS r
WHERE r.plugin = 'NodeResourcesFit'
  AND (r.reason = 'Too many pods' OR r.reason LIKE 'Insufficient %')
"""


def _postgresql() -> bool:
    return context.get_context().dialect.name == "postgresql"


def upgrade() -> None:
    if _postgresql():
        op.execute(_PG_POD_QUEUE)
        op.execute(_PG_RESOURCE_REJECTIONS)
    else:
        op.execute(_SQLITE_POD_QUEUE)
        op.execute(_SQLITE_RESOURCE_REJECTIONS)


def downgrade() -> None:
    op.execute("DROP VIEW IF EXISTS resource_rejections")
    op.execute("DROP VIEW IF EXISTS pod_queue")
