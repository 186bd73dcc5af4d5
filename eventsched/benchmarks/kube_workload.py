"""kube-scheduler's scheduler_perf workloads on a real control plane:
`eventsched bench --kube --workload NAME`.

Each run gets a fresh control plane, started as scheduler_perf starts its API server:
without the `ServiceAccount`, `TaintNodesByCondition`, `Priority` and
`StorageObjectInUseProtection` admission plugins (so the preemption workloads' pods may
set `spec.priority` without a PriorityClass). Then, as upstream runs a workload:

1. the nodes from the workload's node template (the zone labels of its
   `labelNodePrepareStrategy`), ready, and its namespaces;
2. the scheduler under test starts and places each init `createPods` op's pods, one op
   after the other, each to the end (not measured); it is stopped (SIGTERM);
3. the measured pods are created, pending;
4. the same scheduler starts again on the same cluster (eventsched on the same log) and
   is timed as `bench --kube` times a run (`kube_runs.timed_run`): first bind to last bind
   of the measured pods, its CPU (its start included, and after its first bind), its peak
   resident set, the API server's and etcd's CPU, PostgreSQL's for eventsched.

Upstream creates the measured pods while the scheduler runs and samples its rate; here
they are created first so that the creating client's rate (and its CPU, on this
2-core machine) does not bound either scheduler's, and so that both are measured as
`bench --kube` measures them. A preemption victim's DELETE removes it at once: the
low-priority template has no grace period, and no kubelet is needed.

Runs alternate: eventsched, kube-scheduler, eventsched, ...
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable

from eventsched.benchmarks.bindwatch import BindWatch
from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.kube import create_namespaces, create_pods
from eventsched.benchmarks.kube_runs import (
    SCHEDULER_NAMES,
    TimedRun,
    alternate,
    database_name,
    fresh_database,
    scheduler_config,
    start_scheduler,
    stop_process,
    timed_run,
    upgrade_database,
    wait_all_bound,
)
from eventsched.benchmarks.kubebinaries import KubeBinaries
from eventsched.benchmarks.kuberesults import EVENTSCHED, KubeBenchResult, RunResult
from eventsched.benchmarks.workload_cluster import node_manifest, pod_manifest
from eventsched.benchmarks.workloads import CreatePods, Size, Workload

#: The admission plugins scheduler_perf's API server runs without.
SCHEDULER_PERF_DISABLED_ADMISSION = (
    "ServiceAccount",
    "TaintNodesByCondition",
    "Priority",
    "StorageObjectInUseProtection",
)


class InitPodsFailed(RuntimeError):
    """The scheduler did not place a workload's init pods (not measured, but the measured
    run would mean nothing without them)."""


def place_init_pods(
    cp: ControlPlane, workload: Workload, size: Size, run: TimedRun, timeout: float
) -> None:
    """Start the scheduler as `run` will, create each init op's pods and wait until all
    are bound, op after op; stop the scheduler. Raises InitPodsFailed when they are not
    bound in time."""
    if not workload.init_ops or size.init_pods == 0:
        return
    name = SCHEDULER_NAMES[run.scheduler]
    log = cp.workdir / f"{run.scheduler}-init.log"
    proc = start_scheduler(run.scheduler, cp, run.config, run.events_url, log, run.cpus)
    try:
        index = 0
        expected: dict[str, int] = {}
        for op in workload.init_ops:
            manifests = [
                pod_manifest(op.template, op.namespace, index + i, name)
                for i in range(size.init_pods)
            ]
            index += size.init_pods
            expected[op.namespace] = expected.get(op.namespace, 0) + size.init_pods
            create_pods(cp, op.namespace, manifests)
            _wait_bound(cp, op, expected[op.namespace], proc, timeout)
    finally:
        stop_process(proc)


def _wait_bound(
    cp: ControlPlane,
    op: CreatePods,
    count: int,
    proc: subprocess.Popen[bytes],
    timeout: float,
) -> None:
    """Until `count` pods of the op's namespace are bound."""
    watch = BindWatch(cp, op.namespace)
    try:
        watch.start(count)
        wait_all_bound(watch, proc, timeout)
    except RuntimeError as e:
        raise InitPodsFailed(f"{op.template} in {op.namespace}: {e}") from e
    finally:
        watch.close()


def measure(
    binaries: KubeBinaries,
    scheduler: str,
    round_: int,
    workload: Workload,
    size: Size,
    *,
    qps: float,
    burst: int,
    db_url: str | None,
    timeout: float,
    on_progress: Callable[[int], None] | None = None,
    scheduler_cpus: frozenset[int] | None = None,
) -> RunResult:
    """One run of `workload` at `size` on a fresh control plane (the scheduler on
    `scheduler_cpus` only, if given)."""
    name = SCHEDULER_NAMES[scheduler]
    with contextlib.ExitStack() as stack:
        cp: ControlPlane = stack.enter_context(
            ControlPlane(binaries, disabled_admission=SCHEDULER_PERF_DISABLED_ADMISSION)
        )
        cp.make_ready_nodes(
            [
                node_manifest(workload.node_template, i, workload.node_labels)
                for i in range(size.nodes)
            ]
        )
        create_namespaces(cp, workload.namespaces())
        config = scheduler_config(
            cp.workdir / f"{scheduler}.yaml", name, qps, burst, cp.kubeconfig()
        )
        events_url = database = None
        if scheduler == EVENTSCHED:
            events_url, database = stack.enter_context(fresh_database(db_url, cp.workdir, round_))
            upgrade_database(events_url)
        spec = TimedRun(
            scheduler,
            round_,
            size.nodes,
            size.measured_pods,
            workload.measured.namespace,
            config,
            events_url,
            database,
            scheduler_cpus,
        )
        try:
            place_init_pods(cp, workload, size, spec, timeout)
        except InitPodsFailed as e:
            return failed_run(spec, f"placing the init pods: {e}")
        first = size.init_pods * len(workload.init_ops)
        create_pods(
            cp,
            workload.measured.namespace,
            (
                pod_manifest(
                    workload.measured.template, workload.measured.namespace, first + i, name
                )
                for i in range(size.measured_pods)
            ),
        )
        return timed_run(cp, spec, timeout, on_progress)
    raise AssertionError("unreachable")


def failed_run(spec: TimedRun, error: str) -> RunResult:
    """The result of a run that did not get to its measured pods."""
    return RunResult(
        scheduler=spec.scheduler,
        round=spec.round,
        nodes=spec.nodes,
        pods=spec.pods,
        bound=0,
        seconds=0.0,
        pods_per_second=0.0,
        from_start_seconds=0.0,
        scheduler_cpu_seconds=0.0,
        cpu_ms_per_pod=0.0,
        apiserver_cpu_seconds=0.0,
        etcd_cpu_seconds=0.0,
        database=spec.database,
        error=error,
    )


def run(
    binaries: KubeBinaries,
    workload: Workload,
    size: Size,
    *,
    qps: float = 5000,
    burst: int = 5000,
    db_url: str | None = None,
    rounds: int = 1,
    timeout: float | None = None,
    on_run: Callable[[RunResult], None] | None = None,
    progress: Callable[[str], Callable[[int], None]] | None = None,
    scheduler_cpus: frozenset[int] | None = None,
) -> KubeBenchResult:
    """rounds x (eventsched, kube-scheduler when its binary is present), alternating; as
    `kube.run`, for one workload."""
    result = KubeBenchResult(
        size.nodes, size.measured_pods, qps, burst, rounds, database_name(db_url),
        workload=workload.name,
    )  # fmt: skip
    limit = timeout if timeout is not None else max(120.0, size.measured_pods / 5)

    def measure_one(
        scheduler: str, round_: int, callback: Callable[[int], None] | None
    ) -> RunResult:
        return measure(
            binaries, scheduler, round_, workload, size,
            qps=qps, burst=burst, db_url=db_url, timeout=limit, on_progress=callback,
            scheduler_cpus=scheduler_cpus,
        )  # fmt: skip

    label = f"{workload.name}: "
    return alternate(binaries, result, measure_one, label=label, on_run=on_run, progress=progress)
