"""Running the Alembic migrations from code: `eventsched db upgrade` and the startup check.

The Alembic configuration is built here rather than read from
`alembic.ini`, so upgrading works from any working directory and from a
plain `pip install`, where the migrations ship inside the package as
`eventsched/_migrations` (pyproject force-includes them) and there is no
ini file at all. `alembic.ini` at the top of a checkout is only for people
who run the `alembic` command themselves.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import structlog
from sqlalchemy import Connection, Engine, inspect
from sqlalchemy.exc import SQLAlchemyError

from eventsched.events.engine import connection, create_engine, display_url, translate
from eventsched.events.errors import EventStoreError, SchemaOutdatedError

if TYPE_CHECKING:
    from alembic.config import Config

log = structlog.get_logger(__name__)

#: The newest revision in migrations/versions, which `check_schema` expects: known
#: without importing Alembic (a fifth of a second at every start of `eventsched run`);
#: tests/events/test_event_migrations.py checks it is Alembic's head.
SCHEMA_HEAD = "0013"

#: Alembic's version table (its default name, which env.py keeps).
VERSION_TABLE = "alembic_version"


def migrations_dir() -> Path:
    """Where the migration scripts are: inside the installed package first, else the checkout."""
    candidates = [
        Path(str(resources.files("eventsched"))) / "_migrations",
        Path(__file__).resolve().parents[2] / "migrations",
    ]
    for candidate in candidates:
        if (candidate / "env.py").is_file():
            return candidate
    raise EventStoreError(
        "the event log migrations are missing: looked in "
        + " and ".join(str(c) for c in candidates)
        + "; reinstall eventsched (the wheel ships them as eventsched/_migrations)"
    )


def alembic_config(conn: Connection | None = None) -> Config:
    """An Alembic Config that needs no ini file; `conn` is the connection env.py will use."""
    from alembic.config import Config

    cfg = Config()
    # Config is a ConfigParser: a literal % in the path must be doubled.
    cfg.set_main_option("script_location", str(migrations_dir()).replace("%", "%%"))
    if conn is not None:
        cfg.attributes["connection"] = conn
    return cfg


@cache
def head_revision() -> str:
    """The revision this eventsched's code expects, as Alembic reads the scripts."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise EventStoreError(f"no migration found in {migrations_dir()}")
    return head


def _known_revision(revision: str) -> bool:
    """Exactly one of our revisions (Alembic's lookup would also accept a prefix)."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config())
    return any(s.revision == revision for s in script.walk_revisions())


def upgrade(url_or_engine: str | Engine, revision: str = "head") -> None:
    """Bring the schema to `revision` (default: this eventsched's head), in one transaction.

    Safe to run concurrently from several replicas: on PostgreSQL env.py
    takes an advisory lock, on SQLite the transaction holds the write lock.
    """
    _run(url_or_engine, "upgrade", revision)


def downgrade(url_or_engine: str | Engine, revision: str) -> None:
    """Take the schema back to `revision` ("base" drops everything, events included)."""
    _run(url_or_engine, "downgrade", revision)


def _run(url_or_engine: str | Engine, direction: str, revision: str) -> None:
    from alembic import command

    owned = isinstance(url_or_engine, str)
    engine = create_engine(url_or_engine) if isinstance(url_or_engine, str) else url_or_engine
    url = display_url(engine)
    try:
        with connection(engine) as conn:
            before = _current(conn)
            try:
                with conn.begin():
                    cfg = alembic_config(conn)
                    if direction == "upgrade":
                        command.upgrade(cfg, revision)
                    else:
                        command.downgrade(cfg, revision)
            except SQLAlchemyError as exc:
                raise translate(exc, url, f"{direction} of the event log schema") from exc
            after = _current(conn)
        log.info("event log schema migrated", url=url, before=before, after=after)
    finally:
        if owned:
            engine.dispose()


def _current(conn: Connection) -> str | None:
    """The revision in Alembic's version table; None when there is no table or no row."""
    try:
        revisions: list[str] = []
        if inspect(conn).has_table(VERSION_TABLE):
            rows = conn.exec_driver_sql(f"SELECT version_num FROM {VERSION_TABLE}")
            revisions = [str(row[0]) for row in rows]
        if conn.in_transaction():
            conn.rollback()  # end the read; on SQLite it must not hold the write lock
    except SQLAlchemyError as exc:
        raise translate(exc, display_url(conn), "reading the schema revision") from exc
    if len(revisions) > 1:  # branches: our history is one line, so never written by us
        raise EventStoreError(
            f"the event log at {display_url(conn)} has several schema revisions "
            f"({', '.join(sorted(revisions))}); it was not migrated by eventsched"
        )
    return revisions[0] if revisions else None


def current_revision(engine: Engine) -> str | None:
    """The database's schema revision; None when it has no eventsched schema."""
    with connection(engine, read_only=True) as conn:
        return _current(conn)


def check_schema(engine: Engine | str) -> None:
    """Refuse a database whose schema is not this eventsched's, naming the command that fixes it."""
    if isinstance(engine, str):
        owned = create_engine(engine)
        try:
            check_schema(owned)
        finally:
            owned.dispose()
        return
    url = display_url(engine)
    current = current_revision(engine)
    if current == SCHEMA_HEAD:
        return
    needed = head_revision()
    fix = f"run `eventsched db upgrade --db {url}`"
    if current is None:
        message = f"the event log at {url} has no eventsched schema: {fix}"
    elif not _known_revision(current):
        message = (
            f"the event log schema at {url} is at revision {current}, which this eventsched "
            f"does not know (it needs {needed}): the database was upgraded by a newer "
            "eventsched; run that version, or upgrade this one"
        )
    else:
        message = f"the event log schema at {url} is at revision {current}, this eventsched needs {needed}: {fix}"
    raise SchemaOutdatedError(message, current, needed)
