"""Engines for the event log, configured the same way for the store and the migrations.

SQLite needs care to be a correct log with several writers: pysqlite opens
transactions lazily and as DEFERRED, so two writers both read the last
position, then one fails with "database is locked" when it tries to
write. Starting every writing transaction with `BEGIN IMMEDIATE` takes
SQLite's write lock up front, so writers queue (up to the busy timeout)
instead of failing, and the position read under that lock is the truth.
Readers ask for a DEFERRED transaction instead (`READ_OPTIONS`), so that a
long read never holds the write lock; WAL lets them read beside writers.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, SQLAlchemyError

from eventsched.events.errors import DatabaseUnavailableError, EventStoreError

#: The busy timeout: how long a SQLite writer waits for the write lock.
SQLITE_BUSY_TIMEOUT_MS = 30_000
#: How long connecting to PostgreSQL may take before the log counts as unreachable.
PG_CONNECT_TIMEOUT_S = 10

_MISSING_TABLE = re.compile(r'no such table: ([\w.]+)|relation "([\w.]+)" does not exist')

#: Execution option naming how a SQLite transaction begins.
_BEGIN_OPTION = "eventsched_sqlite_begin"
#: Execution options for connections that only read.
READ_OPTIONS: dict[str, Any] = {_BEGIN_OPTION: "DEFERRED"}


def parse_url(url: str | URL) -> URL:
    """Accept the spellings people paste (`postgres://`, `postgresql://`) and pick our driver.

    psycopg 3 is the only PostgreSQL driver eventsched depends on, while
    SQLAlchemy's default for a bare `postgresql://` is psycopg2.
    """
    try:
        parsed = make_url(multihost_as_query(url)) if isinstance(url, str) else url
    except (ArgumentError, ValueError) as exc:
        raise EventStoreError(
            f"{url!r} is not a database URL ({exc}); expected e.g. sqlite:///eventsched.db "
            "or postgresql+psycopg://user:password@host:5432/dbname"
        ) from exc
    if parsed.drivername in ("postgres", "postgresql"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def multihost_as_query(url: str) -> str:
    """libpq's multi-host spelling (`//user@h1:5432,h2:5432/db`) as SQLAlchemy's
    (`//user@/db?host=h1:5432&host=h2:5432`), which psycopg passes on to libpq.

    SQLAlchemy's URL parser takes one host and port only, and fails on the
    comma; both spellings name the same servers in the same order.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, _, tail = rest.partition("/")
    userinfo, at, hosts = authority.rpartition("@")
    if "," not in hosts:
        return url
    database, question, query = tail.partition("?")
    listed = "&".join(f"host={quote(host, safe=':[]')}" for host in hosts.split(",") if host)
    query = f"{listed}&{query}" if question and query else listed
    return f"{scheme}://{userinfo}{at}/{database}?{query}"


def display_url(url: str | URL | Engine | Connection) -> str:
    """The URL as it may be printed: password hidden."""
    if isinstance(url, Connection):
        url = url.engine.url
    if isinstance(url, Engine):
        url = url.url
    if isinstance(url, str):
        try:
            url = make_url(multihost_as_query(url))
        except (ArgumentError, ValueError):
            return "<unparseable URL>"
    hosts = url.query.get("host")
    if url.host or not isinstance(hosts, tuple):
        return url.render_as_string(hide_password=True)
    # Several hosts: shown in libpq's spelling, as the user most likely wrote them.
    text = url.difference_update_query(["host"]).render_as_string(hide_password=True)
    scheme, _, rest = text.partition("://")
    userinfo, _, path = rest.partition("/")
    return f"{scheme}://{userinfo}{','.join(hosts)}/{path}"


def create_engine(url: str | URL) -> Engine:
    """One pooled engine per database; SQLite gets WAL, a busy timeout and IMMEDIATE writes."""
    parsed = parse_url(url)
    kwargs: dict[str, Any] = {}
    if parsed.get_backend_name() == "postgresql" and "connect_timeout" not in parsed.query:
        kwargs["connect_args"] = {"connect_timeout": PG_CONNECT_TIMEOUT_S}
    try:
        engine = sa.create_engine(parsed, **kwargs)
    except (SQLAlchemyError, ImportError, ValueError) as exc:
        raise EventStoreError(f"cannot open the event log at {display_url(parsed)}: {exc}") from exc
    if engine.dialect.name == "sqlite":
        _configure_sqlite(engine, in_memory=parsed.database in (None, "", ":memory:"))
    return engine


def _configure_sqlite(engine: Engine, *, in_memory: bool) -> None:
    """The pysqlite recipe from SQLAlchemy's docs ("Serializable isolation / Savepoints")."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        # Take transaction control away from pysqlite: we emit BEGIN ourselves.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            if not in_memory:
                cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA foreign_keys = ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get(_BEGIN_OPTION, "IMMEDIATE")
        conn.exec_driver_sql(f"BEGIN {mode}")


def translate(exc: BaseException, url: str, doing: str) -> EventStoreError:
    """Turn a driver error into ours, keeping the driver's reason and naming the database."""
    if isinstance(exc, EventStoreError):
        return exc
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return DatabaseUnavailableError(url, _reason(exc))
    missing = _missing_table(exc)
    if missing:
        return EventStoreError(
            f"{doing} failed: the event log at {url} has no table {missing}: "
            f"run `eventsched db upgrade --db {url}`"
        )
    return EventStoreError(f"{doing} failed on the event log at {url}: {_reason(exc)}")


def _reason(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip() or type(orig).__name__
    return text.splitlines()[0]


def _missing_table(exc: BaseException) -> str | None:
    """The table a statement did not find (SQLite's and PostgreSQL's wording), if that was it."""
    found = _MISSING_TABLE.search(str(getattr(exc, "orig", None) or exc))
    return (found.group(1) or found.group(2)) if found else None


@contextmanager
def connection(engine: Engine, *, read_only: bool = False) -> Iterator[Connection]:
    """Check out a connection, reporting an unreachable database as DatabaseUnavailableError.

    Failing to connect and failing a statement are told apart here, where
    it is certain which one happened.
    """
    url = display_url(engine)
    try:
        conn = engine.connect()
    except DBAPIError as exc:
        raise DatabaseUnavailableError(url, _reason(exc)) from exc
    except SQLAlchemyError as exc:
        raise EventStoreError(f"cannot open the event log at {url}: {exc}") from exc
    try:
        if read_only:
            conn.execution_options(**READ_OPTIONS)
        yield conn
    finally:
        conn.close()
