"""A PostgreSQL primary and a streaming hot standby on loopback ports, made for one test.

The binaries are the installed server's (/usr/lib/postgresql/*/bin); PostgreSQL
refuses to run as root, so every command runs as the `postgres` user, in a
directory it owns. Durability settings that only matter for an operating
system crash (fsync) are off so that the pair is made in a few seconds; a
killed server process (`pg_ctl stop -m immediate`) loses nothing by that.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from tests.kube.test_kube_runner import free_port


def server_bin() -> Path | None:
    """The newest installed PostgreSQL's bin directory, if there is one with pg_basebackup."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_basebackup"))
    return Path(found[-1]).parent if found else None


def unavailable() -> str | None:
    """Why the pair cannot be made here (a skip reason), or None."""
    if server_bin() is None:
        return "no PostgreSQL server binaries under /usr/lib/postgresql"
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return "no postgres user to run the server as"
    if os.geteuid() != 0 and pwd.getpwuid(os.geteuid()).pw_name != "postgres":
        return "making the servers needs root (to run them as postgres) or the postgres user"
    return None


@functools.cache
def _initialised() -> Path:
    """One `initdb` per test session (it takes seconds), copied for every primary."""
    root = Path(tempfile.mkdtemp(prefix="eventsched-pgha-template-"))
    atexit.register(shutil.rmtree, root, True)
    _chown(root)
    data = root / "data"
    _as_postgres(
        [str(server_bin() / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-N"],
        cwd=root,
    )
    return data


def _chown(path: Path) -> None:
    user = pwd.getpwnam("postgres")
    os.chown(path, user.pw_uid, user.pw_gid)


def _as_postgres(command: list[str], cwd: Path, timeout: float = 60) -> str:
    if os.geteuid() == 0:
        command = ["runuser", "-u", "postgres", "--", *command]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, cwd=cwd, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr or done.stdout}")
    return done.stdout


@dataclass
class Server:
    data: Path
    port: int

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"


class ReplicatedPair:
    """A primary and a standby made with `pg_basebackup -R`; `synchronous` makes every
    commit wait for the standby to have flushed it (synchronous_standby_names='*')."""

    def __init__(self, *, synchronous: bool) -> None:
        self.synchronous = synchronous
        self.root = Path(tempfile.mkdtemp(prefix="eventsched-pgha-"))
        self.bin = server_bin()
        assert self.bin is not None
        self.primary = Server(self.root / "primary", free_port())
        self.standby = Server(self.root / "standby", free_port())
        _chown(self.root)

    def _run(self, tool: str, *args: str) -> str:
        return _as_postgres([str(self.bin / tool), *args], cwd=self.root)

    def _pg_ctl(self, server: Server, *args: str) -> None:
        self._run("pg_ctl", "-D", str(server.data), "-l", f"{server.data}.log", *args)

    # -- the pair -------------------------------------------------------------------

    def start(self) -> ReplicatedPair:
        _as_postgres(["cp", "-a", str(_initialised()), str(self.primary.data)], cwd=self.root)
        settings = {
            "listen_addresses": "'127.0.0.1'",
            "port": str(self.primary.port),
            "unix_socket_directories": f"'{self.root}'",
            "fsync": "off",
            "full_page_writes": "off",
            "wal_level": "replica",
            "max_wal_senders": "4",
            "hot_standby": "on",
            "wal_receiver_status_interval": "1s",
            "synchronous_commit": "on",
        }
        with (self.primary.data / "postgresql.conf").open("a") as conf:
            conf.writelines(f"{key} = {value}\n" for key, value in settings.items())
        self._pg_ctl(self.primary, "-w", "start")
        self._run(
            "pg_basebackup",
            *("-h", "127.0.0.1", "-p", str(self.primary.port), "-U", "postgres"),
            *("-D", str(self.standby.data), "-R", "-X", "stream", "--checkpoint=fast"),
        )
        with (self.standby.data / "postgresql.auto.conf").open("a") as conf:
            conf.write(f"port = {self.standby.port}\n")
        if self.synchronous:
            # The primary's alone: a promoted standby with no standby of its own that
            # kept it would wait for one at every commit.
            with (self.primary.data / "postgresql.auto.conf").open("a") as conf:
                conf.write("synchronous_standby_names = '*'\n")
            self._pg_ctl(self.primary, "reload")
        self._pg_ctl(self.standby, "-w", "start")
        self.wait_streaming()
        return self

    def wait_streaming(self, timeout: float = 20) -> None:
        """Until the primary sees the standby streaming (and, synchronous, as its sync standby)."""
        wanted = "sync" if self.synchronous else "async"
        engine = sa.create_engine(self.primary.url())
        deadline = time.monotonic() + timeout
        try:
            while True:
                with engine.connect() as conn:
                    states = conn.exec_driver_sql(
                        "SELECT state, sync_state FROM pg_stat_replication"
                    ).all()
                if ("streaming", wanted) in [tuple(row) for row in states]:
                    return
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the standby is not streaming ({wanted}): {states}")
                time.sleep(0.05)
        finally:
            engine.dispose()

    def multihost_url(self, database: str = "postgres", **query: str) -> str:
        """The libpq multi-host URL that follows the primary (target_session_attrs=read-write)."""
        hosts = f"127.0.0.1:{self.primary.port},127.0.0.1:{self.standby.port}"
        params = "&".join(
            f"{k}={v}" for k, v in {"target_session_attrs": "read-write", **query}.items()
        )
        return f"postgresql+psycopg://postgres@{hosts}/{database}?{params}"

    def kill_primary(self) -> None:
        """The primary's server dies at once, as a lost machine's would."""
        self._pg_ctl(self.primary, "stop", "-m", "immediate")

    def stop_standby_replication(self) -> None:
        """The standby stops receiving WAL (what it has stays): the tail the primary writes
        from now on is what an asynchronous failover loses."""
        with (self.standby.data / "postgresql.auto.conf").open("a") as conf:
            conf.write("primary_conninfo = ''\n")
        self._pg_ctl(self.standby, "reload")
        engine = sa.create_engine(self.primary.url())
        deadline = time.monotonic() + 20
        try:
            while True:
                with engine.connect() as conn:
                    streaming = conn.exec_driver_sql("SELECT count(*) FROM pg_stat_replication")
                    if streaming.scalar_one() == 0:
                        return
                if time.monotonic() > deadline:
                    raise TimeoutError("the standby still streams after primary_conninfo = ''")
                time.sleep(0.05)
        finally:
            engine.dispose()

    def promote_standby(self) -> None:
        self._run("pg_ctl", "-D", str(self.standby.data), "-w", "promote")

    def close(self) -> None:
        for server in (self.standby, self.primary):
            if (server.data / "postmaster.pid").exists():
                with contextlib.suppress(RuntimeError):
                    self._pg_ctl(server, "stop", "-m", "immediate")
        shutil.rmtree(self.root, ignore_errors=True)
