"""The PostgreSQL side: a fresh database per scenario, restarting the local cluster, and
reading its log."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import make_url

#: The hosts of a --server on this machine.
LOCAL = (None, "", "127.0.0.1", "localhost", "::1")


@contextlib.contextmanager
def fresh_database(server: str, tablespace: str | None = None) -> Iterator[str]:
    """A new database eventsched_failover_<pid> on `server` (a URL to any database there),
    in `tablespace` if given, upgraded to the current schema; dropped (sessions ended)
    afterwards."""
    name = f"eventsched_failover_{os.getpid()}"
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            where = f' TABLESPACE "{tablespace}"' if tablespace else ""
            conn.execute(sa.text(f'CREATE DATABASE "{name}"{where}'))
        url = make_url(server).set(database=name).render_as_string(hide_password=False)
        _eventsched(url, "db", "upgrade")
        try:
            yield url
        finally:
            admin.dispose()  # the restart scenario left its pooled connections dead
            with admin.connect() as conn:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def _eventsched(url: str, *args: str) -> None:
    argv = [sys.executable, "-m", "eventsched.cli.main", "--db", url, *args]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"eventsched {' '.join(args)} failed: {done.stderr.strip()}")


def postgres_version() -> str:
    versions = sorted(os.listdir("/etc/postgresql"), key=lambda v: [int(p) for p in v.split(".")])
    return versions[-1]


def restart_postgres(down_seconds: float = 0.0) -> None:
    """`pg_ctlcluster ... restart`, or stop, `down_seconds`, start."""

    def ctl(action: str) -> None:
        argv = ["pg_ctlcluster", "--skip-systemctl-redirect", postgres_version(), "main", action]
        subprocess.run(argv, check=True, capture_output=True)

    if down_seconds <= 0:
        ctl("restart")
        return
    ctl("stop")
    time.sleep(down_seconds)
    ctl("start")


def postgres_log() -> Path:
    return Path(f"/var/log/postgresql/postgresql-{postgres_version()}-main.log")


_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) UTC ")
_PG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) UTC \[\d+\] LOG:  (.*)$")


def postgres_down(log: Iterable[str], since: float) -> tuple[float | None, float | None]:
    """(shutdown request, ready to accept connections) after `since` (Unix time) in the
    server's log, whose lines start with a UTC timestamp (Debian's log_line_prefix)."""
    down = up = None
    for line in log:
        match = _PG_LINE.match(line)
        if match is None:
            continue
        at = _unix(match[1])
        if at < since:
            continue
        if down is None and "shutdown request" in match[2]:
            down = at
        elif down is not None and "ready to accept connections" in match[2]:
            return down, at
    return down, up


def line_time(line: str) -> float | None:
    """The Unix time a line of the server's log is stamped with, if it is."""
    match = _STAMP.match(line)
    return None if match is None else _unix(match[1])


def _unix(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=UTC).timestamp()
