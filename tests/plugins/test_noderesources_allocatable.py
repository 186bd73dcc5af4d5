"""NodeResourcesAllocatable against scheduler-plugins v0.28.9's allocatable_test.go.

Every case of upstream's TestNodeResourcesAllocatable has a counterpart here
(upstream's name in a comment), with our own nodes, pods and sizes; the Go
int64 arithmetic is also checked against a per-node reference written with
Python ints (wrap-around, truncating division) on random and extreme values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from eventsched.cluster import SimulatedCluster
from eventsched.config.file import ConfigError, parse_config
from eventsched.events import EventStore
from eventsched.framework import CycleState, PluginArgsError, implements
from eventsched.model import Node, NodeTable, Pod
from eventsched.plugins import full_registry
from eventsched.plugins.noderesources_allocatable import (
    DEFAULT_RESOURCES,
    INT64_MAX,
    INT64_MIN,
    ResourceWeight,
    go_div,
    is_scalar,
    normalize,
)
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.plugins.conftest import plugin

NAME = "NodeResourcesAllocatable"
MIB = 1 << 20
#: upstream's defaultResourceAllocatableSet: a millicore weighs a MiB.
DEFAULT_SET: list[dict[str, Any]] = [
    {"name": "cpu", "weight": 1 << 20},
    {"name": "memory", "weight": 1},
]
#: upstream's cpuResourceAllocatableSet: a millicore weighs a GiB.
CPU_HEAVY_SET: list[dict[str, Any]] = [
    {"name": "cpu", "weight": 1 << 30},
    {"name": "memory", "weight": 1},
]


def node(name: str, milli_cpu: int, memory: int, **extra: Any) -> Node:
    allocatable: dict[str, Any] = {"cpu": f"{milli_cpu}m", "memory": str(memory), **extra}
    return Node.from_manifest({"metadata": {"name": name}, "status": {"allocatable": allocatable}})


def pod(name: str, *requests: dict[str, str]) -> Pod:
    containers = [{"name": f"c{i}", "resources": {"requests": r}} for i, r in enumerate(requests)]
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    return Pod.from_manifest({"metadata": meta, "spec": {"containers": containers}})


def no_resources(name: str = "p") -> Pod:
    """One container without requests (ours refuses upstream's container-less spec)."""
    return pod(name, {})


def small(name: str = "p") -> Pod:
    return pod(name, {"cpu": "500m", "memory": "512Mi"})


def huge_cpu(name: str = "p") -> Pod:
    return pod(name, {"cpu": "16", "memory": "2Gi"})


def two_containers(name: str) -> Pod:
    return pod(name, {"cpu": "1500m", "memory": "0"}, {"cpu": "500m", "memory": "0"})


@dataclass
class Case:
    name: str
    pod: Pod
    nodes: list[Node]
    args: dict[str, Any]
    expected: list[int] = field(default_factory=list)
    pods: list[tuple[Pod, str]] = field(default_factory=list)
    error: str = ""


def least(resources: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resources": resources, "mode": "Least"}


def most(resources: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resources": resources, "mode": "Most"}


CASES = [
    # "nothing scheduled, nothing requested"
    Case(
        "equal nodes, empty pod",
        no_resources(),
        [node("a", 3000, 6000), node("b", 3000, 6000)],
        least(DEFAULT_SET),
        [0, 0],
    ),
    # "nothing scheduled, resources requested, differently sized machines, least mode"
    Case(
        "smaller cpu wins in Least",
        small(),
        [node("a", 2000, 6000), node("b", 7000, 6000)],
        least(DEFAULT_SET),
        [100, 0],
    ),
    # "nothing scheduled, resources requested, differently sized machines, most mode"
    Case(
        "bigger cpu wins in Most",
        small(),
        [node("a", 2000, 6000), node("b", 7000, 6000)],
        most(DEFAULT_SET),
        [0, 100],
    ),
    # "no resources requested, pods scheduled"
    Case(
        "placed pods without requests change nothing",
        no_resources(),
        [node("a", 3000, 6000), node("b", 3000, 6000)],
        least(DEFAULT_SET),
        [0, 0],
        pods=[(no_resources("x"), "a"), (no_resources("y"), "a"), (no_resources("z"), "b")],
    ),
    # "no resources requested, pods scheduled with resources"
    Case(
        "placed requests are not read (empty pod)",
        no_resources(),
        [node("a", 8000, 30000), node("b", 8000, 30000)],
        least(DEFAULT_SET),
        [0, 0],
        pods=[(two_containers("x"), "a")],
    ),
    # "resources requested, pods scheduled with resources"
    Case(
        "placed requests are not read (requesting pod)",
        small(),
        [node("a", 8000, 30000), node("b", 8000, 30000)],
        least(DEFAULT_SET),
        [0, 0],
        pods=[(two_containers("x"), "a")],
    ),
    # "resources requested with more than the node, differently sized machines, least mode"
    Case(
        "request above allocatable, Least",
        huge_cpu(),
        [node("a", 3000, 800), node("b", 3500, 800)],
        least(DEFAULT_SET),
        [100, 0],
    ),
    # "resources requested with more than the node, differently sized machines, most mode"
    Case(
        "request above allocatable, Most",
        huge_cpu(),
        [node("a", 3000, 800), node("b", 3500, 800)],
        most(DEFAULT_SET),
        [0, 100],
    ),
    # "nothing scheduled, resources requested, differently sized machines, cpu weighted,
    # most mode" (upstream's case runs mode Least despite its name)
    Case(
        "cpu weighted over memory, Least",
        small(),
        [node("a", 2000, 9000), node("b", 2003, 1500)],
        least(CPU_HEAVY_SET),
        [100, 0],
    ),
    # "nothing scheduled, resources requested, differently sized machines, cpu weighted,
    # least mode" (upstream's case runs mode Most despite its name)
    Case(
        "cpu weighted over memory, Most",
        small(),
        [node("a", 2000, 9000), node("b", 2003, 1500)],
        most(CPU_HEAVY_SET),
        [0, 100],
    ),
    # "nothing scheduled, resources requested, 3 differently sized machines, least mode"
    Case(
        "three sizes, Least",
        small(),
        [node("a", 500, 500 * MIB), node("b", 1000, 1000 * MIB), node("c", 1500, 1500 * MIB)],
        least(DEFAULT_SET),
        [100, 50, 0],
    ),
    # "nothing scheduled, resources requested, 3 differently sized machines, most mode"
    Case(
        "three sizes, Most",
        small(),
        [node("a", 500, 500 * MIB), node("b", 1000, 1000 * MIB), node("c", 1500, 1500 * MIB)],
        most(DEFAULT_SET),
        [0, 50, 100],
    ),
    # "resource with negative weight"
    Case(
        "negative weight",
        small(),
        [node("a", 3000, 6000)],
        {"resources": [{"name": "memory", "weight": -3}, {"name": "cpu", "weight": 1}]},
        error="resource Weight of memory should be a positive value, got -3",
    ),
    # "resource with zero weight"
    Case(
        "zero weight",
        small(),
        [node("a", 3000, 6000)],
        {"resources": [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 0}]},
        error="resource Weight of cpu should be a positive value, got 0",
    ),
]


def scores(case_pod: Pod, table: NodeTable, args: dict[str, Any]) -> tuple[list[int], list[int]]:
    p = plugin(NAME, args, table)
    state = CycleState()
    rows = np.arange(len(table))
    raw = p.score_batch(state, case_pod, table, rows)
    normalized = p.normalize_score(state, case_pod, raw.copy(), rows)
    return [int(x) for x in raw], [int(x) for x in normalized]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_upstream_table(case: Case) -> None:
    """TestNodeResourcesAllocatable, case by case."""
    table = NodeTable(case.nodes)
    for placed, where in case.pods:
        assert table.add_pod(placed, where)
    if case.error:
        with pytest.raises(PluginArgsError) as raised:
            plugin(NAME, case.args, table)
        assert raised.value.problem == case.error
        return
    raw, normalized = scores(case.pod, table, case.args)
    assert normalized == case.expected
    assert raw == [go_raw(n, case.args) for n in case.nodes]


# -- a per-node reference in Python ints ---------------------------------------------


def wrap(v: int) -> int:
    return (v + 2**63) % 2**64 - 2**63


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return wrap(q if (a < 0) == (b < 0) else -q)


def go_raw(n: Node, args: dict[str, Any]) -> int:
    """upstream resourceScorer for one node; only base and scalar names are read."""
    spec: list[dict[str, Any]] = args.get("resources") or DEFAULT_SET
    weights: dict[str, int] = {str(r["name"]): int(r["weight"]) for r in spec}
    total = 0
    for name, weight in weights.items():
        readable = name in ("cpu", "memory", "ephemeral-storage") or is_scalar(name)
        amount = n.allocatable.get(name, 0) if readable else 0
        signed = -amount if args.get("mode", "Least") == "Least" else amount
        total = wrap(total + wrap(signed * weight))
    return trunc_div(total, wrap(sum(weights.values())))


def go_normalize(values: list[int]) -> list[int]:
    highest, lowest = -INT64_MAX, INT64_MAX
    for v in values:
        highest, lowest = max(highest, v), min(lowest, v)
    old = wrap(highest - lowest)
    if old == 0:
        return [0] * len(values)
    return [trunc_div(wrap(wrap(v - lowest) * 100), old) for v in values]


def test_truncates_toward_zero_like_go() -> None:
    """-(1<<20)/(1<<20 + 1) is 0 in Go; Python's floor division would give -1."""
    table = NodeTable([node("a", 1, 0), node("b", 2, 0)])
    raw, _ = scores(small(), table, {})
    assert raw == [0, -1]  # -2097152 / 1048577 = -1.99... truncates to -1


def test_go_div_matches_go_on_signs_and_extremes(rng: np.random.Generator) -> None:
    values = rng.integers(INT64_MIN, INT64_MAX, size=500, dtype=np.int64, endpoint=True)
    values[:4] = [INT64_MIN, INT64_MAX, -1, 0]
    for divisor in (1, -1, 3, -3, 7, -1048577, INT64_MAX, INT64_MIN, 2**40 + 5):
        got = go_div(values.copy(), divisor).tolist()
        assert got == [trunc_div(int(v), divisor) for v in values], divisor
    with pytest.raises(ZeroDivisionError):
        go_div(values, 0)


def test_normalize_matches_go_with_overflow(rng: np.random.Generator) -> None:
    """NormalizeScore's int64 wrap-around: extreme raw scores leave 0..100, as in Go."""
    samples = [
        [5, 5, 5],
        [-7],
        [INT64_MIN, INT64_MIN],
        [INT64_MIN, INT64_MAX, 0],
        [INT64_MAX, INT64_MAX - 1],
        [-(2**62), 2**62, 3],
        [-1000, -3000, -2000],
    ]
    samples += [rng.integers(-(10**15), 10**15, size=6, dtype=np.int64).tolist() for _ in range(50)]
    samples += [
        rng.integers(INT64_MIN, INT64_MAX, size=5, dtype=np.int64).tolist() for _ in range(50)
    ]
    for values in samples:
        got = normalize(np.array(values, dtype=np.int64)).tolist()
        assert got == go_normalize(values), values
    assert normalize(np.zeros(0, dtype=np.int64)).tolist() == []


def test_all_equal_scores_get_min_node_score() -> None:
    assert normalize(np.array([-9, -9], dtype=np.int64)).tolist() == [0, 0]


def test_int64_overflow_of_weighted_allocatable_wraps_as_go() -> None:
    """memory bytes times a 1<<40 weight overflow int64: the sum wraps, as upstream's."""
    args = {"mode": "Most", "resources": [{"name": "memory", "weight": 1 << 40}]}
    nodes = [node("a", 1000, 8 * 1024**3), node("b", 1000, 9 * 1024**3), node("c", 1000, 12345)]
    table = NodeTable(nodes)
    raw, normalized = scores(small(), table, args)
    assert raw == [go_raw(n, args) for n in nodes]
    assert raw[0] == 0 and raw[1] == 0  # 8Gi * 2^40 = 2^73 wraps to 0
    assert normalized == go_normalize(raw)


def test_weight_sum_wrapping_to_zero_raises_like_gos_panic() -> None:
    big = 1 << 62
    args = {"resources": [{"name": n, "weight": big} for n in ("cpu", "memory", "a/b", "c/d")]}
    table = NodeTable([node("a", 1000, 1000)])
    p = plugin(NAME, args, table)
    with pytest.raises(ZeroDivisionError, match="integer divide by zero"):
        p.score_batch(CycleState(), small(), table, np.arange(1))


def test_random_tables_match_the_reference(rng: np.random.Generator) -> None:
    names = ["cpu", "memory", "ephemeral-storage", "example.com/gpu", "hugepages-2Mi", "pods"]
    for _ in range(30):
        nodes = [
            node(
                f"n{i}",
                int(rng.integers(0, 10**6)),
                int(rng.integers(0, 10**13)),
                **{
                    "ephemeral-storage": str(int(rng.integers(0, 10**12))),
                    "example.com/gpu": str(int(rng.integers(0, 9))),
                    "hugepages-2Mi": str(int(rng.integers(0, 10**9))),
                    "pods": "110",
                },
            )
            for i in range(int(rng.integers(1, 8)))
        ]
        chosen = rng.choice(names, size=int(rng.integers(1, 5)))
        resources = [{"name": str(n), "weight": int(rng.integers(1, 1 << 31))} for n in chosen]
        args = {"mode": str(rng.choice(["Least", "Most"])), "resources": resources}
        raw, normalized = scores(small(), NodeTable(nodes), args)
        want = [go_raw(n, args) for n in nodes]
        assert raw == want
        assert normalized == go_normalize(want)


# -- which quantity is read ----------------------------------------------------------


def test_quantities_read_per_resource() -> None:
    """calculateResourceAllocatableRequest: base and scalar names from allocatable; `pods`
    and other unprefixed names are 0 even when the node lists them."""
    extra = {"ephemeral-storage": "10Gi", "example.com/gpu": "4", "hugepages-1Gi": "2Gi"}
    a = node("a", 1500, 3 * 1024**3, pods="110", foo="9", **extra)
    table = NodeTable([a])
    for name, want in [
        ("cpu", 1500),
        ("memory", 3 * 1024**3),
        ("ephemeral-storage", 10 * 1024**3),
        ("example.com/gpu", 4),
        ("hugepages-1Gi", 2 * 1024**3),
        ("pods", 0),
        ("foo", 0),
        ("vendor.io/absent", 0),
    ]:
        args = {"mode": "Most", "resources": [{"name": name, "weight": 1}]}
        assert scores(small(), table, args)[0] == [want], name


def test_scalar_names() -> None:
    for name in ("nvidia.com/gpu", "hugepages-2Mi", "kubernetes.io/x", "attachable-volumes-aws"):
        assert is_scalar(name)
    for name in ("cpu", "memory", "pods", "ephemeral-storage", "foo", "requests.example.com/x"):
        assert not is_scalar(name)


# -- args: SetDefaults_NodeResourcesAllocatableArgs and NewAllocatable's checks -----


def test_defaults() -> None:
    """defaults_test.go: "empty config NodeResourcesAllocatableArgs"."""
    for args in ({}, {"mode": "", "resources": []}, {"mode": None, "resources": None}):
        p = plugin(NAME, args)
        assert p.args.mode == "Least"
        assert p.args.resources == DEFAULT_RESOURCES
        assert p.weights == {"cpu": 1 << 20, "memory": 1}


def test_non_default_args_are_kept() -> None:
    """defaults_test.go: "set non default NodeResourcesAllocatableArgs"."""
    p = plugin(
        NAME,
        {
            "mode": "Most",
            "resources": [{"name": "cpu", "weight": 7}, {"name": "memory", "weight": 3}],
        },
    )
    assert p.args.mode == "Most"
    assert p.args.resources == (ResourceWeight("cpu", 7), ResourceWeight("memory", 3))


def test_repeated_name_keeps_its_last_weight_and_counts_once() -> None:
    """upstream's resourceToWeightMap: later entries overwrite, weightSum sums the map."""
    args = {
        "mode": "Most",
        "resources": [
            {"name": "cpu", "weight": 5},
            {"name": "memory", "weight": 1},
            {"name": "cpu", "weight": 2},
        ],
    }
    p = plugin(NAME, args)
    assert p.weights == {"cpu": 2, "memory": 1}
    assert p.weight_sum == 3
    table = NodeTable([node("a", 3000, 30)])
    assert scores(small(), table, args)[0] == [(3000 * 2 + 30) // 3]


@pytest.mark.parametrize(
    ("args", "path", "problem"),
    [
        # NewAllocatable: "invalid mode, got %s" (case-sensitive)
        ({"mode": "least"}, "mode", "invalid mode, got least"),
        ({"mode": "Balanced"}, "mode", "invalid mode, got Balanced"),
        ({"mode": 1}, "mode", "must be Least or Most (got 1)"),
        # the mode is checked before the weights, as upstream
        (
            {"mode": "x", "resources": [{"name": "cpu", "weight": 0}]},
            "mode",
            "invalid mode, got x",
        ),
        # validateResources: the first non-positive weight, in order
        (
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "gpu", "weight": -2}]},
            "resources[1].weight",
            "resource Weight of gpu should be a positive value, got -2",
        ),
        (
            {"resources": [{"name": "memory"}]},
            "resources[0].weight",
            "resource Weight of memory should be a positive value, got 0",
        ),
        # decoding: what Go's strict decoder refuses, with our messages
        ({"resources": [{"name": "cpu", "weight": 2**63}]}, "resources[0].weight", "int64"),
        ({"resources": [{"name": "cpu", "weight": 1.5}]}, "resources[0].weight", "integer"),
        ({"resources": [{"name": "cpu", "weight": True}]}, "resources[0].weight", "integer"),
        ({"resources": "cpu"}, "resources", "must be a list"),
        ({"resources": ["cpu"]}, "resources[0]", "must be a map"),
        ({"resources": [{"name": 3, "weight": 1}]}, "resources[0].name", "resource name"),
        ({"resources": [{"name": "cpu", "wieght": 1}]}, "resources[0].wieght", "unknown field"),
        ({"modes": "Most"}, "modes", "takes mode, resources"),
    ],
)
def test_args_validation(args: dict[str, Any], path: str, problem: str) -> None:
    with pytest.raises(PluginArgsError) as raised:
        plugin(NAME, args)
    assert raised.value.field == path
    assert problem in raised.value.problem


def test_score_and_normalize_only() -> None:
    p = plugin(NAME)
    assert implements(p, "score")
    for point in ("preScore", "filter", "preFilter", "reserve"):
        assert not implements(p, point)


# -- configuration and a real scheduler ------------------------------------------------

HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def profile_doc(mode: str, name: str = "eventsched") -> dict[str, Any]:
    return {
        "schedulerName": name,
        "plugins": {"multiPoint": {"enabled": [{"name": NAME, "weight": 5}]}},
        "pluginConfig": [
            {
                "name": NAME,
                "args": {
                    "apiVersion": "kubescheduler.config.x-k8s.io/v1",
                    "kind": "NodeResourcesAllocatableArgs",
                    "mode": mode,
                    "resources": [
                        {"name": "cpu", "weight": 1000000},
                        {"name": "memory", "weight": 1},
                    ],
                },
            }
        ],
    }


def test_configuration_enables_it_with_args() -> None:
    """scheme_test.go's v1 file with NodeResourcesAllocatable args, through our loader."""
    config = parse_config(
        {**HEAD, "profiles": [profile_doc("Most")]}, "sched.yaml", full_registry()
    )
    (profile,) = config.profiles
    score = {ref.name: ref.weight for ref in profile.at("score")}
    assert score[NAME] == 5
    assert profile.plugin_args[NAME] == {
        "mode": "Most",
        "resources": [{"name": "cpu", "weight": 1000000}, {"name": "memory", "weight": 1}],
    }


def test_configuration_errors_name_the_arg() -> None:
    doc = profile_doc("Fewest")
    with pytest.raises(ConfigError) as caught:
        parse_config({**HEAD, "profiles": [doc]}, "sched.yaml", full_registry())
    assert caught.value.field == "profiles[0].pluginConfig[0].args.mode"
    assert "invalid mode, got Fewest" in str(caught.value)


@pytest.mark.parametrize(("mode", "expected"), [("Least", "small"), ("Most", "large")])
def test_scheduler_places_by_mode(store: EventStore, mode: str, expected: str) -> None:
    """The real Scheduler on the simulated cluster: Least packs onto the smaller node."""
    config = parse_config({**HEAD, "profiles": [profile_doc(mode)]}, "sched.yaml", full_registry())
    nodes = [
        Node.from_manifest(
            {
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
            }
        )
        for name, cpu, memory in (("small", "2", "4Gi"), ("large", "16", "64Gi"))
    ]
    workload = Pod.from_manifest(
        {
            "metadata": {"name": "w", "namespace": "default", "uid": "uid-w"},
            "spec": {
                "schedulerName": "eventsched",
                "containers": [
                    {"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}
                ],
            },
        }
    )
    cluster = SimulatedCluster(nodes, [workload])
    scheduler = Scheduler(store, cluster, config.profiles, full_registry(), SchedulerOptions())
    scheduler.start()
    scheduler.run(until_idle=True)
    scheduler.stop()
    assert {p.name: p.node_name for p in cluster.list_pods()} == {"w": expected}
