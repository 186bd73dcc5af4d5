"""Alembic environment for the event log.

The database comes from, in order: a Connection handed over in
`config.attributes["connection"]` (how `eventsched db upgrade` and the
tests run it), `-x db=URL`, `EVENTSCHED_DATABASE_URL`, `sqlalchemy.url`
in the ini file, and finally eventsched's default `sqlite:///eventsched.db`.
Engines are made by `eventsched.events.engine` so SQLite gets the same
settings as the store (WAL, busy timeout, BEGIN IMMEDIATE).
"""

from __future__ import annotations

import os
from logging.config import fileConfig

from alembic import context
from sqlalchemy import Connection, text

from eventsched.events.engine import create_engine, parse_url
from eventsched.events.partitions import is_partition_name
from eventsched.events.schema import metadata

DEFAULT_URL = "sqlite:///eventsched.db"
#: Arbitrary constant: the PostgreSQL advisory lock that serializes concurrent upgrades.
ADVISORY_LOCK = 0x65766E7473636864  # "evntschd"

config = context.config

if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def database_url() -> str:
    return (
        context.get_x_argument(as_dictionary=True).get("db")
        or os.environ.get("EVENTSCHED_DATABASE_URL")
        or config.get_main_option("sqlalchemy.url")
        or DEFAULT_URL
    )


def run_offline() -> None:
    """Emit SQL instead of running it (`alembic upgrade head --sql`)."""
    context.configure(
        url=parse_url(database_url()),
        target_metadata=metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def include_name(name: str | None, type_: str, parents: dict[str, str | None]) -> bool:
    """Autogenerate compares `events`, not its day partitions (or their indexes)."""
    if type_ == "table":
        return not is_partition_name(name)
    return not is_partition_name(parents.get("table_name"))


def run_on(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        include_name=include_name,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # Two replicas starting together must not both create the tables.
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK})
        context.run_migrations()


def run_online() -> None:
    given = config.attributes.get("connection")
    if given is not None:
        run_on(given)
        return
    engine = create_engine(database_url())
    try:
        with engine.connect() as connection:
            run_on(connection)
            if connection.in_transaction():
                connection.commit()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
