"""The tables of the event log, as SQLAlchemy Core metadata.

This describes the schema at the head migration. The migrations in
`migrations/versions/` are what create it (they are frozen: a migration
never imports this module), and a test checks that the two agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    ColumnElement,
    CompoundSelect,
    DateTime,
    Dialect,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
    TypeDecorator,
    bindparam,
    select,
    text,
    union_all,
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.sql import Select
from sqlalchemy.sql.elements import BindParameter, TextClause


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC in and out, on both databases.

    SQLite has no timestamp type: SQLAlchemy stores the wall-clock digits
    and gives back a naive datetime. Storing UTC and re-attaching UTC on
    read makes both databases return the same aware value (and the same
    `isoformat()`, which the hash chain depends on).
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: the event log keeps aware UTC times")
        return value.astimezone(UTC)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):  # a raw SQLite value, e.g. from a view
            value = datetime.fromisoformat(value)
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


#: JSONB on PostgreSQL (indexable, queryable with ->>), JSON text on SQLite.
JSONData = JSON().with_variant(postgresql.JSONB(), "postgresql")

#: 64-bit on PostgreSQL; on SQLite INTEGER, so the key is the rowid itself (also 64-bit).
Position = BigInteger().with_variant(Integer(), "sqlite")

metadata = MetaData()

#: The kinds the partial index on `kind` covers on PostgreSQL (migrations 0006, 0008): the few
#: events per thousand that are read by kind across the whole log (every start reads
#: `config_loaded` and `maintenance`; the preemption views `preempted`, `evicted`;
#: the web page's node list `node_observed`, its pending pods `unschedulable`;
#: the view `shadow_verdicts` a shadow's `shadow_verdict`, which a scheduler never writes).
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
#: The kinds the index on (node, position) holds on PostgreSQL: a node's placements,
#: failed bindings, preemptions and observations (SQLite indexes every row's node).
NODE_KINDS = ("bind_failed", "bound", "node_observed", "node_removed", "preempted")
#: The kinds the index on (namespace, name) holds on PostgreSQL: the rows that name a pod
#: first, in its life and in each attempt; its other events are found by its uid.
POD_NAMING_KINDS = ("attempt_started", "pod_observed")
#: The kinds the index on attempt holds on PostgreSQL: the attempt's start (whose uid finds
#: the preemptor's other events) and its evictions (the victims' uids).
ATTEMPT_KINDS = ("attempt_started", "evicted")


def _kind_among(kinds: Sequence[str]) -> TextClause:
    """A partial index's condition: `kind IN ('a', 'b')`, spelled with constants."""
    return text("kind IN (" + ", ".join(f"'{kind}'" for kind in kinds) + ")")


events = Table(
    "events",
    metadata,
    Column("position", Position, primary_key=True, autoincrement=False),
    Column("recorded_at", UTCDateTime(), nullable=False),
    Column("scheduler", Text, nullable=False, server_default=""),
    Column("instance", Text, nullable=False, server_default=""),
    Column("attempt", Text, nullable=True),
    Column("kind", Text, nullable=False),
    Column("uid", Text, nullable=True),
    Column("namespace", Text, nullable=True),
    Column("name", Text, nullable=True),
    Column("node", Text, nullable=True),
    Column("plugin", Text, nullable=True),
    Column("data", JSONData, nullable=False),
    # PostgreSQL: partial (migration 0007); SQLite keeps the whole columns.
    Index(
        "ix_events_namespace_name",
        "namespace",
        "name",
        postgresql_where=_kind_among(POD_NAMING_KINDS),
    ),
    Index("ix_events_uid", "uid"),
    Index("ix_events_attempt", "attempt", postgresql_where=_kind_among(ATTEMPT_KINDS)),
    # PostgreSQL: partial (migrations 0006, 0008); SQLite keeps the whole column.
    Index("ix_events_kind", "kind", postgresql_where=_kind_among(RARE_KINDS)),
    # Time only grows along positions: a BRIN index finds a range on PostgreSQL.
    Index("ix_events_recorded_at", "recorded_at", postgresql_using="brin"),
    Index("ix_events_node", "node", "position", postgresql_where=_kind_among(NODE_KINDS)),
)

event_batches = Table(
    "event_batches",
    metadata,
    Column("batch", Position, primary_key=True, autoincrement=False),
    Column("first_position", BigInteger, nullable=False),
    Column("last_position", BigInteger, nullable=False),
    Column("recorded_at", UTCDateTime(), nullable=False),
    Column("prev_hash", Text, nullable=False),
    Column("hash", Text, nullable=False),
    # The batch holding a position: the first whose last_position is at or after it (0011).
    Index("ix_event_batches_last_position", "last_position"),
)

snapshots = Table(
    "snapshots",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("projection", Text, nullable=False),
    Column("position", BigInteger, nullable=False),
    # json, not jsonb: read back whole at every start, never queried inside (migration 0003).
    Column("state", JSON(), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Index("ix_snapshots_projection_position", "projection", "position"),
)


def kind_in(kinds: Sequence[str]) -> ColumnElement[bool]:
    """`kind IN (...)` spelled with constants, so that PostgreSQL sees which partial index
    (RARE_KINDS, NODE_KINDS) the condition falls under, whatever plan it caches."""
    kinds_param: BindParameter[list[str]] = bindparam(
        "kinds", list(kinds), expanding=True, literal_execute=True, unique=True
    )
    return events.c.kind.in_(kinds_param)


#: Columns of `events` in the order StoredEvent is built from.
EVENT_COLUMNS = (
    events.c.position,
    events.c.recorded_at,
    events.c.kind,
    events.c.scheduler,
    events.c.instance,
    events.c.attempt,
    events.c.uid,
    events.c.namespace,
    events.c.name,
    events.c.node,
    events.c.plugin,
    events.c.data,
)


def pod_uids(namespace: str | None, name: str | None = None) -> Select[tuple[str | None]]:
    """The uids of the pods named namespace/name (either may be left out), found through
    the partial index on (namespace, name): every pod has a `pod_observed`, and after a
    prune at least an `attempt_started` if it was tried since."""
    stmt = select(events.c.uid).where(kind_in(POD_NAMING_KINDS))
    if namespace is not None:
        stmt = stmt.where(events.c.namespace == namespace)
    if name is not None:
        stmt = stmt.where(events.c.name == name)
    return stmt


def attempt_events(attempt: str) -> CompoundSelect:
    """Every event of one attempt, through the partial index on attempt: its pod's events
    with that attempt (found by the uid its `attempt_started` names) and its evictions."""
    started = select(events.c.uid).where(kind_in(["attempt_started"]), events.c.attempt == attempt)
    own = select(*EVENT_COLUMNS).where(
        events.c.uid.in_(started.scalar_subquery()), events.c.attempt == attempt
    )
    evictions = select(*EVENT_COLUMNS).where(kind_in(["evicted"]), events.c.attempt == attempt)
    return union_all(own, evictions)
