"""The scheduler under test as a process on a real control plane, for every `bench --kube`
benchmark: its configuration and log, starting and stopping it, and one timed run.

A timed run (`timed_run`) starts the scheduler as a separate process and watches the pods
of one namespace (a watch with ``fieldSelector=spec.nodeName!=``: each ADDED event is one
bind) until the expected number are bound. Measured: first bind to last bind (pods/s =
pods / that), scheduler start to last bind, the scheduler process's CPU (user+system from
/proc) and its peak resident set (VmHWM), kube-apiserver's and etcd's CPU from scheduler
start to last bind, and for eventsched on PostgreSQL the CPU of every process named
``postgres`` on the machine over the same interval (machine-wide: whatever else uses that
server is counted).

eventsched's modules are compiled to bytecode before the first run, as `pip install`
leaves an installed package (and the image): a checkout run with PYTHONDONTWRITEBYTECODE
would otherwise compile every module from source at every start, about 0.2 s of CPU that
no installed scheduler pays.
"""

from __future__ import annotations

import compileall
import contextlib
import functools
import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eventsched.benchmarks.bindwatch import BindWatch, wait_for_bound
from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.kubebinaries import KubeBinaries
from eventsched.benchmarks.kuberesults import EVENTSCHED, KUBE_SCHEDULER, KubeBenchResult, RunResult
from eventsched.benchmarks.processes import (
    free_port,
    process_cpu_seconds,
    process_peak_rss_bytes,
    spawn_logged,
)

#: schedulerName of each scheduler's pods
SCHEDULER_NAMES = {EVENTSCHED: "eventsched", KUBE_SCHEDULER: "default-scheduler"}


def postgres_cpu() -> dict[int, float]:
    """utime+stime of every process named `postgres` on the machine (that we may read), by pid."""
    found: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        if stat[stat.index("(") + 1 : stat.rindex(")")].startswith("postgres"):
            fields = stat[stat.rindex(")") + 2 :].split()
            found[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
    return found


def postgres_cpu_since(before: dict[int, float]) -> float:
    """CPU the `postgres` processes used since `before` (processes started since count whole;
    those that exited since are missing)."""
    return sum(cpu - before.get(pid, 0.0) for pid, cpu in postgres_cpu().items())


def scheduler_config(
    path: Path,
    name: str,
    qps: float,
    burst: int,
    kubeconfig: Path,
    percentage_of_nodes_to_score: int | None = None,
    leader_elect: bool = False,
) -> Path:
    """The scheduler's configuration file; `leader_elect`: on its default Lease (the
    Lease's defaults: 15 s duration, 10 s renew deadline, 2 s retry period)."""
    config: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": qps, "burst": burst},
        "leaderElection": {"leaderElect": leader_elect},
        "profiles": [{"schedulerName": name}],
    }
    if percentage_of_nodes_to_score is not None:
        config["percentageOfNodesToScore"] = percentage_of_nodes_to_score
    path.write_text(json.dumps(config, indent=2) + "\n")  # JSON is YAML
    return path


@contextlib.contextmanager
def fresh_database(url: str | None, workdir: Path, run: int) -> Iterator[tuple[str, str]]:
    """(URL for eventsched, what to print): a fresh SQLite file, or a fresh PostgreSQL schema
    (selected through search_path) in the given database, dropped afterwards."""
    if url is None or url.startswith("sqlite"):
        path = workdir / f"eventsched-{run}.db"
        yield f"sqlite:///{path}", "SQLite"
        return
    import sqlalchemy as sa
    from sqlalchemy.engine import make_url

    schema = f"eventsched_bench_{os.getpid()}_{run}_{secrets.token_hex(3)}"
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        scoped = make_url(url).update_query_dict({"options": f"-csearch_path={schema}"})
        try:
            yield scoped.render_as_string(hide_password=False), "PostgreSQL"
        finally:
            with engine.begin() as conn:
                conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    finally:
        engine.dispose()


def eventsched_command(events_url: str) -> list[str]:
    """The CLI of this installation on the benchmark's log (the command's words follow)."""
    return [sys.executable, "-m", "eventsched.cli.main", "--db", events_url]


def upgrade_database(events_url: str) -> None:
    """`eventsched db upgrade` on the benchmark's log, as a user would run it first."""
    upgrade = subprocess.run(
        [*eventsched_command(events_url), "db", "upgrade"],
        capture_output=True,
        text=True,
    )
    if upgrade.returncode != 0:
        raise RuntimeError(f"eventsched db upgrade failed: {upgrade.stderr.strip()}")


def _count_events(url: str) -> int | None:
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(sa.text("SELECT count(*) FROM events")).scalar_one())
    except Exception:
        return None
    finally:
        engine.dispose()


def stop_process(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


@functools.cache
def bytecode_compiled() -> bool:
    """Compile eventsched's modules to bytecode where they lie, and keep the methods their
    dataclasses generate (eventsched/_dataclasscache.py), as the container image's build
    does; False where that failed, e.g. a read-only installation, which pip compiled
    already."""
    import eventsched

    package = Path(eventsched.__file__).parent
    with contextlib.redirect_stdout(None):
        compiled = bool(compileall.compile_dir(package, quiet=2, workers=1))
    kept = subprocess.run(
        [sys.executable, "-m", "eventsched._dataclasscache"], capture_output=True, check=False
    )
    return compiled and kept.returncode == 0


def _cpu_at_first_bind(
    watch: BindWatch, proc: subprocess.Popen[bytes], deadline: float
) -> float | None:
    """The scheduler's CPU seconds when the watch first sees a pod bound; None when the
    scheduler exits, the watch ends or the deadline passes first (the loop that follows
    says which)."""
    if wait_for_bound(watch, proc, deadline) is not None:
        return None
    return process_cpu_seconds(proc.pid)


def start_scheduler(
    scheduler: str,
    cp: ControlPlane,
    config: Path,
    events_url: str | None,
    log: Path,
    cpus: frozenset[int] | None = None,
    leader_elect: bool = False,
) -> subprocess.Popen[bytes]:
    """`eventsched run` (on the log at `events_url`, its output in `log`) or kube-scheduler
    (its output in the control plane's kube-scheduler.log) with the given configuration;
    on the CPUs `cpus` only, when given; `leader_elect`: it takes its Lease first."""
    if scheduler != EVENTSCHED:
        return cp.start_kube_scheduler(config, cpus=cpus, leader_elect=leader_elect)
    if events_url is None:
        raise ValueError("eventsched needs its log's URL")
    bytecode_compiled()
    http = f"127.0.0.1:{free_port()}"
    argv = [
        *eventsched_command(events_url), "run", "--config", str(config),
        "--kubeconfig", str(cp.kubeconfig()),
        "--leader-elect", "true" if leader_elect else "false",
        "--http-address", http, "--secure-port", "0",
    ]  # fmt: skip
    return spawn_logged(argv, log, cpus=cpus)


@dataclass(frozen=True, slots=True)
class TimedRun:
    """What one timed run starts and waits for."""

    scheduler: str
    round: int
    nodes: int
    #: Pods of `namespace` to wait for (bound before the start included).
    pods: int
    namespace: str
    config: Path
    #: eventsched's log, and what to call it ("SQLite", "PostgreSQL"); None for kube-scheduler.
    events_url: str | None = None
    database: str | None = None
    #: The CPUs the scheduler may run on (None: every CPU).
    cpus: frozenset[int] | None = None


def timed_run(
    cp: ControlPlane,
    run: TimedRun,
    timeout: float,
    on_progress: Callable[[int], None] | None = None,
) -> RunResult:
    """Start the scheduler, wait until `run.pods` pods of `run.namespace` are bound (or it
    exits, or `timeout` passes), stop it; its figures, with `error` set when not all were
    bound."""
    with contextlib.ExitStack() as stack:
        watch = BindWatch(cp, run.namespace)
        stack.callback(watch.close)
        if run.scheduler == EVENTSCHED:
            bytecode_compiled()
        postgres_before = postgres_cpu() if run.database == "PostgreSQL" else None
        cpu_before = cp.cpu_seconds()
        started = time.monotonic()
        log = cp.workdir / f"{run.scheduler}-run-{run.round}.log"
        proc = start_scheduler(run.scheduler, cp, run.config, run.events_url, log, run.cpus)
        if run.scheduler != EVENTSCHED:
            log = cp.workdir / "kube-scheduler.log"
        stack.callback(stop_process, proc)
        watch.start(run.pods)
        deadline = started + timeout
        first_bind_cpu = _cpu_at_first_bind(watch, proc, deadline)
        error = _wait_all_bound(watch, proc, run, log, timeout, started, on_progress)
        process_cpu = process_cpu_seconds(proc.pid) or 0.0
        peak_rss = process_peak_rss_bytes(proc.pid)
        pinned = _affinity(proc.pid) if run.cpus is not None else None
        cpu_after = cp.cpu_seconds()
        postgres = postgres_cpu_since(postgres_before) if postgres_before is not None else None
        if on_progress is not None:
            on_progress(len(watch.bound))
        times = sorted(watch.bound.values())
        first, last = (times[0], times[-1]) if times else (started, started)
        seconds = last - first
        bound = len(times)
        events = _count_events(run.events_url) if run.events_url is not None else None
        return RunResult(
            scheduler=run.scheduler,
            round=run.round,
            nodes=run.nodes,
            pods=run.pods,
            bound=bound,
            seconds=seconds,
            pods_per_second=bound / seconds if seconds > 0 else 0.0,
            from_start_seconds=last - started if times else 0.0,
            scheduler_cpu_seconds=process_cpu,
            cpu_ms_per_pod=1000 * process_cpu / max(bound, 1),
            apiserver_cpu_seconds=cpu_after["kube-apiserver"] - cpu_before["kube-apiserver"],
            etcd_cpu_seconds=cpu_after["etcd"] - cpu_before["etcd"],
            postgres_cpu_seconds=postgres,
            database=run.database,
            events=events,
            watch_restarts=watch.restarts,
            error=error,
            first_bind_cpu_seconds=first_bind_cpu,
            peak_rss_mb=None if peak_rss is None else peak_rss / 2**20,
            scheduler_cpus=pinned,
        )
    raise AssertionError("unreachable")


def _affinity(pid: int) -> list[int] | None:
    """The CPUs the process may run on, as the kernel has them (None when it is gone)."""
    try:
        return sorted(os.sched_getaffinity(pid))
    except OSError:
        return None


def wait_all_bound(
    watch: BindWatch,
    proc: subprocess.Popen[bytes],
    timeout: float,
    on_progress: Callable[[int], None] | None = None,
) -> None:
    """Until the watch has seen every pod it expects bound; RuntimeError saying why not (the
    scheduler exited, the deadline passed, the watch failed)."""
    deadline = time.monotonic() + timeout
    while not watch.done.wait(0.05):
        if on_progress is not None:
            on_progress(len(watch.bound))
        if proc.poll() is not None:
            raise RuntimeError(f"the scheduler exited with status {proc.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out with {len(watch.bound)} of {watch.expected} bound")
    if watch.error is not None:
        raise RuntimeError(f"watch failed: {watch.error!r}")


def _wait_all_bound(
    watch: BindWatch,
    proc: subprocess.Popen[bytes],
    run: TimedRun,
    log: Path,
    timeout: float,
    started: float,
    on_progress: Callable[[int], None] | None,
) -> str | None:
    """Wait for the watch to see every pod bound; why not, if it did not."""
    deadline = started + timeout
    while not watch.done.wait(0.2):
        if on_progress is not None:
            on_progress(len(watch.bound))
        if proc.poll() is not None:
            return f"{run.scheduler} exited with status {proc.returncode}: {_tail(log)}"
        if time.monotonic() > deadline:
            return f"timed out after {timeout:.0f} s with {len(watch.bound)} of {run.pods} bound"
    if len(watch.bound) < run.pods:
        return f"watch failed with {len(watch.bound)} of {run.pods} bound: {watch.error!r}"
    return None


def alternate(
    binaries: KubeBinaries,
    result: KubeBenchResult,
    measure_one: Callable[[str, int, Callable[[int], None] | None], RunResult],
    *,
    label: str = "",
    on_run: Callable[[RunResult], None] | None = None,
    progress: Callable[[str], Callable[[int], None]] | None = None,
) -> KubeBenchResult:
    """result.rounds x (eventsched, kube-scheduler when its binary is present), alternating:
    `measure_one(scheduler, round, on_progress)` is one run; each is added to `result` and
    given to `on_run` as it ends. progress(description) returns a run's progress callback."""
    schedulers = [EVENTSCHED] + ([KUBE_SCHEDULER] if binaries.scheduler is not None else [])
    for round_ in range(1, result.rounds + 1):
        for scheduler in schedulers:
            description = f"{label}{scheduler} round {round_}"
            outcome = measure_one(scheduler, round_, progress(description) if progress else None)
            result.runs.append(outcome)
            if on_run is not None:
                on_run(outcome)
    return result


def database_name(db_url: str | None) -> str:
    """What eventsched's log is on: PostgreSQL for a PostgreSQL URL, else SQLite."""
    return "PostgreSQL" if db_url and not db_url.startswith("sqlite") else "SQLite"
