"""Which event log to use, and opening it with errors a person can act on."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import structlog
from sqlalchemy.engine import make_url

from eventsched.events import (
    EventStore,
    EventStoreError,
    LogReader,
    SchemaOutdatedError,
    check_schema,
)
from eventsched.events.engine import multihost_as_query
from eventsched.events.slices import read_origin

log = structlog.get_logger(__name__)

DEFAULT_DATABASE_URL = "sqlite:///eventsched.db"


SUPPORTED = ("sqlite", "postgresql")


class DatabaseURLError(ValueError):
    """A database URL eventsched cannot use, with examples of ones it can."""


def resolve_url(url: str | None) -> str:
    """--db, else EVENTSCHED_DATABASE_URL, else a SQLite file in the working directory.

    `postgresql://` is taken to mean psycopg 3, the driver eventsched ships with. A value
    without `://` is the path of a SQLite file (`--db slice.db` = `sqlite:///slice.db`).
    libpq's multi-host form (`postgresql://u@h1:5432,h2:5432/db`) becomes SQLAlchemy's
    (`postgresql+psycopg://u@/db?host=h1:5432&host=h2:5432`).
    """
    if url is not None and not url.strip():
        raise DatabaseURLError(
            "--db is empty: give a database URL such as sqlite:///eventsched.db or "
            "postgresql://USER@HOST:5432/DB, or leave --db out for the default"
        )
    url = url or os.environ.get("EVENTSCHED_DATABASE_URL") or DEFAULT_DATABASE_URL
    if "://" not in url:
        return f"sqlite:///{url}"
    url = multihost_as_query(url)
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    scheme = url.split("://", 1)[0].split("+", 1)[0] if "://" in url else ""
    if scheme not in SUPPORTED:
        raise DatabaseURLError(
            f"bad database URL {url!r}: use sqlite:///PATH (or the PATH alone) or "
            "postgresql://USER@HOST:5432/DB (--db or EVENTSCHED_DATABASE_URL)"
        )
    return url


def open_store(url: str | None, *, require_schema: bool = True) -> EventStore:
    """Refuses an outdated schema, naming `eventsched db upgrade`, unless told not to.

    A SQLite file that does not exist is refused before connecting, which
    would create it: a mistyped path must not leave an empty file behind.
    """
    resolved = resolve_url(url)
    if require_schema:
        _refuse_missing_file(resolved)
    store = EventStore.connect(resolved, require_schema=require_schema)
    if require_schema:
        try:
            refuse_slice(store)
        except BaseException:
            store.close()
            raise
    return store


def refuse_slice(store: EventStore) -> None:
    """A slice (`eventsched export`) is only read: appending would continue another log's
    chain past what its origin records."""
    origin = read_origin(store)
    if origin is not None:
        raise EventStoreError(
            f"the event log at {store.url} is a slice of {origin.source} "
            f"({origin.selection}), made to be read: open it with explain, replay, query "
            "or ui; to change the log, use its source"
        )


def open_reader(url: str | None) -> LogReader:
    """The log opened only to read (the commands that read it: explain, replay), refused
    as `open_store` refuses it when its schema is not at the head or its file is missing."""
    resolved = resolve_url(url)
    _refuse_missing_file(resolved)
    return LogReader.connect(resolved)


def _refuse_missing_file(url: str) -> None:
    missing = _missing_sqlite_file(url)
    if missing is not None:
        raise DatabaseURLError(
            f"the event log at {url} does not exist (no file {missing}): check the "
            f"path, or create it with `eventsched db upgrade --db {url}`"
        )


def _missing_sqlite_file(url: str) -> Path | None:
    parsed = make_url(url)
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return None
    path = Path(database)
    return None if path.exists() else path


def wait_for_schema(store: EventStore, stop: threading.Event) -> bool:
    """Wait until the log's schema is current (False: stopped first), saying why meanwhile."""
    delay = 1.0
    while not stop.is_set():
        try:
            check_schema(store.engine)
        except (SchemaOutdatedError, EventStoreError) as exc:
            log.warning("waiting for the event log (not ready)", problem=str(exc).splitlines()[0])
        except Exception as exc:  # a database that does not answer yet
            log.warning("event log unreachable; retrying", error=str(exc).splitlines()[0])
        else:
            refuse_slice(store)
            return True
        stop.wait(delay)
        delay = min(delay * 2, 30.0)
    return False
