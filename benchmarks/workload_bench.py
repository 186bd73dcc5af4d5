"""One scheduler_perf workload on a simulated cluster, log included: `eventsched bench --workload`.

As upstream runs it: the nodes and namespaces first, then each init
`createPods` op, scheduled to the end before the next (not measured), then
the measured pods. The clock starts when the measured pods have been
created (the scheduler has not seen them yet: observing them is part of the
measurement, as it is for kube-scheduler) and stops when the last of them is
bound or found unschedulable. Every decision, the init pods' included, is
written to the log. Throughput, events/s and log bytes/pod are the measured
pods'; the log size as `benchmarks/scheduling.py` measures it.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import EventStore, upgrade
from eventsched.framework import Profile
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions


def sibling(name: str) -> ModuleType:
    """benchmarks/<name>.py next to this file, under the name `eventsched bench` loads it by."""
    module_name = f"eventsched_bench_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(
        module_name, Path(__file__).with_name(f"{name}.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@dataclass(slots=True)
class WorkloadResult:
    workload: str
    #: The upstream variant the default counts and the threshold come from.
    variant: str
    nodes: int
    #: All init pods (each init op's count times the ops).
    init_pods: int
    measured_pods: int
    database: str
    bound: int
    unschedulable: int
    startup_seconds: float
    init_seconds: float
    seconds: float
    pods_per_second: float
    #: Upstream CI's minimum pods/s for this workload at upstream's counts.
    threshold: float
    #: Upstream's counts for that threshold.
    upstream_nodes: int
    upstream_measured_pods: int
    events: int
    events_per_second: float
    log_bytes_per_pod: float
    #: Plugins the workload exists to exercise that the default profile lacks.
    missing_plugins: list[str] = field(default_factory=list)
    #: Filled by `scheduling.measure_replay` when asked for (`--replay`).
    replay: Any = None

    def line(self) -> str:
        line = (
            f"{self.workload}: {self.nodes} nodes, {self.init_pods} init + "
            f"{self.measured_pods} measured pods on {self.database}: "
            f"{self.pods_per_second:.1f} pods/s (upstream threshold {self.threshold:g} at "
            f"{self.upstream_nodes} nodes, {self.upstream_measured_pods} measured), "
            f"{self.events_per_second:.0f} events/s, "
            f"{self.log_bytes_per_pod:.0f} log bytes/pod ({self.bound} bound, "
            f"{self.unschedulable} unschedulable in {self.seconds:.2f} s; start-up "
            f"{self.startup_seconds:.2f} s, init pods {self.init_seconds:.2f} s)"
        )
        if self.missing_plugins:
            line += (
                f"\n  without {', '.join(self.missing_plugins)}: not in the default profile, "
                "so this run does not exercise what the workload is for"
            )
        return line if self.replay is None else f"{line}\n{self.replay.line()}"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def missing_plugins(profile: Profile, wanted: tuple[str, ...]) -> list[str]:
    enabled = set(profile.plugin_names())
    return [name for name in wanted if name not in enabled]


def run(
    name: str,
    database_url: str,
    nodes: int | None = None,
    pods: int | None = None,
    on_progress: Callable[[int], None] | None = None,
    profile: Profile | None = None,
) -> WorkloadResult:
    """Run workload `name` (upstream's counts, or `nodes`/`pods` measured pods) on a new log.

    `profile` is the default profile unless given (a test's, or one to compare with).
    """
    workloads = sibling("workloads")
    workload = workloads.lookup(name)
    if workload is None:
        raise KeyError(name)
    size = workloads.size(workload, nodes, pods)
    profile = profile or default_profile()
    built = sibling("workload_cluster").build(workload, size, profile.scheduler_name)
    log_size = sibling("scheduling").log_size

    store = EventStore.connect(database_url, require_schema=False)
    upgrade(store.engine)
    sim = SimulatedCluster(built.nodes, objects=built.namespaces)
    scheduler = Scheduler(store, sim, [profile], in_tree_registry(), SchedulerOptions())
    t0 = time.perf_counter()
    scheduler.start()
    t1 = time.perf_counter()
    for batch in built.init_batches:
        for pod in batch:
            sim.add_pod(pod)
        scheduler.run(until_idle=True)
    t2 = time.perf_counter()

    bound_before = scheduler.stats.bound
    events_before = scheduler.stats.events
    size_before = log_size(store)
    if on_progress is not None:
        scheduler.on_progress = lambda stats: on_progress(stats.bound - bound_before)
    measured = {sim.add_pod(pod).key for pod in built.measured}
    t3 = time.perf_counter()
    scheduler.run(until_idle=True)
    t4 = time.perf_counter()
    bound = scheduler.stats.bound - bound_before
    unschedulable = sum(1 for pod, _ in scheduler.last_failure.values() if pod.key in measured)
    scheduler.stop()
    events = scheduler.stats.events - events_before
    log_bytes = log_size(store) - size_before
    database = store.engine.dialect.name
    store.close()

    seconds = t4 - t3
    return WorkloadResult(
        workload=workload.name,
        variant=workload.variant,
        nodes=size.nodes,
        init_pods=size.init_pods * len(workload.init_ops),
        measured_pods=size.measured_pods,
        database=database,
        bound=bound,
        unschedulable=unschedulable,
        startup_seconds=t1 - t0,
        init_seconds=t2 - t1,
        seconds=seconds,
        pods_per_second=bound / seconds if seconds else 0.0,
        threshold=workload.threshold,
        upstream_nodes=workload.nodes,
        upstream_measured_pods=workload.measured_pods,
        events=events,
        events_per_second=events / seconds if seconds else 0.0,
        log_bytes_per_pod=log_bytes / max(size.measured_pods, 1),
        missing_plugins=missing_plugins(profile, workload.plugins),
    )
