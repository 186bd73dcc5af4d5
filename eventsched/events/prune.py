"""Pruning: plan the cut of the log's oldest events, and carry it out.

A prune drops every batch recorded before a time (on PostgreSQL whole day
partitions) and keeps, as the log's base (retention.py), what later events
still depend on. Both steps need the store that appends: the cut is recorded
as a `maintenance` event in the transaction that drops the rows. Building the
base in between is the caller's (`eventsched db prune` folds the dropped
events with audit.retention).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import structlog
from sqlalchemy import Connection, delete, func, select
from sqlalchemy.exc import SQLAlchemyError

from eventsched.events import partitions
from eventsched.events.canonical import digest
from eventsched.events.engine import connection, translate
from eventsched.events.errors import EventStoreError
from eventsched.events.record import EventRecord, StoredEvent
from eventsched.events.retention import BASE_NAME, PRUNED, LogBase, PrunePlan, read_base
from eventsched.events.schema import event_batches, events, snapshots

if TYPE_CHECKING:
    from eventsched.events.store import EventStore

log = structlog.get_logger(__name__)

#: How long a prune waits for readers of `events` before giving up (nothing is then changed).
PRUNE_LOCK_TIMEOUT = "10s"

__all__ = ["carry_out", "plan"]


def plan(store: EventStore, before: datetime) -> PrunePlan | None:
    """The cut for `--before`: None when no whole batch (or day) lies before it."""
    since = read_base(store) or LogBase.genesis()
    t = event_batches.c
    try:
        with connection(store.engine, read_only=True) as conn:
            head_time = conn.execute(select(func.max(t.recorded_at))).scalar()
            if head_time is None:
                return None
            dropped: list[str] = []
            cut = before
            if _partitioned(conn):
                # Never the head batch's day: the next append chains to the head.
                limit = min(before, _aware(head_time))
                old = [p for p in partitions.existing(conn) if p.end <= limit]
                if not old:
                    return None
                cut = old[-1].end
                dropped = [p.name for p in old]
            row = conn.execute(
                select(t.batch, t.last_position, t.hash)
                .where(t.recorded_at < cut, t.batch < select(func.max(t.batch)).scalar_subquery())
                .order_by(t.batch.desc())
                .limit(1)
            ).first()
            if dropped:
                _check_partitions_hold_the_cut(conn, cut, row[1] if row else since.position)
    except SQLAlchemyError as exc:
        raise translate(exc, store.url, "planning a prune") from exc
    if row is not None and int(row[0]) > since.batch:
        return PrunePlan(before, cut, int(row[0]), int(row[1]), str(row[2]), since, dropped)
    if dropped:  # only empty days before the cut
        return PrunePlan(before, cut, since.batch, since.position, since.hash, since, dropped)
    return None


def _aware(value: datetime | str) -> datetime:
    if isinstance(value, str):  # SQLite's aggregate comes back as the stored text
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _partitioned(conn: Connection) -> bool:
    return conn.dialect.name == "postgresql" and partitions.is_partitioned(conn)


def _check_partitions_hold_the_cut(conn: Connection, cut: datetime, position: int) -> None:
    """Dropping days before `cut` must drop exactly positions up to `position`."""
    later = conn.execute(
        select(func.min(events.c.position)).where(events.c.recorded_at >= cut)
    ).scalar()
    earlier = conn.execute(
        select(func.max(events.c.position)).where(events.c.recorded_at < cut)
    ).scalar()
    if (earlier is not None and earlier > position) or (later is not None and later <= position):
        raise EventStoreError(
            f"cannot prune before {cut.isoformat()}: events before it are not all at positions "
            f"up to {position} (their times are out of position order, as an eventsched "
            "older than the time-partitioned log could write); choose an earlier --before"
        )


def carry_out(
    store: EventStore, cut: PrunePlan, state: Mapping[str, Any], detail: Mapping[str, Any]
) -> StoredEvent:
    """Record the prune, store the new base and drop the cut, in one transaction.

    Refused if another prune changed the base since `cut` was planned.
    Returns the recorded `maintenance` event.
    """
    base = {
        **state,
        "anchor": {"batch": cut.batch, "position": cut.position, "hash": cut.hash},
    }
    record = EventRecord(
        kind="maintenance",
        data={
            "action": PRUNED,
            "before": cut.before.astimezone(UTC).isoformat(),
            "cut": cut.cut.astimezone(UTC).isoformat(),
            "throughBatch": cut.batch,
            "throughPosition": cut.position,
            "anchorHash": cut.hash,
            "events": cut.events,
            "batches": cut.batches,
            "partitions": cut.partitions,
            "baseDigest": digest(base),
            **detail,
        },
    )
    doing = f"pruning the event log through position {cut.position}"
    try:
        with connection(store.engine) as conn, conn.begin():
            [recorded] = store.append_locked(conn, [record])
            current = read_base(store)
            if (current or LogBase.genesis()).batch != cut.since.batch:
                raise EventStoreError(
                    "another prune ran while this one was folding the log; run it again"
                )
            _replace_base(conn, cut.position, base)
            _drop(conn, cut)
    except SQLAlchemyError as exc:
        raise translate(exc, store.url, doing) from exc
    log.info(
        "event log pruned",
        through_position=cut.position,
        events=cut.events,
        batches=cut.batches,
        partitions=len(cut.partitions),
        recorded_at=recorded.position,
    )
    return recorded


def _replace_base(conn: Connection, position: int, state: Mapping[str, Any]) -> None:
    t = snapshots.c
    conn.execute(delete(snapshots).where(t.projection == BASE_NAME))
    # Snapshots older than the cut would fold from events that are gone.
    conn.execute(delete(snapshots).where(t.position < position))
    conn.execute(
        snapshots.insert(),
        {
            "projection": BASE_NAME,
            "position": position,
            "state": dict(state),
            "created_at": datetime.now(UTC),
        },
    )


def _drop(conn: Connection, cut: PrunePlan) -> None:
    """Remove batches and events through the cut, past the append-only triggers."""
    if conn.dialect.name == "postgresql":
        # Dropping a day waits for readers of `events`; appends wait for this transaction.
        conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{PRUNE_LOCK_TIMEOUT}'")
        for name in cut.partitions:
            conn.exec_driver_sql(f"DROP TABLE {name}")
        _without_triggers(
            conn,
            ["ALTER TABLE event_batches DISABLE TRIGGER event_batches_append_only"],
            [f"DELETE FROM event_batches WHERE batch <= {cut.batch}"],
            ["ALTER TABLE event_batches ENABLE TRIGGER event_batches_append_only"],
        )
        return
    triggers = [
        (table, action) for table in ("events", "event_batches") for action in ("UPDATE", "DELETE")
    ]
    _without_triggers(
        conn,
        [f"DROP TRIGGER {table}_no_{action.lower()}" for table, action in triggers],
        [
            f"DELETE FROM events WHERE position <= {cut.position}",
            f"DELETE FROM event_batches WHERE batch <= {cut.batch}",
        ],
        [
            f"CREATE TRIGGER {table}_no_{action.lower()} BEFORE {action} ON {table} "
            f"BEGIN SELECT RAISE(ABORT, '{_APPEND_ONLY}'); END"
            for table, action in triggers
        ],
    )


#: The message of 0001's SQLite triggers, recreated exactly.
_APPEND_ONLY = "events is append-only: UPDATE and DELETE are refused (use `eventsched db prune`)"


def _without_triggers(
    conn: Connection, off: Sequence[str], statements: Sequence[str], on: Sequence[str]
) -> None:
    """Run `statements` with the triggers off; DDL is transactional, so nobody else sees them off."""
    for statement in (*off, *statements, *on):
        conn.exec_driver_sql(statement)
