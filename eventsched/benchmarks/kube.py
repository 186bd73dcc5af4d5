"""eventsched against kube-scheduler on a real control plane (etcd + kube-apiserver).

Run by `eventsched bench --kube`. Each run gets a fresh control plane (its own etcd data
and kube-apiserver, so nothing is left over from the previous run and the API server's CPU
is that run's alone), N ready nodes and M pending pods created BEFORE the scheduler starts;
then the scheduler under test starts as a separate process and the benchmark watches the
pods (a watch with ``fieldSelector=spec.nodeName!=``: each ADDED event is one bind) until
all M are bound. Runs alternate: eventsched, kube-scheduler, eventsched, ...

What is measured per run: `eventsched.benchmarks.kube_runs.timed_run`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import kubernetes.client

from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.kube_runs import (
    SCHEDULER_NAMES,
    TimedRun,
    alternate,
    database_name,
    fresh_database,
    scheduler_config,
    timed_run,
    upgrade_database,
)
from eventsched.benchmarks.kubebinaries import KubeBinaries
from eventsched.benchmarks.kuberesults import EVENTSCHED, KubeBenchResult, RunResult

NAMESPACE = "bench"
ZONES = ("zone-a", "zone-b", "zone-c")


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
    create_namespaces(cp, [NAMESPACE])
    create_pods(cp, NAMESPACE, (_pod(f"pod-{i:05d}", scheduler_name) for i in range(count)))


def create_namespaces(cp: ControlPlane, names: Iterable[str]) -> None:
    client = cp.api_client()
    try:
        core: Any = kubernetes.client.CoreV1Api(client)
        for name in names:
            body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            core.create_namespace(body, _preload_content=False)
    finally:
        client.close()


def create_pods(cp: ControlPlane, namespace: str, manifests: Iterable[dict[str, Any]]) -> None:
    """Create the pods in `namespace` (which exists), eight requests at a time."""
    client = cp.api_client()
    try:
        core: Any = kubernetes.client.CoreV1Api(client)

        def create(manifest: dict[str, Any]) -> None:
            core.create_namespaced_pod(namespace, manifest, _preload_content=False)

        with ThreadPoolExecutor(max_workers=8) as pool:
            for _ in pool.map(create, manifests):
                pass
    finally:
        client.close()


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
    *,
    scheduler_cpus: frozenset[int] | None = None,
) -> RunResult:
    """One run on a fresh control plane (the scheduler on `scheduler_cpus` only, if given)."""
    with contextlib.ExitStack() as stack:
        cp: ControlPlane = stack.enter_context(ControlPlane(binaries))
        cp.make_ready_nodes(_nodes(nodes))
        _create_pods(cp, pods, SCHEDULER_NAMES[scheduler])
        config = scheduler_config(
            cp.workdir / f"{scheduler}.yaml",
            SCHEDULER_NAMES[scheduler],
            qps,
            burst,
            cp.kubeconfig(),
        )
        events_url = database = None
        if scheduler == EVENTSCHED:
            events_url, database = stack.enter_context(fresh_database(db_url, cp.workdir, round_))
            upgrade_database(events_url)
        spec = TimedRun(
            scheduler, round_, nodes, pods, NAMESPACE, config, events_url, database,
            scheduler_cpus,
        )  # fmt: skip
        return timed_run(cp, spec, timeout, on_progress)
    raise AssertionError("unreachable")


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
    scheduler_cpus: frozenset[int] | None = None,
) -> KubeBenchResult:
    """rounds x (eventsched, kube-scheduler when its binary is present), alternating.

    db_url: eventsched's log (a PostgreSQL database in which a fresh schema is made per run),
    else a fresh SQLite file per run. progress(description) returns a callback given the
    number of pods bound so far; on_run is called with each run's result as it ends.
    """
    result = KubeBenchResult(nodes, pods, qps, burst, rounds, database_name(db_url))
    limit = timeout if timeout is not None else max(120.0, pods / 5)

    def measure_one(
        scheduler: str, round_: int, callback: Callable[[int], None] | None
    ) -> RunResult:
        return measure(
            binaries, scheduler, round_, nodes, pods, qps, burst, db_url, limit, callback,
            scheduler_cpus=scheduler_cpus,
        )  # fmt: skip

    return alternate(binaries, result, measure_one, on_run=on_run, progress=progress)


__all__ = ["KubeBenchResult", "RunResult", "measure", "run"]
