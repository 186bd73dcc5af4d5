"""A restart at scale on a real control plane: seconds from a scheduler's start to its first
bind, when the cluster already holds N nodes and M pods the scheduler placed before.

    EVENTSCHED_KUBE_BIN=DIR eventsched bench --kube --restarts 3 [--nodes 5000 --pods 10000] \\
        [--late 10] [--db postgresql+psycopg://...] [--json]

(or `python -m eventsched.benchmarks.kube_restart`, with the same options and
`--schedulers`).

For each scheduler (eventsched, then kube-scheduler when its binary is there), on a fresh
control plane: N ready nodes and M pending pods; the scheduler starts and binds all M
(not measured); it is stopped (SIGTERM), `--late` new pending pods are created, and the
same scheduler starts again on the same cluster (eventsched on the same log). Measured:
the second start to the first bind of a late pod, and for eventsched the events its
restart appended up to its first decision to bind (by kind: what a restart logs again)
and the log's events in all.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import kubernetes.client

from eventsched.benchmarks import kube, kube_runs
from eventsched.benchmarks.bindwatch import BindWatch, wait_for_bound
from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.kubebinaries import KubeBinaries, kube_binaries
from eventsched.benchmarks.kuberesults import EVENTSCHED, KUBE_SCHEDULER
from eventsched.benchmarks.processes import process_cpu_seconds


@dataclass(slots=True)
class RestartResult:
    scheduler: str
    nodes: int
    pods: int
    late: int
    #: The first start to the last of the M binds (not the figure measured, shown for scale).
    first_run_seconds: float
    #: The second start to the first bind of a late pod.
    restart_to_first_bind_seconds: float
    #: With --restarts K: each restart's figure, the first being the one above.
    restarts: list[float] = field(default_factory=list)
    #: Each restart's CPU seconds (user + system, from /proc) up to that first bind.
    restart_cpu_seconds: list[float] = field(default_factory=list)
    #: eventsched: events its second start appended up to its first decision to bind (the
    #: first `permitted`), by kind.
    relogged: dict[str, int] = field(default_factory=dict)
    log_events: int | None = None
    error: str | None = None

    def line(self) -> str:
        relogged = ", ".join(f"{k} {n}" for k, n in sorted(self.relogged.items())) or "-"
        return (
            f"{self.scheduler}: restart to first bind "
            f"{', '.join(f'{t:.2f}' for t in self.restarts) or '-'} s "
            f"(CPU {', '.join(f'{c:.2f}' for c in self.restart_cpu_seconds) or '-'} s; "
            f"{self.nodes} nodes, {self.pods} pods placed before; "
            f"first run {self.first_run_seconds:.1f} s); "
            f"appended up to its first decision: {relogged}"
            + (f"; error: {self.error}" if self.error else "")
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Launch:
    """How every start of the scheduler under test is made."""

    scheduler: str
    config: Path
    #: eventsched's log (None for kube-scheduler).
    events_url: str | None
    #: It takes its Lease before it schedules (as deployed), else it schedules at once.
    leader_elect: bool = False

    def start(self, cp: ControlPlane, log: Path) -> subprocess.Popen[bytes]:
        return kube_runs.start_scheduler(
            self.scheduler, cp, self.config, self.events_url, log, leader_elect=self.leader_elect
        )


@dataclass(slots=True)
class Restarted:
    """One restart: seconds to the first bind; for eventsched, the events it appended up to
    its first decision to bind, by kind, and the log's events in all."""

    seconds: float
    cpu_seconds: float
    relogged: dict[str, int] = field(default_factory=dict)
    log_events: int | None = None


def _cpu_at_first_bind(
    watch: BindWatch, proc: subprocess.Popen[bytes], prefix: str, deadline: float
) -> float:
    """The scheduler's CPU seconds when the watch first sees a pod named `prefix...` bound
    (read within about 5 ms of it)."""

    def late_bound(names: list[str]) -> bool:
        return any(name.startswith(prefix) for name in names)

    failed = wait_for_bound(watch, proc, deadline, late_bound, "no late pod bound")
    if failed is not None:
        raise RuntimeError(failed)
    return process_cpu_seconds(proc.pid) or 0.0


def _events_by_kind(url: str, after: int, before: int | None) -> tuple[dict[str, int], int]:
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            query = "SELECT kind, count(*) FROM events WHERE position > :after"
            params: dict[str, Any] = {"after": after}
            if before is not None:
                query += " AND position < :before"
                params["before"] = before
            kinds = {
                str(k): int(n) for k, n in conn.execute(sa.text(query + " GROUP BY kind"), params)
            }
            total = int(conn.execute(sa.text("SELECT count(*) FROM events")).scalar_one())
            return kinds, total
    finally:
        engine.dispose()


def _position(url: str, where: str = "", first: bool = False) -> int:
    """The last position (with `first`, the first) of the events `where` selects."""
    import sqlalchemy as sa

    edge = "min" if first else "max"

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return int(
                conn.execute(
                    sa.text(f"SELECT coalesce({edge}(position), 0) FROM events {where}")
                ).scalar_one()
            )
    finally:
        engine.dispose()


def measure(
    binaries: KubeBinaries,
    scheduler: str,
    nodes: int,
    pods: int,
    late: int = 10,
    db_url: str | None = None,
    timeout: float = 900.0,
    restarts: int = 1,
    on_progress: Callable[[int], None] | None = None,
    qps: float = 5000,
    burst: int = 5000,
    leader_elect: bool = False,
) -> RestartResult:
    """Place `pods` pods with `scheduler`, then restart it `restarts` times (each with `late`
    new pods); on_progress is given the pods bound so far while the first run places them;
    `leader_elect`: every start takes the scheduler's Lease first (each stop releases it).
    A run that fails is reported in the result's `error`."""
    result = RestartResult(scheduler, nodes, pods, late, 0.0, 0.0)
    name = kube_runs.SCHEDULER_NAMES[scheduler]
    with contextlib.ExitStack() as stack:
        cp: ControlPlane = stack.enter_context(ControlPlane(binaries))
        cp.make_ready_nodes(kube._nodes(nodes))
        kube._create_pods(cp, pods, name)
        config = kube_runs.scheduler_config(
            cp.workdir / f"{scheduler}.yaml",
            name,
            qps,
            burst,
            cp.kubeconfig(),
            leader_elect=leader_elect,
        )
        events_url = None
        if scheduler == EVENTSCHED:
            events_url, _ = stack.enter_context(kube_runs.fresh_database(db_url, cp.workdir, 1))
            kube_runs.upgrade_database(events_url)
            kube_runs.bytecode_compiled()
        launch = Launch(scheduler, config, events_url, leader_elect)
        watch = BindWatch(cp, kube.NAMESPACE)
        stack.callback(watch.close)
        started = time.monotonic()
        proc = launch.start(cp, cp.workdir / f"{scheduler}-1.log")
        stack.callback(kube_runs.stop_process, proc)
        watch.start(pods)
        try:
            kube_runs.wait_all_bound(watch, proc, timeout, on_progress)
        except RuntimeError as exc:
            result.error = f"placing the first {pods} pods: {exc}"
            return result
        result.first_run_seconds = max(watch.bound.values()) - started
        kube_runs.stop_process(proc)
        for round_ in range(restarts):
            restart = _restart(cp, launch, stack, round_, pods, late, timeout)
            if isinstance(restart, str):
                result.error = restart
                return result
            result.restarts.append(restart.seconds)
            result.restart_cpu_seconds.append(restart.cpu_seconds)
            if round_ == 0:
                result.restart_to_first_bind_seconds = restart.seconds
                result.relogged, result.log_events = restart.relogged, restart.log_events
    return result


def _restart(
    cp: ControlPlane,
    launch: Launch,
    stack: contextlib.ExitStack,
    round_: int,
    pods: int,
    late: int,
    timeout: float,
) -> Restarted | str:
    """Create `late` pending pods, start the scheduler again, time its first bind of one,
    wait for all of them, stop it; what went wrong instead, if it did."""
    scheduler, events_url = launch.scheduler, launch.events_url
    before = _position(events_url) if events_url else 0
    client = cp.api_client()
    try:
        core: Any = kubernetes.client.CoreV1Api(client)
        for i in range(late):
            core.create_namespaced_pod(
                kube.NAMESPACE,
                kube._pod(f"late-{round_}-{i:03d}", kube_runs.SCHEDULER_NAMES[scheduler]),
                _preload_content=False,
            )
    finally:
        client.close()
    again = BindWatch(cp, kube.NAMESPACE)
    stack.callback(again.close)
    restarted = time.monotonic()
    log = cp.workdir / f"{scheduler}-{round_ + 2}.log"
    proc = launch.start(cp, log)
    stack.callback(kube_runs.stop_process, proc)
    again.start(pods + (round_ + 1) * late)
    prefix = f"late-{round_}-"
    try:
        cpu = _cpu_at_first_bind(again, proc, prefix, restarted + timeout)
        kube_runs.wait_all_bound(again, proc, timeout)
    except RuntimeError as exc:
        return str(exc)
    first_late = min(t for n, t in again.bound.items() if n.startswith(prefix))
    restart = Restarted(first_late - restarted, cpu)
    if events_url is not None:
        # The decision is durable before its Binding is sent (its `bound` may not be
        # appended yet): what the restart appended up to the first `permitted`.
        permitted = _position(
            events_url, f"WHERE kind = 'permitted' AND position > {before}", first=True
        )
        restart.relogged, restart.log_events = _events_by_kind(events_url, before, permitted + 1)
    kube_runs.stop_process(proc)
    again.close()
    return restart


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--late", type=int, default=10)
    parser.add_argument("--db", metavar="URL")
    parser.add_argument("--kube-bin", metavar="DIR")
    parser.add_argument(
        "--restarts", type=int, default=1, help="restarts on the same cluster (and log), each timed"
    )
    parser.add_argument(
        "--schedulers",
        default=f"{EVENTSCHED},{KUBE_SCHEDULER}",
        help="which to measure, in order (comma-separated)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    binaries = kube_binaries(args.kube_bin)
    if binaries is None:
        parser.error("needs kube-apiserver in EVENTSCHED_KUBE_BIN or --kube-bin, and etcd on PATH")
    wanted = [s for s in args.schedulers.split(",") if s]
    schedulers = [s for s in wanted if s != KUBE_SCHEDULER or binaries.scheduler]
    for scheduler in schedulers:
        r = measure(
            binaries,
            scheduler,
            args.nodes,
            args.pods,
            args.late,
            args.db,
            restarts=args.restarts,
        )
        print(json.dumps(r.to_dict()) if args.json else r.line(), flush=True)


if __name__ == "__main__":
    main()
