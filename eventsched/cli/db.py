"""`eventsched db upgrade`: bring the event log's schema to this version."""

from __future__ import annotations

import argparse

from eventsched.cli.database import open_store
from eventsched.events import head_revision, upgrade


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("db", help="manage the event log's database")
    dbsub = p.add_subparsers(dest="db_command", required=True, metavar="COMMAND")
    up = dbsub.add_parser("upgrade", help="create or migrate the schema (Alembic migrations)")
    up.set_defaults(func=run_upgrade)


def run_upgrade(args: argparse.Namespace) -> int:
    store = open_store(args.db, require_schema=False)
    try:
        upgrade(store.engine)
        print(f"event log schema at {store.url} is at revision {head_revision()}")
    finally:
        store.close()
    return 0
