"""kube-scheduler's scheduler_perf workloads, as data: `eventsched bench --workload NAME`.

Each `Workload` repeats the ops of one test case of upstream's
`test/integration/scheduler_perf/config/performance-config.yaml` (v1.28;
split into `affinity/`, `misc/` and `topology_spreading/` later): the nodes
(`createNodes`: template, `labelNodePrepareStrategy`), the init pods
(`createPods` without `collectMetrics`, each op scheduled to the end before
the next, not measured) and the measured pods (`collectMetrics: true`), each
from its template under `eventsched/benchmarks/workloads/` in the namespace upstream
puts it in.

The counts are those of the `5000Nodes_<N>Pods` variant that carries the
workload's CI threshold (pods/s on upstream's machines, newer configs'
`threshold:`); `v128_measured_pods` keeps v1.28's `5000Nodes` figure, where
the measured pods were fewer. `--nodes`/`--pods` scale a run down (`size`).
"""

from __future__ import annotations

from dataclasses import dataclass

ZONE = "topology.kubernetes.io/zone"


@dataclass(frozen=True, slots=True)
class NodeLabels:
    """`labelNodePrepareStrategy`: `key` set to `values` in turn, node after node.

    Upstream patches the listed nodes (sorted by name) round-robin
    (`test/utils/runners.go` LabelNodePrepareStrategy); every node also gets
    `kubernetes.io/hostname` = its name (`test/integration/framework/perf_utils.go`).
    """

    key: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CreatePods:
    """One `createPods` op: `template` (a file under workloads/ beside this module) in
    `namespace`.

    A `createPods` without `namespace` used `namespace-<op index>` (created on
    the fly); the affinity workloads name `sched-0` and `sched-1`
    (`createNamespaces` prefix `sched`), the namespaces their terms list.
    """

    template: str
    namespace: str


@dataclass(frozen=True, slots=True)
class Churn:
    """A `churn` op: every `interval_ms`, one object from each template, in `namespace`.

    Upstream's `runChurnOp` (scheduler_perf): a `time.Ticker` of
    `intervalMilliseconds` (default 500); mode `create` creates one object
    per template each tick until `number` ticks (0: until the workload
    ends); mode `recreate` keeps `number` slots per template and, tick after
    tick, creates the object of an empty slot or deletes the one it holds.
    It starts after the init pods are scheduled and runs while the measured
    pods are created and scheduled; its pods are never measured. Only pod
    templates are supported here.
    """

    mode: str
    templates: tuple[str, ...]
    interval_ms: int
    namespace: str
    number: int = 0


@dataclass(frozen=True, slots=True)
class Size:
    """The counts of one run: upstream's, or smaller for a smoke run."""

    nodes: int
    #: Per init op.
    init_pods: int
    measured_pods: int


@dataclass(frozen=True, slots=True)
class Workload:
    name: str
    #: The upstream variant whose counts and threshold these are.
    variant: str
    nodes: int
    node_template: str
    node_labels: NodeLabels | None
    #: `$initPods`: the count of each init op.
    init_pods: int
    init_ops: tuple[CreatePods, ...]
    measured_pods: int
    measured: CreatePods
    #: Upstream CI's minimum SchedulingThroughput average, pods/s, at these counts
    #: (None: upstream sets none for this variant).
    threshold: float | None
    #: The plugins the workload exists to exercise.
    plugins: tuple[str, ...]
    #: What the pods carry that makes this workload what it is.
    feature: str
    #: v1.28's `5000Nodes` measured pods (None: no such variant ran in v1.28).
    v128_measured_pods: int | None
    #: The `churn` op running from the end of the init ops until the measured pods are done.
    churn: Churn | None = None
    #: v1.28's `500Nodes` variant (init pods per op, measured pods), used when a run asks
    #: for its node count (None: v1.28 had no such variant).
    small: Size | None = None

    def namespaces(self) -> tuple[str, ...]:
        """Every namespace the pods live in, in order of first use (upstream's op order)."""
        churn = () if self.churn is None else (self.churn.namespace,)
        names = (*(op.namespace for op in self.init_ops), *churn, self.measured.namespace)
        return tuple(dict.fromkeys(names))


def size(workload: Workload, nodes: int | None = None, pods: int | None = None) -> Size:
    """Upstream's counts, with `nodes` and `pods` (measured) overriding them.

    `nodes` equal to the workload's `small` variant's takes that variant's
    counts (upstream's `500Nodes`). Init pods keep the variant's ratio to the
    measured pods, so a small run looks like a large one scaled down. Other
    `nodes` without `pods` scale both counts with the nodes: PreemptionBasic's
    1,000-node variant at 5,000 nodes is 20,000 + 5,000 pods, so its init pods
    still fill every node (4,000 of them would leave most nodes empty, and the
    measured pods would not preempt at all).
    """
    base = Size(workload.nodes, workload.init_pods, workload.measured_pods)
    if workload.small is not None and nodes == workload.small.nodes:
        base = workload.small
    if pods is None and nodes is not None and nodes != base.nodes:
        pods = max(1, round(base.measured_pods * nodes / base.nodes))
    measured = base.measured_pods if pods is None else pods
    init = base.init_pods
    if pods is not None and base.measured_pods:
        init = round(base.init_pods * pods / base.measured_pods)
    return Size(base.nodes if nodes is None else nodes, init, measured)


NODE = "node-default.yaml"
DEFAULT = "pod-default.yaml"
LOW = "pod-low-priority.yaml"
HIGH = "pod-high-priority.yaml"
ZONE1 = NodeLabels(ZONE, ("zone1",))
MOONS = NodeLabels(ZONE, ("moon-1", "moon-2", "moon-3"))

WORKLOADS: tuple[Workload, ...] = (
    Workload(
        name="SchedulingBasic",
        variant="5000Nodes_10000Pods",
        nodes=5000,
        node_template=NODE,
        node_labels=None,
        init_pods=1000,
        init_ops=(CreatePods(DEFAULT, "namespace-1"),),
        measured_pods=10000,
        measured=CreatePods(DEFAULT, "namespace-2"),
        threshold=680,
        plugins=("NodeResourcesFit",),
        feature="requests of 100m CPU and 500Mi",
        v128_measured_pods=1000,
        small=Size(500, 500, 1000),
    ),
    Workload(
        name="SchedulingNodeAffinity",
        variant="5000Nodes_10000Pods",
        nodes=5000,
        node_template=NODE,
        node_labels=ZONE1,
        init_pods=5000,
        init_ops=(CreatePods("pod-with-node-affinity.yaml", "namespace-1"),),
        measured_pods=10000,
        measured=CreatePods("pod-with-node-affinity.yaml", "namespace-2"),
        threshold=220,
        plugins=("NodeAffinity",),
        feature="required node affinity: zone In (zone1, zone2)",
        v128_measured_pods=1000,
        small=Size(500, 500, 1000),
    ),
    Workload(
        name="TopologySpreading",
        variant="5000Nodes_5000Pods",
        nodes=5000,
        node_template=NODE,
        node_labels=MOONS,
        init_pods=5000,
        init_ops=(CreatePods(DEFAULT, "namespace-1"),),
        measured_pods=5000,
        measured=CreatePods("pod-with-topology-spreading.yaml", "namespace-2"),
        threshold=460,
        plugins=("PodTopologySpread",),
        feature="spread over zones, maxSkew 5, DoNotSchedule",
        v128_measured_pods=2000,
        small=Size(500, 1000, 1000),
    ),
    Workload(
        name="PreferredTopologySpreading",
        variant="5000Nodes_5000Pods",
        nodes=5000,
        node_template=NODE,
        node_labels=MOONS,
        init_pods=5000,
        init_ops=(CreatePods(DEFAULT, "namespace-1"),),
        measured_pods=5000,
        measured=CreatePods("pod-with-preferred-topology-spreading.yaml", "namespace-2"),
        threshold=340,
        plugins=("PodTopologySpread",),
        feature="spread over zones, maxSkew 5, ScheduleAnyway",
        v128_measured_pods=2000,
        small=Size(500, 1000, 1000),
    ),
    Workload(
        name="SchedulingPodAntiAffinity",
        variant="5000Nodes_2000Pods",
        nodes=5000,
        node_template=NODE,
        node_labels=None,
        init_pods=1000,
        init_ops=(CreatePods("pod-with-pod-anti-affinity.yaml", "sched-0"),),
        measured_pods=2000,
        measured=CreatePods("pod-with-pod-anti-affinity.yaml", "sched-1"),
        threshold=60,
        plugins=("InterPodAffinity",),
        feature="required pod anti-affinity to color=green per hostname",
        v128_measured_pods=1000,
        small=Size(500, 100, 400),
    ),
    Workload(
        name="SchedulingPodAffinity",
        variant="5000Nodes_5000Pods",
        nodes=5000,
        node_template=NODE,
        node_labels=ZONE1,
        init_pods=5000,
        init_ops=(CreatePods("pod-with-pod-affinity.yaml", "sched-0"),),
        measured_pods=5000,
        measured=CreatePods("pod-with-pod-affinity.yaml", "sched-1"),
        threshold=35,
        plugins=("InterPodAffinity",),
        feature="required pod affinity to color=blue per zone",
        v128_measured_pods=1000,
        small=Size(500, 500, 1000),
    ),
    Workload(
        name="SchedulingPreferredPodAffinity",
        variant="5000Nodes_5000Pods",
        nodes=5000,
        node_template=NODE,
        node_labels=None,
        init_pods=5000,
        init_ops=(CreatePods("pod-with-preferred-pod-affinity.yaml", "sched-0"),),
        measured_pods=5000,
        measured=CreatePods("pod-with-preferred-pod-affinity.yaml", "sched-1"),
        threshold=90,
        plugins=("InterPodAffinity",),
        feature="preferred pod affinity (weight 1) to color=red per hostname",
        v128_measured_pods=1000,
        small=Size(500, 500, 1000),
    ),
    Workload(
        name="SchedulingPreferredPodAntiAffinity",
        variant="5000Nodes_5000Pods",
        nodes=5000,
        node_template=NODE,
        node_labels=None,
        init_pods=5000,
        init_ops=(CreatePods("pod-with-preferred-pod-anti-affinity.yaml", "sched-0"),),
        measured_pods=5000,
        measured=CreatePods("pod-with-preferred-pod-anti-affinity.yaml", "sched-1"),
        threshold=90,
        plugins=("InterPodAffinity",),
        feature="preferred pod anti-affinity (weight 1) to color=yellow per hostname",
        v128_measured_pods=1000,
        small=Size(500, 500, 1000),
    ),
    Workload(
        name="MixedSchedulingBasePod",
        variant="5000Nodes_5000Pods",
        nodes=5000,
        node_template=NODE,
        node_labels=ZONE1,
        init_pods=2000,
        init_ops=(
            CreatePods(DEFAULT, "sched-0"),
            CreatePods("pod-with-pod-affinity.yaml", "sched-0"),
            CreatePods("pod-with-pod-anti-affinity.yaml", "sched-0"),
            CreatePods("pod-with-preferred-pod-affinity.yaml", "sched-0"),
            CreatePods("pod-with-preferred-pod-anti-affinity.yaml", "sched-0"),
        ),
        measured_pods=5000,
        measured=CreatePods(DEFAULT, "namespace-7"),
        threshold=140,
        plugins=("InterPodAffinity",),
        feature="plain pods among placed pods with every kind of affinity term",
        v128_measured_pods=1000,
        small=Size(500, 200, 1000),
    ),
    Workload(
        name="PreemptionBasic",
        variant="1000Nodes",
        nodes=1000,
        node_template=NODE,
        node_labels=None,
        init_pods=4000,
        init_ops=(CreatePods(LOW, "namespace-1"),),
        measured_pods=1000,
        measured=CreatePods(HIGH, "namespace-2"),
        threshold=None,
        plugins=("DefaultPreemption",),
        feature="priority 10, 3 CPUs, on nodes full of priority-0 pods of 900m (3 victims each)",
        v128_measured_pods=None,
        small=Size(500, 2000, 500),
    ),
    Workload(
        name="PreemptionAsync",
        variant="5000Nodes",
        nodes=5000,
        node_template=NODE,
        node_labels=None,
        init_pods=20000,
        init_ops=(CreatePods(LOW, "namespace-1"),),
        measured_pods=5000,
        measured=CreatePods(DEFAULT, "namespace-3"),
        threshold=570,
        plugins=("DefaultPreemption",),
        feature="plain pods while a high-priority pod that must preempt arrives every 200 ms",
        v128_measured_pods=None,
        churn=Churn("create", (HIGH,), 200, "namespace-2"),
    ),
)

BY_NAME = {w.name: w for w in WORKLOADS}


def names() -> tuple[str, ...]:
    return tuple(BY_NAME)


def lookup(name: str) -> Workload | None:
    return BY_NAME.get(name)
