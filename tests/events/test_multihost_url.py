"""libpq's multi-host URL (a primary and its standbys): accepted, passed to libpq, shown.

SQLAlchemy's URL parser takes one host only; eventsched rewrites the comma list
into repeated `host` query parameters, which SQLAlchemy's psycopg dialect turns
back into libpq's `host=a,b port=1,2`. Nothing here connects: the failover itself
is tests/faults/test_pg_failover.py.
"""

from __future__ import annotations

from eventsched.cli.database import resolve_url
from eventsched.events.engine import create_engine, display_url, parse_url

URL = "postgresql://eventsched:s%40cret@db-1:5432,db-2:5433/log?target_session_attrs=read-write"


def test_libpq_is_given_every_host_and_port() -> None:
    engine = create_engine(resolve_url(URL))
    try:
        _, params = engine.dialect.create_connect_args(engine.url)
    finally:
        engine.dispose()
    assert engine.dialect.driver == "psycopg"
    assert (params["host"], params["port"]) == ("db-1,db-2", "5432,5433")
    assert params["target_session_attrs"] == "read-write"
    assert (params["user"], params["password"], params["dbname"]) == ("eventsched", "s@cret", "log")


def test_shown_as_written_with_the_password_hidden() -> None:
    shown = "postgresql+psycopg://eventsched:***@db-1:5432,db-2:5433/log"
    assert display_url(resolve_url(URL)) == f"{shown}?target_session_attrs=read-write"
    assert display_url(parse_url(URL)) == f"{shown}?target_session_attrs=read-write"
    assert display_url("postgresql://db-1,db-2/log") == "postgresql://db-1,db-2/log"


def test_a_host_without_a_port_gets_libpq_s_default() -> None:
    engine = create_engine("postgresql+psycopg://u@db-1:5433,db-2/log")
    try:
        _, params = engine.dialect.create_connect_args(engine.url)
    finally:
        engine.dispose()
    assert (params["host"], params["port"]) == ("db-1,db-2", "5433,")
