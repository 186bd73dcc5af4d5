"""An event log opened so that nothing can be written through it: what the web page reads.

The same walls as `eventsched query` (audit/query.py), for the `LogReader`
(events.logreader) the web page opens over it, which the explain, replay and
counterfactual machinery read from:

- SQLite: the file is opened with `mode=ro`, `PRAGMA query_only` is on and
  query.py's authorizer allows only reading, on every connection.
- PostgreSQL: every session starts with `default_transaction_read_only`
  on and a statement timeout, and every transaction is begun READ ONLY.
  `writer_privileges` names what a role could still change outside a
  read-only transaction (superuser, INSERT/UPDATE/DELETE on the log's
  tables), so that the web page can refuse such a role.
"""

from __future__ import annotations

import os
import sqlite3
import urllib.request
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.pool import NullPool

from eventsched.audit.query import (
    QueryError,
    _sqlite_authorizer,
    _sqlite_path,
    load_table_functions,
)
from eventsched.events.engine import PG_CONNECT_TIMEOUT_S, parse_url

#: The log's tables (views are read-only by nature).
LOG_TABLES = ("events", "event_batches", "snapshots")
#: Milliseconds a statement of the web page may run.
STATEMENT_TIMEOUT_MS = 30_000


def read_only_engine(url: str | URL) -> Engine:
    """An engine that can only read the event log at `url` (SQLite or PostgreSQL)."""
    parsed = parse_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(parsed)
    if backend == "postgresql":
        return _postgresql_engine(parsed)
    raise QueryError(f"the web page reads SQLite or PostgreSQL, not {backend}")


def _sqlite_engine(url: URL) -> Engine:
    path = _sqlite_path(url)
    uri = "file:" + urllib.request.pathname2url(path) + "?mode=ro"

    def connect() -> sqlite3.Connection:
        if not os.path.isfile(path):
            # mode=ro never creates the file; say what is missing instead of "unable to open".
            raise sqlite3.OperationalError(f"no event log at {path}")
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA query_only = ON")
        load_table_functions(conn)
        conn.set_authorizer(_reads_only(_sqlite_authorizer([])))
        return conn

    # A connection per checkout: a log file replaced or removed is noticed at once.
    return sa.create_engine(url, creator=connect, poolclass=NullPool)


#: Pragmas SQLAlchemy reads when it first connects (PRAGMA name, no value: a read).
_DIALECT_PRAGMAS = frozenset({"read_uncommitted"})


def _reads_only(authorize: Callable[..., int]) -> Callable[..., int]:
    """query.py's authorizer, plus reading the pragmas SQLAlchemy's dialect reads."""

    def check(action: int, arg1: str | None, arg2: str | None, *rest: str | None) -> int:
        if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in _DIALECT_PRAGMAS:
            return sqlite3.SQLITE_OK if arg2 is None else sqlite3.SQLITE_DENY
        return authorize(action, arg1, arg2, *rest)

    return check


def _postgresql_engine(url: URL) -> Engine:
    kwargs: dict[str, Any] = {"pool_pre_ping": True}
    if "connect_timeout" not in url.query:
        kwargs["connect_args"] = {"connect_timeout": PG_CONNECT_TIMEOUT_S}
    engine = sa.create_engine(url, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: object) -> None:
        with dbapi_connection.cursor() as cursor:
            cursor.execute("SET default_transaction_read_only = on")
            cursor.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
            # Short reads: compiling one (JIT) cost 2 s against its 0.8 s of work on a
            # 1M-event log, because the views' estimated costs are large.
            cursor.execute("SET jit = off")
        dbapi_connection.commit()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql("SET TRANSACTION READ ONLY")

    return engine


def writer_privileges(engine: Engine) -> tuple[str, list[str]]:
    """The role of a PostgreSQL `engine`, and what it may change in the log ([]: a reader)."""
    if engine.dialect.name != "postgresql":
        return "", []
    found: list[str] = []
    with engine.connect() as conn:
        superuser = conn.exec_driver_sql(
            "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
        ).scalar()
        if superuser:
            found.append("superuser")
        for table in LOG_TABLES:
            exists = conn.execute(sa.text("SELECT to_regclass(:t) IS NOT NULL"), {"t": table})
            if not exists.scalar():
                continue
            for privilege in ("INSERT", "UPDATE", "DELETE"):
                allowed = conn.execute(
                    sa.text("SELECT has_table_privilege(current_user, :t, :p)"),
                    {"t": table, "p": privilege},
                ).scalar()
                if allowed:
                    found.append(f"{privilege} on {table}")
        user = str(conn.exec_driver_sql("SELECT current_user").scalar())
    return user, found
