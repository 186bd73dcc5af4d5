"""The SQL of the shadow's pages: `eventsched shadow`'s verdicts (shadow_verdict events).

A pod's are found by its uids (indexed); the overview's are bounded by `recorded_at`
(indexed: BRIN on PostgreSQL) and, for the list of differences, by a LIMIT.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from eventsched.events.schema import events, kind_in
from eventsched.ui.reads import ROW_COLUMNS, Row, rows_of, time_bucket

VERDICT = "shadow_verdict"
#: A pod's rows the pages read: its attempts' starts (a shadow attempt's carries
#: data.shadow) and its verdicts; at most this many (a pod's attempts are few).
POD_ROWS = 2000


@dataclass(frozen=True, slots=True)
class VerdictCount:
    """How many verdicts of one kind: per shadowed scheduler, or per time bucket."""

    key: str
    observed: str
    verdict: str
    count: int


def _observed() -> Any:
    return events.c.data["observed"].as_string()


def _verdict() -> Any:
    return events.c.data["verdict"].as_string()


def _since(since: datetime) -> list[Any]:
    # kind_in: a constant, so that PostgreSQL may use a partial index on kind holding it.
    return [kind_in([VERDICT]), events.c.recorded_at >= since]


def pod_rows(engine: Engine, uids: list[str]) -> list[Row]:
    """The attempt_started and shadow_verdict events of a pod's uids, in log order (the
    newest POD_ROWS)."""
    if not uids:
        return []
    stmt = (
        select(*ROW_COLUMNS)
        .where(events.c.uid.in_(uids), events.c.kind.in_(("attempt_started", VERDICT)))
        .order_by(events.c.position.desc())
        .limit(POD_ROWS)
    )
    return rows_of(engine, stmt)[::-1]


def span(engine: Engine, since: datetime) -> tuple[datetime, datetime] | None:
    """The first and the last verdict's time since `since` (None: there is none); MIN and
    MAX keep the column's type, so both are aware UTC times on either database."""
    stmt = select(func.min(events.c.recorded_at), func.max(events.c.recorded_at)).where(
        *_since(since)
    )
    with engine.connect() as conn:
        first, last = conn.execute(stmt).one()
    if first is None or last is None:
        return None
    return first, last


def counts_by_scheduler(engine: Engine, since: datetime) -> list[VerdictCount]:
    """Verdicts since `since` per (shadowed scheduler, what it did, verdict)."""
    return _counts(engine, since, events.c.scheduler)


def counts_by_bucket(engine: Engine, since: datetime, unit: str) -> list[VerdictCount]:
    """Verdicts since `since` per (time bucket of `unit`, what it did, verdict), in time order."""
    return _counts(engine, since, time_bucket(engine, unit))


def _counts(engine: Engine, since: datetime, key: Any) -> list[VerdictCount]:
    observed, verdict = _observed(), _verdict()
    stmt = (
        select(key, observed, verdict, func.count())
        .where(*_since(since))
        .group_by(key, observed, verdict)
        .order_by(key, observed, verdict)
    )
    with engine.connect() as conn:
        return [
            VerdictCount(str(k or ""), str(o or ""), str(v or ""), int(n))
            for k, o, v, n in conn.execute(stmt).all()
        ]


def differences(engine: Engine, since: datetime, limit: int) -> list[Row]:
    """The newest `limit` verdicts since `since` that differ, newest first."""
    stmt = (
        select(*ROW_COLUMNS)
        .where(*_since(since), _verdict() == "differ")
        .order_by(events.c.position.desc())
        .limit(limit)
    )
    return rows_of(engine, stmt)
