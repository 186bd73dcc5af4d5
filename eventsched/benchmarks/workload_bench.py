"""One scheduler_perf workload on a simulated cluster, log included: `eventsched bench --workload`.

As upstream runs it: the nodes and namespaces first, then each init
`createPods` op, scheduled to the end before the next (not measured), then
the measured pods. The clock starts when the measured pods have been
created (the scheduler has not seen them yet: observing them is part of the
measurement, as it is for kube-scheduler) and stops when the last of them is
bound or found unschedulable. Every decision, the init pods' included, is
written to the log. Throughput, events/s and log bytes/pod are the measured
pods'; the log size as `eventsched/benchmarks/scheduling.py` measures it.

A workload with a `churn` op (PreemptionAsync) starts it when the init pods
are done, before the measured pods are created (upstream's op order); its
pods are scheduled with the others but never counted, and the clock stops
at the last measured pod's decision, while the churn still runs. Victims of
preemption are deleted by the simulated cluster (`preempt`: marked, then
deleted at once, as a kubelet does with a pod of no grace period).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass, field

from eventsched.benchmarks import workloads
from eventsched.benchmarks.churn import Churner
from eventsched.benchmarks.scheduling import ReplayResult, log_size
from eventsched.benchmarks.workload_cluster import build
from eventsched.benchmarks.workloads import Workload
from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import EventStore, upgrade
from eventsched.framework import Profile
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions


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
    #: Upstream CI's minimum pods/s for this workload at upstream's counts (None: none set).
    threshold: float | None
    #: Upstream's counts for that threshold.
    upstream_nodes: int
    upstream_measured_pods: int
    events: int
    events_per_second: float
    log_bytes_per_pod: float
    #: Pods the churn op created while the measured pods were scheduled (not measured).
    churn_pods: int = 0
    #: Init pods gone from the cluster after the measured phase (preemption victims).
    evicted: int = 0
    #: Plugins the workload exists to exercise that the default profile lacks.
    missing_plugins: list[str] = field(default_factory=list)
    #: Filled by `scheduling.measure_replay` when asked for (`--replay`).
    replay: ReplayResult | None = None

    def line(self) -> str:
        line = (
            f"{self.workload}: {self.nodes} nodes, {self.init_pods} init + "
            f"{self.measured_pods} measured pods on {self.database}: "
            f"{self.pods_per_second:.1f} pods/s ({threshold_text(self.threshold)} at "
            f"{self.upstream_nodes} nodes, {self.upstream_measured_pods} measured), "
            f"{self.events_per_second:.0f} events/s, "
            f"{self.log_bytes_per_pod:.0f} log bytes/pod ({self.bound} bound, "
            f"{self.unschedulable} unschedulable in {self.seconds:.2f} s; start-up "
            f"{self.startup_seconds:.2f} s, init pods {self.init_seconds:.2f} s)"
        )
        if self.churn_pods or self.evicted:
            line += f"\n  {self.churn_pods} churn pods created, {self.evicted} init pods evicted"
        if self.missing_plugins:
            line += (
                f"\n  without {', '.join(self.missing_plugins)}: not in the default profile, "
                "so this run does not exercise what the workload is for"
            )
        return line if self.replay is None else f"{line}\n{self.replay.line()}"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def threshold_text(threshold: float | None) -> str:
    return "no upstream threshold" if threshold is None else f"upstream threshold {threshold:g}"


class MeasuredProgress:
    """Counts binds of the measured pods only; sets `done` when all of them are bound.

    Called as `Scheduler.on_progress` (the loop thread, after each decision is
    durable); it reads the binds from the simulated cluster's record of them,
    so pods of a churn op or a victim's preemptor are never counted.
    """

    def __init__(
        self,
        sim: SimulatedCluster,
        measured: Collection[str],
        on_progress: Callable[[int], None] | None = None,
    ) -> None:
        self.sim = sim
        self.measured = measured
        self.on_progress = on_progress
        self.bound = 0
        self.done = threading.Event()
        self._seen = len(sim.bindings)

    def __call__(self, _stats: object) -> None:
        bindings = self.sim.bindings
        end = len(bindings)
        self.bound += sum(1 for key, _ in bindings[self._seen : end] if key in self.measured)
        self._seen = end
        if self.on_progress is not None:
            self.on_progress(self.bound)
        if self.bound >= len(self.measured):
            self.done.set()


def missing_plugins(profile: Profile, wanted: tuple[str, ...]) -> list[str]:
    enabled = set(profile.plugin_names())
    return [name for name in wanted if name not in enabled]


def run(
    name: str | Workload,
    database_url: str,
    nodes: int | None = None,
    pods: int | None = None,
    on_progress: Callable[[int], None] | None = None,
    profile: Profile | None = None,
) -> WorkloadResult:
    """Run workload `name` (upstream's counts, or `nodes`/`pods` measured pods) on a new log.

    `name` may be a `Workload` itself (a test's variant of one). `profile` is the
    default profile unless given (a test's, or one to compare with).
    """
    workload = workloads.lookup(name) if isinstance(name, str) else name
    if workload is None:
        raise KeyError(name)
    size = workloads.size(workload, nodes, pods)
    profile = profile or default_profile()
    built = build(workload, size, profile.scheduler_name)

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

    events_before = scheduler.stats.events
    size_before = log_size(store)
    init_keys = {pod.key for batch in built.init_batches for pod in batch}
    churner = None
    if workload.churn is not None:
        churner = Churner(sim, workload.churn, built.churn_pod, first_index=built.pod_count)
        churner.start()
    progress = MeasuredProgress(sim, {pod.key for pod in built.measured}, on_progress)
    scheduler.on_progress = progress
    measured = {sim.add_pod(pod).key for pod in built.measured}
    t3 = time.perf_counter()
    # With a churn op the scheduler is never idle for long: stop at the last measured bind.
    scheduler.run(stop=progress.done if churner is not None else None, until_idle=True)
    t4 = time.perf_counter()
    if churner is not None:
        churner.stop()
    bound = progress.bound
    unschedulable = sum(1 for pod, _ in scheduler.last_failure.values() if pod.key in measured)
    scheduler.stop()
    events = scheduler.stats.events - events_before
    log_bytes = log_size(store) - size_before
    database = store.engine.dialect.name
    store.close()
    evicted = len(init_keys - {pod.key for pod in sim.list_pods()})

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
        churn_pods=0 if churner is None else churner.created,
        evicted=evicted,
        missing_plugins=missing_plugins(profile, workload.plugins),
    )
