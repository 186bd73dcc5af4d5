"""The child processes a benchmark runs (etcd, kube-apiserver, the schedulers, PostgreSQL):
starting one with its output in a log, a free loopback port for it, its CPU time, the end of
its log for an error message."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_CLK_TCK = os.sysconf("SC_CLK_TCK")


def process_cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process from /proc, None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def process_peak_rss_bytes(pid: int) -> int | None:
    """The process's peak resident set so far (VmHWM from /proc), None when it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return None


def log_tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"({path.name}: no log)"
    return f"--- {path.name} ---\n" + "\n".join(text.splitlines()[-lines:])


def spawn_logged(
    argv: list[str],
    log: Path,
    cwd: Path | None = None,
    cpus: frozenset[int] | None = None,
) -> subprocess.Popen[bytes]:
    """A child process writing stdout and stderr to `log`, in a session of its own.

    Its own session: a Ctrl-C reaches only us, and we stop the children in order.
    `cpus`: the CPUs it may run on, set before it starts (as `taskset -c` does), so that
    a Go program's GOMAXPROCS and a Python program's threads see only those.
    """

    def pin() -> None:
        if cpus is not None:
            os.sched_setaffinity(0, cpus)

    with log.open("ab") as out:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=pin if cpus is not None else None,
        )
