"""The SQL the web page runs, over the events table and the views, on either database.

Every query is bounded: by an indexed column (uid, namespace/name, node, a
rare kind, recorded_at, the position key; migration 0006 says which) and by a
LIMIT, so a page costs about the same on a log of a thousand events as on one
of tens of millions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Column, MetaData, Table, Text, func, select
from sqlalchemy.engine import Engine

from eventsched.events.schema import Position, UTCDateTime, events, kind_in, pod_uids

#: The view of one row per rejected node and reason (docs/querying.md).
filter_rejections = Table(
    "filter_rejections",
    MetaData(),
    Column("position", Position),
    Column("recorded_at", UTCDateTime()),
    Column("scheduler", Text),
    Column("attempt", Text),
    Column("namespace", Text),
    Column("name", Text),
    Column("uid", Text),
    Column("node", Text),
    Column("plugin", Text),
    Column("code", Text),
    Column("reason", Text),
)

#: The outcome of a scheduling attempt, or of its binding.
OUTCOME_KINDS = ("bound", "unschedulable", "bind_failed", "preempted")
#: The last of these for a pod says whether it is still pending.
SETTLING_KINDS = ("bound", "unschedulable", "pod_removed")


@dataclass(frozen=True, slots=True)
class Row:
    """One event as the pages list it."""

    position: int
    recorded_at: datetime
    kind: str
    namespace: str
    name: str
    uid: str
    node: str
    attempt: str
    data: dict[str, Any]


ROW_COLUMNS = (
    events.c.position,
    events.c.recorded_at,
    events.c.kind,
    events.c.namespace,
    events.c.name,
    events.c.uid,
    events.c.node,
    events.c.attempt,
    events.c.data,
)


def rows_of(engine: Engine, stmt: Any) -> list[Row]:
    with engine.connect() as conn:
        found = conn.execute(stmt).all()
    return [
        Row(
            int(r[0]),
            r[1],
            r[2],
            r[3] or "",
            r[4] or "",
            r[5] or "",
            r[6] or "",
            r[7] or "",
            dict(r[8] or {}),
        )
        for r in found
    ]


def _scalar(engine: Engine, stmt: Any) -> Any:
    with engine.connect() as conn:
        return conn.execute(stmt).scalar()


def last_position(engine: Engine) -> int:
    return int(_scalar(engine, select(func.coalesce(func.max(events.c.position), 0))) or 0)


#: How many of the newest `unschedulable` decisions "pending now" looks through: a pod
#: still pending is tried again at least every 5 minutes (the unschedulable pool's
#: flush) while a scheduler runs, so its latest failure is among the newest.
PENDING_WINDOW = 5000


def pending_pods(engine: Engine, limit: int = 100) -> list[Row]:
    """Pods whose last attempt found no node, not bound or deleted since (newest first),
    among the PENDING_WINDOW newest unschedulable decisions."""
    newest = (
        select(events.c.position)
        .where(kind_in(["unschedulable"]))
        .order_by(events.c.position.desc())
        .limit(PENDING_WINDOW)
        .subquery()
    )
    later = events.alias("later")
    last = (
        select(func.max(later.c.position))
        .where(later.c.uid == events.c.uid, later.c.kind.in_(SETTLING_KINDS))
        .scalar_subquery()
    )
    stmt = (
        select(*ROW_COLUMNS)
        .where(events.c.position.in_(select(newest.c.position)), events.c.position == last)
        .order_by(events.c.position.desc())
        .limit(limit)
    )
    return rows_of(engine, stmt)


def recent_outcomes(engine: Engine, limit: int = 20) -> list[Row]:
    stmt = (
        select(*ROW_COLUMNS)
        .where(events.c.kind.in_(OUTCOME_KINDS))
        .order_by(events.c.position.desc())
        .limit(limit)
    )
    return rows_of(engine, stmt)


#: The time buckets a series is drawn by: unit -> (PostgreSQL's to_char format, the
#: length of the same text at the start of SQLite's stored "YYYY-MM-DD HH:MM:SS.ffffff").
BUCKETS = {
    "second": ("YYYY-MM-DD HH24:MI:SS", 19),
    "minute": ("YYYY-MM-DD HH24:MI", 16),
    "hour": ("YYYY-MM-DD HH24:00", 13),
    "day": ("YYYY-MM-DD", 10),
}


def time_bucket(engine: Engine, unit: str) -> Any:
    """`recorded_at` as the text of its `unit` (a key of BUCKETS) in UTC, on either database:
    "2026-11-23 10:07:09", "2026-11-23 10:07", "2026-11-23 10:00", "2026-11-23"."""
    pattern, length = BUCKETS[unit]
    if engine.dialect.name == "postgresql":
        # In UTC before truncating: date_trunc of a timestamptz cuts days in the session's zone.
        utc = events.c.recorded_at.op("AT TIME ZONE")(sa.literal_column("'UTC'"))
        return func.to_char(func.date_trunc(unit, utc), pattern)
    text = func.substr(events.c.recorded_at, 1, length, type_=Text)
    return text + ":00" if unit == "hour" else text


def outcomes_per_minute(engine: Engine, since: datetime) -> list[tuple[str, int, int]]:
    """(minute, bound, unschedulable) for every minute since `since` that had any."""
    minute = time_bucket(engine, "minute")
    bound = func.sum(sa.case((events.c.kind == "bound", 1), else_=0))
    failed = func.sum(sa.case((events.c.kind == "unschedulable", 1), else_=0))
    stmt = (
        select(minute.label("minute"), bound, failed)
        .where(events.c.kind.in_(("bound", "unschedulable")), events.c.recorded_at >= since)
        .group_by(minute)
        .order_by(minute)
    )
    with engine.connect() as conn:
        return [(str(m), int(b or 0), int(f or 0)) for m, b, f in conn.execute(stmt).all()]


#: Rejected nodes per plugin on PostgreSQL: each `filtered` event's rejections, a node
#: listed once per event (it has one status), so summing the lists' lengths counts
#: (event, node) pairs without expanding nodes and reasons as filter_rejections does
#: (20 ms instead of 0.8 s for a day of a 1M-event log).
_PG_REJECTERS = """
    SELECT r.value ->> 'plugin' AS plugin, SUM(jsonb_array_length(r.value -> 'nodes')) AS n
    FROM events AS e
    CROSS JOIN LATERAL jsonb_array_elements(
        CASE WHEN jsonb_typeof(e.data -> 'rejections') = 'array'
             THEN e.data -> 'rejections' ELSE '[]'::jsonb END) AS r(value)
    WHERE e.kind = 'filtered' AND e.recorded_at >= :since
      AND jsonb_typeof(r.value -> 'nodes') = 'array'
    GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT :limit
"""


def top_rejecters(engine: Engine, since: datetime, limit: int = 10) -> list[tuple[str, int]]:
    """(plugin, rejected nodes) since `since`: distinct (filtered event, node) pairs per plugin."""
    stmt: Any
    if engine.dialect.name == "postgresql":
        stmt = sa.text(_PG_REJECTERS).bindparams(
            sa.bindparam("since", since, type_=UTCDateTime()), sa.bindparam("limit", limit)
        )
    else:
        # SQLite's authorizer refuses json_each in a statement of ours (connecting the
        # table-valued function counts as a write to sqlite_master); the view may use it.
        fr = filter_rejections
        pairs = (
            select(fr.c.plugin, fr.c.position, fr.c.node)
            .where(fr.c.recorded_at >= since)
            .distinct()
            .subquery()
        )
        count = func.count().label("nodes")
        stmt = (
            select(pairs.c.plugin, count)
            .group_by(pairs.c.plugin)
            .order_by(count.desc(), pairs.c.plugin)
            .limit(limit)
        )
    with engine.connect() as conn:
        return [(str(p), int(n or 0)) for p, n in conn.execute(stmt).all() if p]


def node_placements(engine: Engine, node: str, limit: int = 200) -> list[Row]:
    """Pods bound to `node`, newest first (through the index on node, position)."""
    stmt = (
        select(*ROW_COLUMNS)
        .where(kind_in(["bound"]), events.c.node == node)
        .order_by(events.c.position.desc())
        .limit(limit)
    )
    return rows_of(engine, stmt)


#: A node's rejections on PostgreSQL: the rejections whose node list holds it (jsonb
#: containment), not every node of every rejection expanded as filter_rejections does.
_PG_NODE_REJECTIONS = """
    SELECT r.value ->> 'plugin' AS plugin, reason.value AS reason,
           COUNT(DISTINCT e.position) AS attempts, MAX(e.recorded_at) AS last
    FROM events AS e
    CROSS JOIN LATERAL jsonb_array_elements(
        CASE WHEN jsonb_typeof(e.data -> 'rejections') = 'array'
             THEN e.data -> 'rejections' ELSE '[]'::jsonb END) AS r(value)
    LEFT JOIN LATERAL jsonb_array_elements_text(
        CASE WHEN jsonb_typeof(r.value -> 'reasons') = 'array'
             THEN r.value -> 'reasons' ELSE '[]'::jsonb END) AS reason(value) ON TRUE
    WHERE e.kind = 'filtered' AND e.recorded_at >= :since
      AND r.value -> 'nodes' @> to_jsonb(CAST(:node AS text))
    GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 100
"""


def node_rejections(
    engine: Engine, node: str, since: datetime
) -> list[tuple[str, str, int, datetime]]:
    """(plugin, reason, attempts, last time) of the rejections `node` got since `since`."""
    stmt: Any
    if engine.dialect.name == "postgresql":
        stmt = sa.text(_PG_NODE_REJECTIONS).bindparams(
            sa.bindparam("since", since, type_=UTCDateTime()),
            sa.bindparam("node", node),
        )
        stmt = stmt.columns(
            sa.column("plugin", Text),
            sa.column("reason", Text),
            sa.column("attempts", sa.Integer),
            sa.column("last", UTCDateTime()),
        )
    else:
        fr = filter_rejections
        count = func.count(sa.distinct(fr.c.position)).label("attempts")
        stmt = (
            select(fr.c.plugin, fr.c.reason, count, func.max(fr.c.recorded_at))
            .where(fr.c.node == node, fr.c.recorded_at >= since)
            .group_by(fr.c.plugin, fr.c.reason)
            .order_by(count.desc(), fr.c.plugin, fr.c.reason)
            .limit(100)
        )
    with engine.connect() as conn:
        return [(str(p or ""), str(r or ""), int(n), t) for p, r, n, t in conn.execute(stmt).all()]


def node_observed(engine: Engine, node: str) -> Row | None:
    stmt = (
        select(*ROW_COLUMNS)
        .where(kind_in(["node_observed", "node_removed"]), events.c.node == node)
        .order_by(events.c.position.desc())
        .limit(1)
    )
    found = rows_of(engine, stmt)
    return found[0] if found else None


def known_nodes(engine: Engine, limit: int = 5000) -> list[str]:
    stmt = (
        select(events.c.node)
        .where(kind_in(["node_observed"]))
        .distinct()
        .order_by(events.c.node)
        .limit(limit)
    )
    with engine.connect() as conn:
        return [str(n) for (n,) in conn.execute(stmt).all() if n]


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """What the search form asks; empty fields do not filter."""

    namespace: str = ""
    name: str = ""
    uid: str = ""
    node: str = ""
    plugin: str = ""
    since: datetime | None = None
    until: datetime | None = None
    page: int = 1


PAGE_ROWS = 50


def search(engine: Engine, query: SearchQuery) -> list[Row]:
    """Decisions matching `query`, newest first, one page (PAGE_ROWS, plus one to tell more)."""
    conditions: list[Any] = []
    if query.plugin:
        fr = filter_rejections
        matched = select(fr.c.position).where(fr.c.plugin == query.plugin)
        if query.since is not None:
            matched = matched.where(fr.c.recorded_at >= query.since)
        if query.until is not None:
            matched = matched.where(fr.c.recorded_at <= query.until)
        if query.node:
            matched = matched.where(fr.c.node == query.node)
        conditions.append(events.c.position.in_(matched))
    elif query.node:
        conditions.append(events.c.node == query.node)
        conditions.append(kind_in(["bound", "bind_failed", "preempted"]))
    if not query.plugin and not query.node:
        conditions.append(events.c.kind.in_((*OUTCOME_KINDS, "attempt_started")))
    if query.namespace or query.name:
        # Through the pods' uids: only the rows that name a pod are indexed by name.
        named = pod_uids(query.namespace or None, query.name or None)
        conditions.append(events.c.uid.in_(named))
    if query.uid:
        conditions.append(events.c.uid == query.uid)
    if query.since is not None:
        conditions.append(events.c.recorded_at >= query.since)
    if query.until is not None:
        conditions.append(events.c.recorded_at <= query.until)
    stmt = (
        select(*ROW_COLUMNS)
        .where(*conditions)
        .order_by(events.c.position.desc())
        .offset((query.page - 1) * PAGE_ROWS)
        .limit(PAGE_ROWS + 1)
    )
    return rows_of(engine, stmt)


def pods_attempted(engine: Engine, since: datetime | None, until: datetime | None) -> set[str]:
    """Uids of the pods with an attempt started within [since, until]."""
    stmt = select(events.c.uid).where(events.c.kind == "attempt_started").distinct()
    if since is not None:
        stmt = stmt.where(events.c.recorded_at >= since)
    if until is not None:
        stmt = stmt.where(events.c.recorded_at <= until)
    with engine.connect() as conn:
        return {str(u) for (u,) in conn.execute(stmt).all() if u}


def position_at(engine: Engine, moment: datetime) -> int:
    """The last position recorded at or before `moment` (0: none)."""
    stmt = select(func.coalesce(func.max(events.c.position), 0)).where(
        events.c.recorded_at <= moment
    )
    return int(_scalar(engine, stmt) or 0)
