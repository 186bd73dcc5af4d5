"""eventsched against kube-scheduler on a real control plane (etcd + kube-apiserver).

Run by `eventsched bench --kube`. Each run gets a fresh control plane (its own etcd data
and kube-apiserver, so nothing is left over from the previous run and the API server's CPU
is that run's alone), N ready nodes and M pending pods created BEFORE the scheduler starts;
then the scheduler under test starts as a separate process and the benchmark watches the
pods (a watch with ``fieldSelector=spec.nodeName!=``: each ADDED event is one bind) until
all M are bound. Runs alternate: eventsched, kube-scheduler, eventsched, ...

Measured per run: first bind to last bind (pods/s = M / that), scheduler start to last
bind, the scheduler process's CPU (user+system from /proc), kube-apiserver's and etcd's CPU
from scheduler start to last bind, and for eventsched on PostgreSQL the CPU of every
process named ``postgres`` on the machine over the same interval (machine-wide: whatever
else uses that server is counted).

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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import kubernetes.client

from eventsched.benchmarks.bindwatch import BindWatch, wait_for_bound
from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.kubebinaries import KubeBinaries
from eventsched.benchmarks.kuberesults import EVENTSCHED, KUBE_SCHEDULER, KubeBenchResult, RunResult
from eventsched.benchmarks.processes import free_port, process_cpu_seconds, spawn_logged

NAMESPACE = "bench"
ZONES = ("zone-a", "zone-b", "zone-c")

#: schedulerName of each scheduler's pods
SCHEDULER_NAMES = {EVENTSCHED: "eventsched", KUBE_SCHEDULER: "default-scheduler"}


# -- measuring --------------------------------------------------------------------------------


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


def _nodes(count: int) -> list[dict[str, Any]]:
    resources = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    return [
        {
            "metadata": {
                "name": f"node-{i:05d}",
                "labels": {
                    "kubernetes.io/hostname": f"node-{i:05d}",
                    "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    "topology.kubernetes.io/zone": ZONES[i % len(ZONES)],
                },
            },
            "status": {"capacity": resources, "allocatable": resources},
        }
        for i in range(count)
    ]


def _pod(name: str, scheduler_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": "bench"}},
        "spec": {
            "schedulerName": scheduler_name,
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}},
                }
            ],
        },
    }


def _create_pods(cp: ControlPlane, count: int, scheduler_name: str) -> None:
    client = cp.api_client()
    try:
        core: Any = kubernetes.client.CoreV1Api(client)
        core.create_namespace(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
            _preload_content=False,
        )

        def create(i: int) -> None:
            core.create_namespaced_pod(
                NAMESPACE, _pod(f"pod-{i:05d}", scheduler_name), _preload_content=False
            )

        with ThreadPoolExecutor(max_workers=8) as pool:
            for _ in pool.map(create, range(count)):
                pass
    finally:
        client.close()


def scheduler_config(
    path: Path,
    name: str,
    qps: float,
    burst: int,
    kubeconfig: Path,
    percentage_of_nodes_to_score: int | None = None,
) -> Path:
    config: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": qps, "burst": burst},
        "leaderElection": {"leaderElect": False},
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
    """Compile eventsched's modules to bytecode where they lie (False where that failed,
    e.g. a read-only installation, which pip compiled already)."""
    import eventsched

    package = Path(eventsched.__file__).parent
    with contextlib.redirect_stdout(None):
        return bool(compileall.compile_dir(package, quiet=2, workers=1))


def measure(
    binaries: KubeBinaries,
    scheduler: str,
    round_: int,
    nodes: int,
    pods: int,
    qps: float,
    burst: int,
    db_url: str | None,
    timeout: float,
    on_progress: Callable[[int], None] | None = None,
) -> RunResult:
    """One run on a fresh control plane."""
    proc: subprocess.Popen[bytes] | None = None
    watch: BindWatch | None = None
    with contextlib.ExitStack() as stack:
        cp: ControlPlane = stack.enter_context(ControlPlane(binaries))
        workdir = cp.workdir
        cp.make_ready_nodes(_nodes(nodes))
        _create_pods(cp, pods, SCHEDULER_NAMES[scheduler])
        kubeconfig = cp.kubeconfig()
        config = scheduler_config(
            workdir / f"{scheduler}.yaml", SCHEDULER_NAMES[scheduler], qps, burst, kubeconfig
        )
        database = events_url = None
        if scheduler == EVENTSCHED:
            events_url, database = stack.enter_context(fresh_database(db_url, workdir, round_))
            upgrade_database(events_url)
        watch = BindWatch(cp, NAMESPACE)
        stack.callback(watch.close)
        log = workdir / f"{scheduler}-run.log"
        if scheduler == EVENTSCHED:
            bytecode_compiled()
        postgres_before = postgres_cpu() if database == "PostgreSQL" else None
        cpu_before = cp.cpu_seconds()
        started = time.monotonic()
        if scheduler == EVENTSCHED:
            assert events_url is not None
            http = f"127.0.0.1:{free_port()}"
            argv = [
                *eventsched_command(events_url), "run", "--config", str(config), "--kubeconfig", str(kubeconfig),
                "--leader-elect", "false", "--http-address", http, "--secure-port", "0",
            ]  # fmt: skip
            proc = spawn_logged(argv, log)
        else:
            proc = cp.start_kube_scheduler(config)
            log = workdir / "kube-scheduler.log"
        stack.callback(stop_process, proc)
        watch.start(pods)
        error: str | None = None
        deadline = started + timeout
        first_bind_cpu = _cpu_at_first_bind(watch, proc, deadline)
        while not watch.done.wait(0.2):
            if on_progress is not None:
                on_progress(len(watch.bound))
            if proc.poll() is not None:
                error = f"{scheduler} exited with status {proc.returncode}: {_tail(log)}"
                break
            if time.monotonic() > deadline:
                error = f"timed out after {timeout:.0f} s with {len(watch.bound)} of {pods} bound"
                break
        if error is None and len(watch.bound) < pods:
            error = f"watch failed with {len(watch.bound)} of {pods} bound: {watch.error!r}"
        process_cpu = process_cpu_seconds(proc.pid) or 0.0
        cpu_after = cp.cpu_seconds()
        postgres = postgres_cpu_since(postgres_before) if postgres_before is not None else None
        if on_progress is not None:
            on_progress(len(watch.bound))
        times = sorted(watch.bound.values())
        first, last = (times[0], times[-1]) if times else (started, started)
        seconds = last - first
        bound = len(times)
        events = _count_events(events_url) if events_url is not None else None
        return RunResult(
            scheduler=scheduler,
            round=round_,
            nodes=nodes,
            pods=pods,
            bound=bound,
            seconds=seconds,
            pods_per_second=bound / seconds if seconds > 0 else 0.0,
            from_start_seconds=last - started if times else 0.0,
            scheduler_cpu_seconds=process_cpu,
            cpu_ms_per_pod=1000 * process_cpu / max(bound, 1),
            apiserver_cpu_seconds=cpu_after["kube-apiserver"] - cpu_before["kube-apiserver"],
            etcd_cpu_seconds=cpu_after["etcd"] - cpu_before["etcd"],
            postgres_cpu_seconds=postgres,
            database=database,
            events=events,
            watch_restarts=watch.restarts,
            error=error,
            first_bind_cpu_seconds=first_bind_cpu,
        )
    raise AssertionError("unreachable")


def _cpu_at_first_bind(
    watch: BindWatch, proc: subprocess.Popen[bytes], deadline: float
) -> float | None:
    """The scheduler's CPU seconds when the watch first sees a pod bound; None when the
    scheduler exits, the watch ends or the deadline passes first (the loop that follows
    says which)."""
    if wait_for_bound(watch, proc, deadline) is not None:
        return None
    return process_cpu_seconds(proc.pid)


def run(
    binaries: KubeBinaries,
    nodes: int,
    pods: int,
    *,
    qps: float = 5000,
    burst: int = 5000,
    db_url: str | None = None,
    rounds: int = 1,
    timeout: float | None = None,
    on_run: Callable[[RunResult], None] | None = None,
    progress: Callable[[str], Callable[[int], None]] | None = None,
) -> KubeBenchResult:
    """rounds x (eventsched, kube-scheduler when its binary is present), alternating.

    db_url: eventsched's log (a PostgreSQL database in which a fresh schema is made per run),
    else a fresh SQLite file per run. progress(description) returns a callback given the
    number of pods bound so far; on_run is called with each run's result as it ends.
    """
    schedulers = [EVENTSCHED] + ([KUBE_SCHEDULER] if binaries.scheduler is not None else [])
    database = "PostgreSQL" if db_url and not db_url.startswith("sqlite") else "SQLite"
    result = KubeBenchResult(nodes, pods, qps, burst, rounds, database)
    limit = timeout if timeout is not None else max(120.0, pods / 5)
    for round_ in range(1, rounds + 1):
        for scheduler in schedulers:
            callback = progress(f"{scheduler} round {round_}") if progress else None
            outcome = measure(
                binaries, scheduler, round_, nodes, pods, qps, burst, db_url, limit, callback
            )
            result.runs.append(outcome)
            if on_run is not None:
                on_run(outcome)
    return result


__all__ = ["KubeBenchResult", "RunResult", "measure", "run"]
