"""Read-only SQL over the event log: what `eventsched query` runs.

An operator asks the log questions the built-in commands do not answer
(which pods moved, which plugin rejects most, how long pods waited), so
the command takes any one SQL statement. That must never be a way to
change the log it is meant to audit, so the guard is the database's own,
not a parse of the SQL:

- PostgreSQL: the statement runs inside a READ ONLY transaction (checked
  with `current_setting('transaction_read_only')` before the statement runs) with a
  statement timeout, and the transaction is rolled back. A snapshot is
  taken first, so the statement itself cannot switch the transaction back
  to READ WRITE. The read-only role of deploy/base/readonly-role.sql is
  the second wall, for what a read-only transaction still allows
  (calling functions that act outside the database).
- SQLite: the file is opened with `mode=ro` (nothing is created, nothing
  can be written), `PRAGMA query_only` is on, and an authorizer allows
  only reading (SELECT, reading columns, functions, recursive CTEs and a
  few introspection pragmas), so ATTACH or VACUUM INTO cannot create
  files either. A progress handler enforces the timeout.

Exactly one statement runs: several `;`-separated statements are refused
before anything is sent, because a driver may accept them in one call.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.engine import URL

from eventsched.audit import views
from eventsched.audit.statements import split
from eventsched.events.engine import create_engine, display_url, parse_url
from eventsched.events.errors import DatabaseUnavailableError
from eventsched.events.migrate import current_revision

#: Seconds a query may run before the database cancels it.
DEFAULT_TIMEOUT_S = 30.0

#: SQLite calls the progress handler every this many virtual-machine steps.
_PROGRESS_STEPS = 10_000

#: PostgreSQL error codes the user can act on differently from a plain SQL error.
_PG_READ_ONLY = "25006"  # read_only_sql_transaction
_PG_CANCELED = "57014"  # query_canceled (statement_timeout)
_PG_NO_PRIVILEGE = "42501"  # insufficient_privilege

_READ_ONLY_HINT = "eventsched query only reads"


class QueryError(Exception):
    """The query was refused or failed; the message is one line a person can act on."""


@dataclass(frozen=True, slots=True)
class QueryResult:
    """Column names and rows, values as Python objects.

    JSON columns (JSONB on PostgreSQL, JSON-declared on SQLite) come back
    parsed (dict, list, ...), timestamps as aware UTC datetimes on both
    databases. `columns` is empty when the statement returned no result
    set (e.g. `SET` on PostgreSQL).
    """

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    dialect: str


# -- one statement ---------------------------------------------------------------


def single_statement(sql: str, dialect: str) -> str:
    """The one statement in `sql`, without a trailing `;`; QueryError if none or several.

    Semicolons inside string literals, quoted identifiers, comments and
    (on PostgreSQL) dollar-quoted bodies do not separate statements.
    """
    statements = [s for s, meaningful in split(sql, dialect) if meaningful]
    if not statements:
        raise QueryError(
            'no SQL statement given: e.g. eventsched query "SELECT * FROM decisions LIMIT 10"'
        )
    if len(statements) > 1:
        raise QueryError(
            f"eventsched query runs exactly one statement, got {len(statements)} "
            "separated by ';': run them one at a time"
        )
    return statements[0].strip()


# -- running it --------------------------------------------------------------------


def run_read_only(url: str | URL, sql: str, *, timeout: float = DEFAULT_TIMEOUT_S) -> QueryResult:
    """Run one statement of `sql` against the event log at `url`, unable to change anything."""
    if timeout <= 0:
        raise QueryError(f"--timeout must be more than 0 seconds, not {timeout:g}")
    parsed = parse_url(url)
    dialect = parsed.get_backend_name()
    statement = single_statement(sql, dialect)
    if dialect not in ("sqlite", "postgresql"):
        raise QueryError(
            f"eventsched query supports SQLite and PostgreSQL, not {dialect} ({display_url(parsed)})"
        )
    try:
        if dialect == "sqlite":
            return _run_sqlite(parsed, statement, timeout)
        return _run_postgresql(parsed, statement, timeout)
    except QueryError as exc:
        text = str(exc)
        if "no such table" in text or ("relation" in text and "does not exist" in text):
            raise QueryError(text + (_schema_hint(parsed) or _views_hint())) from exc
        raise


def _views_hint() -> str:
    """What the log does have, when a query names a table or view it has not."""
    return f"; the views are {views.named()} (eventsched query --list-views says what each holds)"


def _schema_hint(url: URL) -> str:
    """What to do when a table is missing because the database has no eventsched schema."""
    engine = create_engine(url)
    try:
        revision = current_revision(engine)
    except Exception:  # the hint is a courtesy; the error stands without it
        return ""
    finally:
        engine.dispose()
    if revision is not None:
        return ""
    shown = display_url(url)
    return f" ({shown} has no eventsched schema: run `eventsched db upgrade --db {shown}`)"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


# SQLite ---------------------------------------------------------------------------

#: Authorizer action codes that only read.
_SQLITE_READS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION})
#: SQLITE_RECURSIVE (WITH RECURSIVE); not exported by every Python's sqlite3.
_SQLITE_RECURSIVE = getattr(sqlite3, "SQLITE_RECURSIVE", 33)
#: Pragmas that only describe the schema; any other PRAGMA statement is refused.
_SQLITE_READ_PRAGMAS = frozenset(
    {
        "table_info",
        "table_xinfo",
        "table_list",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
        "database_list",
        "function_list",
        "compile_options",
    }
)
_SQLITE_ACTIONS = {
    getattr(sqlite3, name): name.removeprefix("SQLITE_").replace("_", " ")
    for name in (
        "SQLITE_CREATE_INDEX",
        "SQLITE_CREATE_TABLE",
        "SQLITE_CREATE_TEMP_INDEX",
        "SQLITE_CREATE_TEMP_TABLE",
        "SQLITE_CREATE_TEMP_TRIGGER",
        "SQLITE_CREATE_TEMP_VIEW",
        "SQLITE_CREATE_TRIGGER",
        "SQLITE_CREATE_VIEW",
        "SQLITE_DELETE",
        "SQLITE_DROP_INDEX",
        "SQLITE_DROP_TABLE",
        "SQLITE_DROP_TEMP_INDEX",
        "SQLITE_DROP_TEMP_TABLE",
        "SQLITE_DROP_TEMP_TRIGGER",
        "SQLITE_DROP_TEMP_VIEW",
        "SQLITE_DROP_TRIGGER",
        "SQLITE_DROP_VIEW",
        "SQLITE_INSERT",
        "SQLITE_PRAGMA",
        "SQLITE_TRANSACTION",
        "SQLITE_UPDATE",
        "SQLITE_ATTACH",
        "SQLITE_DETACH",
        "SQLITE_ALTER_TABLE",
        "SQLITE_REINDEX",
        "SQLITE_ANALYZE",
        "SQLITE_CREATE_VTABLE",
        "SQLITE_DROP_VTABLE",
        "SQLITE_SAVEPOINT",
    )
    if hasattr(sqlite3, name)
}


def _sqlite_json(raw: bytes) -> Any:
    """A JSON-declared column (events.data, snapshots.state), parsed like psycopg parses JSONB."""
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _sqlite_datetime(raw: bytes) -> Any:
    """A DATETIME column: SQLAlchemy stored UTC wall-clock digits (schema.UTCDateTime)."""
    text = raw.decode("utf-8", errors="replace")
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return text
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _register_sqlite_converters() -> None:
    """Converters by declared type; used only by connections opened with PARSE_DECLTYPES (ours)."""
    sqlite3.register_converter("JSON", _sqlite_json)
    sqlite3.register_converter("DATETIME", _sqlite_datetime)


def _sqlite_path(url: URL) -> str:
    database = url.database or ""
    if database in ("", ":memory:") or database.startswith("file::memory:"):
        raise QueryError(
            f"{display_url(url)} is an in-memory database, which holds no event log: "
            "give the log's file, e.g. --db sqlite:///eventsched.db"
        )
    if database.startswith("file:"):
        raise QueryError(
            f"give the SQLite event log as a plain path (sqlite:///PATH), not a URI: {database}"
        )
    return os.path.abspath(database)


@contextmanager
def _sqlite_connection(url: URL) -> Iterator[sqlite3.Connection]:
    path = _sqlite_path(url)
    if not os.path.isfile(path):
        raise QueryError(
            f"no event log at {display_url(url)}: {path} does not exist; check --db "
            "(or EVENTSCHED_DATABASE_URL)"
        )
    _register_sqlite_converters()
    uri = "file:" + urllib.request.pathname2url(path) + "?mode=ro"
    try:
        conn = sqlite3.connect(
            uri, uri=True, detect_types=sqlite3.PARSE_DECLTYPES, isolation_level=None
        )
    except sqlite3.Error as exc:
        raise QueryError(f"cannot open the event log at {display_url(url)}: {exc}") from exc
    try:
        yield conn
    finally:
        conn.close()


def _run_sqlite(url: URL, statement: str, timeout: float) -> QueryResult:
    with _sqlite_connection(url) as conn:
        conn.execute("PRAGMA query_only = ON")
        load_table_functions(conn)
        refused: list[str] = []
        conn.set_authorizer(_sqlite_authorizer(refused))
        deadline = time.monotonic() + timeout
        timed_out = False

        def past_deadline() -> int:
            nonlocal timed_out
            timed_out = time.monotonic() > deadline
            return 1 if timed_out else 0

        conn.set_progress_handler(past_deadline, _PROGRESS_STEPS)
        try:
            cursor = conn.execute(statement)
            rows = cursor.fetchall()
        except (sqlite3.Error, OverflowError, ValueError) as exc:
            if refused:
                raise QueryError(
                    f"query refused: {_refused_action(refused[0], statement)} is not allowed: "
                    f"{_READ_ONLY_HINT} (the log is opened read-only)"
                ) from exc
            if timed_out:
                raise QueryError(_timeout_message(timeout)) from exc
            message = _first_line(exc)
            if "readonly database" in message:
                raise QueryError(
                    f"query refused: {message}; {_READ_ONLY_HINT} (the log is opened read-only)"
                ) from exc
            raise QueryError(f"query failed on {display_url(url)}: {message}") from exc
        columns = tuple(d[0] for d in cursor.description or ())
        return QueryResult(columns, rows, "sqlite")


def load_table_functions(conn: sqlite3.Connection) -> None:
    """Use json_each and json_tree once before the authorizer is set: SQLite makes a
    table-valued function's table at its first use on a connection, through what the
    authorizer sees as an UPDATE of sqlite_master, which it refuses (the statement
    itself only reads)."""
    for function in ("json_each", "json_tree"):
        with contextlib.suppress(sqlite3.Error):  # an SQLite built without JSON
            conn.execute(f"SELECT 1 FROM {function}('[]')").fetchall()


def _sqlite_authorizer(refused: list[str]) -> Callable[..., int]:
    """Allow reading only; remember the first thing refused, to name it in the error."""

    def authorize(
        action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None
    ) -> int:
        if action in _SQLITE_READS or action == _SQLITE_RECURSIVE:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in _SQLITE_READ_PRAGMAS:
            return sqlite3.SQLITE_OK
        what = _SQLITE_ACTIONS.get(action, f"action {action}")
        target = ".".join(a for a in (arg1, arg2) if a)
        refused.append(f"{what} {target}".strip())
        return sqlite3.SQLITE_DENY

    return authorize


def _refused_action(refused: str, statement: str) -> str:
    """What the user asked for: `DROP VIEW decisions`, not the DELETE on sqlite_master it does first."""
    if " sqlite_" in refused or refused == "ATTACH":  # schema changes, VACUUM
        return " ".join(statement.split()[:3])
    return refused


def _timeout_message(timeout: float) -> str:
    return (
        f"query cancelled after {timeout:g} s (the time limit): narrow it down "
        "(WHERE recorded_at > ..., LIMIT) or raise --timeout"
    )


# PostgreSQL ---------------------------------------------------------------------------


def _run_postgresql(url: URL, statement: str, timeout: float) -> QueryResult:
    engine = create_engine(url)
    shown = display_url(url)
    try:
        try:
            raw = engine.raw_connection()
        except Exception as exc:
            raise DatabaseUnavailableError(shown, _first_line(getattr(exc, "orig", exc))) from exc
        try:
            conn = raw.driver_connection
            assert conn is not None
            try:
                with conn.cursor() as cursor:
                    # psycopg opens the transaction with the first statement;
                    # SET TRANSACTION must come before any query in it.
                    cursor.execute("SET TRANSACTION READ ONLY")
                    cursor.execute(f"SET LOCAL statement_timeout = {max(1, round(timeout * 1000))}")
                    # A query, so the transaction has its snapshot: from here on
                    # `SET TRANSACTION READ WRITE` is refused.
                    cursor.execute("SELECT current_setting('transaction_read_only')")
                    (read_only,) = cursor.fetchone() or ("off",)
                    if read_only != "on":  # pragma: no cover - the server ignored SET TRANSACTION
                        raise QueryError(
                            f"could not start a read-only transaction on {shown}; query not run"
                        )
                    cursor.execute(statement)
                    columns = tuple(d.name for d in cursor.description or ())
                    rows = [tuple(r) for r in cursor.fetchall()] if cursor.description else []
            except QueryError:
                raise
            except Exception as exc:
                raise _postgres_error(exc, shown, timeout) from exc
            finally:
                try:
                    conn.rollback()
                except Exception:  # the connection died: nothing to roll back
                    raw.invalidate()
        finally:
            raw.close()
    finally:
        engine.dispose()
    return QueryResult(columns, [_utc_row(r) for r in rows], "postgresql")


def _postgres_error(exc: BaseException, shown: str, timeout: float) -> QueryError:
    sqlstate = getattr(exc, "sqlstate", None)
    diag = getattr(exc, "diag", None)
    message = (getattr(diag, "message_primary", None) or _first_line(exc)).strip()
    if sqlstate == _PG_READ_ONLY:
        return QueryError(f"query refused: it writes and {_READ_ONLY_HINT} (PostgreSQL: {message})")
    if sqlstate == _PG_CANCELED:
        return QueryError(_timeout_message(timeout))
    if sqlstate == _PG_NO_PRIVILEGE:
        return QueryError(f"query refused on {shown}: {message}")
    if sqlstate is None and not hasattr(exc, "diag"):
        return QueryError(f"query failed on {shown}: {_first_line(exc)}")
    return QueryError(f"query failed on {shown}: {message}")


def _utc_row(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """timestamptz arrives in the session's time zone; SQLite gives UTC, so give UTC here too."""
    return tuple(
        v.astimezone(UTC) if isinstance(v, datetime) and v.tzinfo is not None else v for v in row
    )
