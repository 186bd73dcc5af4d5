"""`eventsched db upgrade | prune`: the event log's schema and its retention."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from eventsched.cli.commands import summary
from eventsched.cli.database import open_store
from eventsched.cli.progress import progress_bar
from eventsched.cli.timebounds import FORMS, time_parser
from eventsched.events import EventStore, PrunePlan, StoredEvent, head_revision, upgrade
from eventsched.events.prune import carry_out, plan


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("db", help=summary("db"))
    dbsub = p.add_subparsers(dest="db_command", required=True, metavar="COMMAND")
    up = dbsub.add_parser("upgrade", help="create or migrate the schema (Alembic migrations)")
    up.set_defaults(func=run_upgrade)
    pr = dbsub.add_parser(
        "prune",
        help="drop the log's events before a time, keeping what later events need",
        description="Drops every batch recorded before --before (on PostgreSQL whole day "
        "partitions: the cut is the midnight UTC at or before it). First placements, open "
        "reservations, backoff and the view replay starts from are kept as the log's base, "
        "the hash chain continues from the last dropped batch, and the prune is recorded as "
        "a `maintenance` event in the same transaction. The newest batch is never dropped.",
    )
    pr.add_argument("--before", required=True, type=_past_time, metavar="TIME", help=FORMS)
    pr.add_argument(
        "--dry-run", action="store_true", help="say what would be dropped; drop nothing"
    )
    pr.add_argument("--json", action="store_true", help="print the result as JSON")
    pr.set_defaults(func=run_prune)


def _past_time(text: str) -> datetime:
    value = time_parser("--before")(text)
    if value > datetime.now(UTC):
        raise argparse.ArgumentTypeError(f"--before {text!r} is in the future")
    return value


@dataclass(frozen=True, slots=True)
class PruneResult:
    plan: PrunePlan
    #: The `maintenance` event that records the prune (None for a dry run).
    recorded: StoredEvent | None


def prune(
    store: EventStore,
    before: datetime,
    *,
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
) -> PruneResult | None:
    """Drop the log before `before`, keeping a base folded from the dropped events
    (audit.retention) and recording the prune (events.prune).

    None when nothing lies before `before` (or, on PostgreSQL, before the
    midnight UTC at or before it: whole days are dropped).
    """
    cut = plan(store, before)
    if cut is None:
        return None
    if dry_run:
        return PruneResult(cut, None)
    from eventsched.audit.retention import fold_base  # the fold: not for `db upgrade`

    base = fold_base(store, cut, progress)
    return PruneResult(cut, carry_out(store, cut, base.state, base.detail))


def run_upgrade(args: argparse.Namespace) -> int:
    store = open_store(args.db, require_schema=False)
    try:
        upgrade(store.engine)
        print(f"event log schema at {store.url} is at revision {head_revision()}")
    finally:
        store.close()
    return 0


def run_prune(args: argparse.Namespace) -> int:
    store = open_store(args.db)
    try:
        last = store.last_position()
        with progress_bar(last, "folding", unit="event") as bar:

            def advance(position: int) -> None:
                bar.update(position - bar.n)  # redraws at most every 0.1 s

            result = prune(store, args.before, dry_run=args.dry_run, progress=advance)
    finally:
        store.close()
    if result is None:
        summary = {"pruned": False, "before": args.before.isoformat()}
        text = f"nothing recorded before {args.before.isoformat()} can be dropped"
    else:
        cut = result.plan
        summary = {
            "pruned": not args.dry_run,
            "before": args.before.isoformat(),
            "cut": cut.cut.isoformat(),
            "throughPosition": cut.position,
            "throughBatch": cut.batch,
            "events": cut.events,
            "batches": cut.batches,
            "partitions": cut.partitions,
            "recordedAt": result.recorded.position if result.recorded else None,
        }
        verb = "would drop" if args.dry_run else "dropped"
        text = (
            f"{verb} {cut.events} events in {cut.batches} batches through position "
            f"{cut.position} (recorded before {cut.cut.isoformat()})"
        )
        if cut.partitions:
            text += f"; partitions: {', '.join(cut.partitions)}"
        if result.recorded is not None:
            text += f"; recorded as maintenance event {result.recorded.position}"
    print(json.dumps(summary, indent=2) if args.json else text)
    return 0
