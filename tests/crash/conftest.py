"""Fixtures for the crash tests: the API-server emulator and a fresh PostgreSQL database per test."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from tests.crash.harness import APPLICATION_NAME, ROOT


@pytest.fixture(scope="session")
def crash_template(postgres_server: str) -> Iterator[str]:
    """Name of a database whose schema `eventsched db upgrade` made: what each test copies.

    Copying it (CREATE DATABASE ... TEMPLATE) takes a fraction of a second;
    running the upgrade in a new process for every test took seconds.
    """
    name = f"eventsched_crash_template_{os.getpid()}_{secrets.token_hex(3)}"
    admin = sa.create_engine(postgres_server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    except sa.exc.DBAPIError as exc:
        admin.dispose()
        pytest.fail(f"cannot create a database for the crash tests on {postgres_server}: {exc}")
    try:
        url = make_url(postgres_server).set(database=name).render_as_string(hide_password=False)
        upgraded = subprocess.run(
            [sys.executable, "-m", "eventsched.cli.main", "--db", url, "db", "upgrade"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
        yield name
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def crash_db(postgres_server: str, crash_template: str) -> Iterator[str]:
    """URL of a new database of the test's own, at the current schema; dropped afterwards.

    A database, not a schema: the test installs a trigger and a setting in
    it, and the scheduler's sessions carry an `application_name` that tells
    them apart in pg_stat_activity.
    """
    name = f"eventsched_crash_{os.getpid()}_{secrets.token_hex(3)}"
    admin = sa.create_engine(postgres_server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}" TEMPLATE "{crash_template}"'))
        yield (
            make_url(postgres_server)
            .set(database=name)
            .update_query_dict({"application_name": APPLICATION_NAME})
            .render_as_string(hide_password=False)
        )
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def log_engine(crash_db: str) -> Iterator[sa.Engine]:
    """A connection pool to the test's database for the test's own queries (not the scheduler's)."""
    url = make_url(crash_db).update_query_dict({"application_name": "crash-test-observer"})
    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        yield engine
    finally:
        engine.dispose()
