"""`eventsched shadow` beside kube-scheduler on a real control plane: does it keep up?

Run by `eventsched bench --kube --shadow`. A fresh control plane gets the generated mix's
nodes (shadowmix.py: several sizes, zones, taints); `eventsched shadow` starts with
kube-scheduler's own configuration (its default profile, client QPS and burst as given),
then kube-scheduler, and the mix's pods are created (as fast as eight clients create them);
or (`--pods-first`) the pods are created first and kube-scheduler then places them all
as fast as it can. Measured: from the first pod created to kube-scheduler's last decision (each pod
bound, or pending with a FailedScheduling message) and to the shadow's verdict on every
one of them; the shadow process's CPU; each verdict's lag (from the watch's delivery to
the verdict); the agreement on placements and on FailedScheduling messages.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubernetes.client
import sqlalchemy as sa

from eventsched.benchmarks import kube_runs
from eventsched.benchmarks.bindwatch import BindWatch
from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.kubebinaries import KubeBinaries
from eventsched.benchmarks.processes import free_port, log_tail, process_cpu_seconds, spawn_logged
from eventsched.benchmarks.shadowmix import generate
from eventsched.benchmarks.shadowresults import SAMPLED, ShadowRunResult, Verdicts

NAMESPACE = "bench"
SHADOWED = "default-scheduler"
#: Seconds without a new Binding after which kube-scheduler's pending pods are looked at.
QUIET = 2.0


@dataclass(frozen=True, slots=True)
class Pending:
    """A pod kube-scheduler left pending, and its FailedScheduling message ("" none yet)."""

    uid: str
    message: str


def measure(
    binaries: KubeBinaries,
    nodes: int,
    pods: int,
    *,
    qps: float,
    burst: int,
    db_url: str | None,
    timeout: float,
    percentage: int | None = None,
    pods_first: bool = False,
    on_progress: Callable[[int], None] | None = None,
) -> ShadowRunResult:
    """One run. `percentage`: kube-scheduler's percentageOfNodesToScore (None: its
    default, adaptive), in the configuration both are given. `pods_first`: the pods are
    created (and seen pending by the shadow) before kube-scheduler starts, which then
    places them as fast as it can; measured from its start."""
    with contextlib.ExitStack() as stack:
        cp: ControlPlane = stack.enter_context(ControlPlane(binaries))
        mix = generate(nodes, pods, NAMESPACE)
        _create_cluster(cp, mix.priority_classes, mix.nodes)
        events_url, database = stack.enter_context(kube_runs.fresh_database(db_url, cp.workdir, 1))
        kube_runs.upgrade_database(events_url)
        kube_runs.bytecode_compiled()
        result = ShadowRunResult(nodes, pods, database, percentage, pods_first)
        config = kube_runs.scheduler_config(
            cp.workdir / "kube-scheduler.yaml", SHADOWED, qps, burst, cp.kubeconfig(), percentage
        )
        shadow_log = cp.workdir / "shadow.log"
        shadow = spawn_logged(
            [
                *kube_runs.eventsched_command(events_url), "shadow", "--config", str(config),
                "--kubeconfig", str(cp.kubeconfig()), "--http-address", f"127.0.0.1:{free_port()}",
                "--secure-port", "0",
            ],
            shadow_log,
        )  # fmt: skip
        stack.callback(kube_runs.stop_process, shadow)
        engine = sa.create_engine(events_url)
        stack.callback(engine.dispose)
        deadline = time.monotonic() + timeout
        try:
            _wait_for_shadow(engine, shadow, shadow_log, deadline)
            watch = BindWatch(cp, NAMESPACE)
            stack.callback(watch.close)
            watch.start(pods)
            if pods_first:
                _create_pods(cp, mix.pods)
                _wait_for_pending(engine, shadow, shadow_log, pods, deadline)
            started = time.monotonic()
            stack.callback(kube_runs.stop_process, cp.start_kube_scheduler(config))
            if not pods_first:
                _create_pods(cp, mix.pods)
            pending = _kube_done(cp, watch, pods, deadline, on_progress)
            result.kube_seconds = max(watch.bound.values(), default=started) - started
            result.bound, result.pending = len(watch.bound), len(pending)
            verdicts = _shadow_done(engine, shadow, shadow_log, pending, result, deadline)
            result.shadow_seconds = time.monotonic() - started
            result.verdicts = verdicts
        except _Failed as failed:
            result.error = str(failed)
        result.shadow_cpu_seconds = process_cpu_seconds(shadow.pid) or 0.0
        return result
    raise AssertionError("unreachable")


class _Failed(Exception):
    """The run could not finish: timed out, or a process exited."""


def _create_cluster(
    cp: ControlPlane, priority_classes: list[dict[str, Any]], nodes: list[dict[str, Any]]
) -> None:
    client = cp.api_client()
    try:
        scheduling: Any = kubernetes.client.SchedulingV1Api(client)
        for pc in priority_classes:
            scheduling.create_priority_class(pc, _preload_content=False)
        core: Any = kubernetes.client.CoreV1Api(client)
        core.create_namespace(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
            _preload_content=False,
        )
    finally:
        client.close()
    cp.make_ready_nodes(nodes)


def _create_pods(cp: ControlPlane, pods: list[dict[str, Any]]) -> None:
    client = cp.api_client()
    try:
        core: Any = kubernetes.client.CoreV1Api(client)
        with ThreadPoolExecutor(max_workers=8) as pool:
            for _ in pool.map(
                lambda pod: core.create_namespaced_pod(NAMESPACE, pod, _preload_content=False),
                pods,
            ):
                pass
    finally:
        client.close()


def _wait_for_shadow(engine: sa.Engine, shadow: Any, log: Path, deadline: float) -> None:
    """Until the shadow has listed the cluster (its `listed` is in the log)."""
    query = sa.text(
        "SELECT count(*) FROM events WHERE kind = 'maintenance' AND "
        + (
            "data ->> 'action'"
            if engine.dialect.name == "postgresql"
            else "json_extract(data, '$.action')"
        )
        + " = 'listed'"
    )
    while True:
        _alive(shadow, log)
        with (
            contextlib.suppress(sa.exc.OperationalError, sa.exc.ProgrammingError),
            engine.connect() as conn,
        ):
            if conn.execute(query).scalar_one():
                return
        _before(deadline, "the shadow to list the cluster")
        time.sleep(0.2)


def _wait_for_pending(
    engine: sa.Engine, shadow: Any, log: Path, pods: int, deadline: float
) -> None:
    """Until the shadow has logged every pod pending."""
    query = sa.text("SELECT count(DISTINCT uid) FROM events WHERE kind = 'pod_observed'")
    while True:
        _alive(shadow, log)
        with engine.connect() as conn:
            if conn.execute(query).scalar_one() >= pods:
                return
        _before(deadline, "the shadow to see the pods pending")
        time.sleep(0.5)


def _kube_done(
    cp: ControlPlane,
    watch: BindWatch,
    pods: int,
    deadline: float,
    on_progress: Callable[[int], None] | None,
) -> dict[str, Pending]:
    """Until kube-scheduler bound or failed every pod: the pending ones, by name."""
    client = cp.api_client()
    core: Any = kubernetes.client.CoreV1Api(client)
    try:
        last, changed = -1, time.monotonic()
        while True:
            bound = len(watch.bound)
            if on_progress is not None:
                on_progress(bound)
            if bound >= pods:
                return {}
            if bound != last:
                last, changed = bound, time.monotonic()
            elif time.monotonic() - changed >= QUIET:
                pending = _pending(core)
                if len(pending) + len(watch.bound) >= pods and all(
                    p.message for p in pending.values()
                ):
                    return pending
                changed = time.monotonic()
            _before(deadline, f"kube-scheduler ({bound} of {pods} bound)")
            time.sleep(0.2)
    finally:
        client.close()


def _pending(core: Any) -> dict[str, Pending]:
    answer = json.loads(
        core.list_namespaced_pod(
            NAMESPACE, field_selector="spec.nodeName=", _preload_content=False
        ).data
    )
    out = {}
    for pod in answer["items"]:
        message = ""
        for condition in pod.get("status", {}).get("conditions") or []:
            if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
                message = condition.get("message", "")
        out[pod["metadata"]["name"]] = Pending(pod["metadata"]["uid"], message)
    return out


def _shadow_done(
    engine: sa.Engine,
    shadow: Any,
    log: Path,
    pending: dict[str, Pending],
    result: ShadowRunResult,
    deadline: float,
) -> Verdicts:
    """Until the shadow has a verdict on each pod bound and each pending pod's message."""
    wanted = result.bound + result.pending
    while True:
        _alive(shadow, log)
        rows = _verdict_rows(engine)
        last = {row["uid"]: row for row in rows}
        placed = sum(1 for row in last.values() if row["observed"] == "placed")
        failed = sum(
            1 for p in pending.values() if p.uid in last and last[p.uid]["message"] == p.message
        )
        result.decided = placed + failed
        if result.decided >= wanted:
            return _summed(last, rows)
        _before(deadline, f"the shadow ({result.decided} of {wanted} decided)")
        time.sleep(1.0)


def _verdict_rows(engine: sa.Engine) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        result = conn.execute(
            sa.text(
                "SELECT uid, observed, verdict, message, cause, lag_seconds "
                "FROM shadow_verdicts ORDER BY position"
            )
        )
        return [dict(row._mapping) for row in result]


def _summed(last: dict[str, dict[str, Any]], rows: list[dict[str, Any]]) -> Verdicts:
    placed: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    sampled = 0
    for row in last.values():
        if row["observed"] == "placed":
            placed[row["verdict"]] += 1
            sampled += row["verdict"] == "differ" and SAMPLED in (row["cause"] or "")
        else:
            failed[row["verdict"]] += 1
    lags = tuple(float(row["lag_seconds"]) for row in rows if row["lag_seconds"] is not None)
    return Verdicts(placed, failed, sampled, lags)


def _alive(proc: Any, log: Path) -> None:
    if proc.poll() is not None:
        raise _Failed(f"eventsched shadow exited with status {proc.returncode}: {log_tail(log)}")


def _before(deadline: float, waiting_for: str) -> None:
    if time.monotonic() > deadline:
        raise _Failed(f"timed out waiting for {waiting_for}")


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
    percentage: int | None = None,
    pods_first: bool = False,
    progress: Callable[[str], Callable[[int], None]] | None = None,
) -> Iterator[ShadowRunResult]:
    """`rounds` runs, each on a fresh control plane and log."""
    limit = timeout if timeout is not None else max(300.0, pods / 5)
    for round_ in range(1, rounds + 1):
        callback = progress(f"kube-scheduler round {round_}") if progress else None
        yield measure(
            binaries, nodes, pods, qps=qps, burst=burst, db_url=db_url, timeout=limit,
            percentage=percentage, pods_first=pods_first, on_progress=callback,
        )  # fmt: skip
