"""Which event log to use, and opening it with errors a person can act on."""

from __future__ import annotations

import os

from eventsched.events import EventStore

DEFAULT_DATABASE_URL = "sqlite:///eventsched.db"


SUPPORTED = ("sqlite", "postgresql")


class DatabaseURLError(ValueError):
    """A database URL eventsched cannot use, with examples of ones it can."""


def resolve_url(url: str | None) -> str:
    """--db, else EVENTSCHED_DATABASE_URL, else a SQLite file in the working directory.

    `postgresql://` is taken to mean psycopg 3, the driver eventsched ships with.
    """
    url = url or os.environ.get("EVENTSCHED_DATABASE_URL") or DEFAULT_DATABASE_URL
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    scheme = url.split("://", 1)[0].split("+", 1)[0] if "://" in url else ""
    if scheme not in SUPPORTED:
        raise DatabaseURLError(
            f"bad database URL {url!r}: use sqlite:///PATH or postgresql://USER@HOST:5432/DB "
            "(--db or EVENTSCHED_DATABASE_URL)"
        )
    return url


def open_store(url: str | None, *, require_schema: bool = True) -> EventStore:
    """Refuses an outdated schema, naming `eventsched db upgrade`, unless told not to."""
    return EventStore.connect(resolve_url(url), require_schema=require_schema)
