"""A small filesystem for PostgreSQL to fill: a tmpfs of a given size, mounted for the
run, holding a tablespace the benchmark's database is created in; a filler file takes
every byte left on it, and removing it frees them again.

Needs root on the machine PostgreSQL runs on (mount, and a directory the server's user
owns): the scenario refuses, saying so, elsewhere.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pwd
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from eventsched.benchmarks.failover.postgres import LOCAL


@dataclass(frozen=True, slots=True)
class SmallDisk:
    """The mounted filesystem and the tablespace on it."""

    mount: Path
    tablespace: str

    @property
    def filler(self) -> Path:
        return self.mount / "filler"

    def fill(self) -> int:
        """Write the filler until the filesystem is full; the bytes it took."""
        with self.filler.open("wb", buffering=0) as out:
            return _write_until_full(out, 1 << 20) + _write_until_full(out, 4096)

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)


@contextlib.contextmanager
def small_disk(server: str, mib: int) -> Iterator[SmallDisk]:
    """A tmpfs of `mib` MiB owned by PostgreSQL's user, and a tablespace on it (dropped,
    then unmounted, afterwards: drop the databases in it first)."""
    if make_url(server).host not in LOCAL:
        raise ValueError(
            "disk-full mounts a filesystem for the local PostgreSQL; --server is elsewhere"
        )
    if os.geteuid() != 0:
        raise PermissionError(
            "disk-full mounts a tmpfs for PostgreSQL's tablespace: run it as root"
        )
    mount = Path(f"/tmp/eventsched-diskfull-{os.getpid()}")
    mount.mkdir(mode=0o700)
    try:
        _mount(mount, mib)
        try:
            owner = pwd.getpwnam("postgres")
            os.chown(mount, owner.pw_uid, owner.pw_gid)
            (mount / "pg").mkdir()
            os.chown(mount / "pg", owner.pw_uid, owner.pw_gid)
            name = f"eventsched_diskfull_{os.getpid()}"
            with _tablespace(server, name, mount / "pg"):
                yield SmallDisk(mount, name)
        finally:
            _run("umount", "--lazy", str(mount))
    finally:
        mount.rmdir()


@contextlib.contextmanager
def _tablespace(server: str, name: str, location: Path) -> Iterator[None]:
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f"CREATE TABLESPACE \"{name}\" LOCATION '{location}'"))
        try:
            yield
        finally:
            with admin.connect() as conn:
                conn.execute(sa.text(f'DROP TABLESPACE IF EXISTS "{name}"'))
    finally:
        admin.dispose()


def _mount(mount: Path, mib: int) -> None:
    try:
        _run("mount", "-t", "tmpfs", "-o", f"size={mib}m,mode=0700", "tmpfs", str(mount))
    except RuntimeError as e:
        raise PermissionError(f"disk-full could not mount a tmpfs ({e})") from e


def _write_until_full(out: BinaryIO, size: int) -> int:
    written = 0
    block = b"\0" * size
    try:
        while True:
            written += out.write(block) or 0
    except OSError as e:
        if e.errno != errno.ENOSPC:
            raise
    return written


def _run(*argv: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()}")
