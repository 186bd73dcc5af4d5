"""`eventsched bench --workload NAME`: kube-scheduler's scheduler_perf workloads, tiny.

The workloads repeat `test/integration/scheduler_perf/config/performance-config.yaml`
(v1.28) and its templates; these runs are 20 nodes and 30 measured pods, so
they check what a run builds and logs, never how fast it is.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import eventsched.benchmarks.workload_bench
import eventsched.benchmarks.workloads
from eventsched.cli.main import main
from eventsched.config import default_profile
from eventsched.events import EventStore
from eventsched.framework import PluginRef
from eventsched.plugins import in_tree_registry

NODES, PODS = 20, 30
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


@pytest.fixture(scope="module")
def workloads() -> ModuleType:
    return eventsched.benchmarks.workloads


def _required(kind: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda r: r["affinity"][kind]["requiredDuringSchedulingIgnoredDuringExecution"][0]


def _preferred(kind: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda r: r["affinity"][kind]["preferredDuringSchedulingIgnoredDuringExecution"][0]


def _node_term(r: Mapping[str, Any]) -> Any:
    required = r["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    return required["nodeSelectorTerms"][0]["matchExpressions"][0]


BOTH_NAMESPACES = ["sched-1", "sched-0"]

#: What each workload's measured pods carry, as the log's pod_observed records keep it
#: (the upstream template the workload names: pod-default.yaml, pod-with-*.yaml).
FEATURES: dict[str, Callable[[Mapping[str, Any]], bool]] = {
    "SchedulingBasic": lambda r: (
        r["requests"] == {"cpu": 100, "memory": 500 * 2**20} and "affinity" not in r
    ),
    "SchedulingNodeAffinity": lambda r: (
        _node_term(r) == {"key": ZONE, "operator": "In", "values": ["zone1", "zone2"]}
    ),
    "TopologySpreading": lambda r: (
        r["topologySpread"]
        == [
            {
                "maxSkew": 5,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"color": "blue"}},
            }
        ]
    ),
    "PreferredTopologySpreading": lambda r: (
        r["topologySpread"][0]["whenUnsatisfiable"] == "ScheduleAnyway"
        and r["topologySpread"][0]["maxSkew"] == 5
    ),
    "SchedulingPodAntiAffinity": lambda r: (
        r["labels"] == {"color": "green"}
        and _required("podAntiAffinity")(r)
        == {
            "labelSelector": {"matchLabels": {"color": "green"}},
            "topologyKey": HOSTNAME,
            "namespaces": BOTH_NAMESPACES,
        }
    ),
    "SchedulingPodAffinity": lambda r: (
        r["labels"] == {"color": "blue"}
        and _required("podAffinity")(r)
        == {
            "labelSelector": {"matchLabels": {"color": "blue"}},
            "topologyKey": ZONE,
            "namespaces": BOTH_NAMESPACES,
        }
    ),
    "SchedulingPreferredPodAffinity": lambda r: (
        _preferred("podAffinity")(r)
        == {
            "weight": 1,
            "podAffinityTerm": {
                "labelSelector": {"matchLabels": {"color": "red"}},
                "topologyKey": HOSTNAME,
                "namespaces": BOTH_NAMESPACES,
            },
        }
    ),
    "SchedulingPreferredPodAntiAffinity": lambda r: (
        r["labels"] == {"color": "yellow"}
        and _preferred("podAntiAffinity")(r)
        == {
            "weight": 1,
            "podAffinityTerm": {
                "labelSelector": {"matchLabels": {"color": "yellow"}},
                "topologyKey": HOSTNAME,
                "namespaces": BOTH_NAMESPACES,
            },
        }
    ),
    # Plain pods, measured among init pods carrying every kind of term (checked below).
    "MixedSchedulingBasePod": lambda r: "affinity" not in r and "labels" not in r,
    # pod-high-priority.yaml: spec.priority 10, 3 CPUs (tests/cli/test_bench_preemption.py).
    "PreemptionBasic": lambda r: (
        r["priority"] == 10 and r["requests"] == {"cpu": 3000, "memory": 500 * 2**20}
    ),
    # pod-default.yaml, scheduled while the churn op's high-priority pods preempt.
    "PreemptionAsync": lambda r: (
        r["priority"] == 0 and r["requests"] == {"cpu": 100, "memory": 500 * 2**20}
    ),
}


def run_workload(
    capsys: pytest.CaptureFixture[str], url: str, name: str, *extra: str
) -> tuple[int, str]:
    capsys.readouterr()
    argv = ["bench", "--workload", name, "--nodes", str(NODES), "--pods", str(PODS)]
    code = main([*argv, *extra, "--db", url])
    return code, capsys.readouterr().out


def observed_pods(url: str) -> dict[tuple[str, str], Mapping[str, Any]]:
    with EventStore.connect(url) as store:
        return {
            (e.data["namespace"], e.data["name"]): e.data
            for e in store.read(kinds=["pod_observed"])
        }


def decided(url: str) -> Counter[tuple[str | None, str | None]]:
    with EventStore.connect(url) as store:
        return Counter((e.namespace, e.name) for e in store.read(kinds=["bound", "unschedulable"]))


def test_every_workload_is_checked_here(workloads: ModuleType) -> None:
    assert set(workloads.names()) == set(FEATURES)


@pytest.mark.parametrize("name", list(FEATURES))
def test_each_measured_pod_is_decided_in_the_log_and_carries_the_workload_feature(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, workloads: ModuleType, name: str
) -> None:
    url = f"sqlite:///{tmp_path}/bench.db"
    code, out = run_workload(capsys, url, name, "--json")
    assert code == 0
    result = json.loads(out)
    workload = workloads.lookup(name)
    size = workloads.size(workload, NODES, PODS)
    assert result["workload"] == name and result["nodes"] == NODES
    assert result["measured_pods"] == PODS
    assert result["init_pods"] == size.init_pods * len(workload.init_ops)
    assert result["bound"] + result["unschedulable"] == PODS
    assert result["threshold"] == workload.threshold

    observed = observed_pods(url)
    init_namespaces = {op.namespace for op in workload.init_ops}
    measured = [key for key in observed if key[0] == workload.measured.namespace]
    # A churn op's pods (PreemptionAsync's namespace-2), if it ticked, are neither.
    init = [key for key in observed if key[0] in init_namespaces]
    assert len(measured) == PODS and len(init) == result["init_pods"]
    decisions = decided(url)
    # Every pod, init or measured, has a decision in the log: bound or unschedulable.
    assert all(decisions[key] >= 1 for key in (*measured, *init))
    bad = [key for key in measured if not FEATURES[name](observed[key])]
    assert not bad, f"{name}: measured pods without the workload's feature: {bad[:3]}"


def test_mixed_init_pods_carry_every_kind_of_affinity_term(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """MixedSchedulingBasePod: five init ops in sched-0 (default, required and preferred
    affinity and anti-affinity), upstream's createPods ops 2 to 6."""
    url = f"sqlite:///{tmp_path}/bench.db"
    assert run_workload(capsys, url, "MixedSchedulingBasePod")[0] == 0
    init = [r for (ns, _), r in observed_pods(url).items() if ns == "sched-0"]
    colors = Counter((r.get("labels") or {}).get("color") for r in init)
    # 60 init pods at 30 measured (upstream: 2000 per op at 5000 measured): 12 per op.
    assert colors == {None: 12, "blue": 12, "green": 12, "red": 12, "yellow": 12}
    kinds = {kind for r in init for kind in (r.get("affinity") or {})}
    assert kinds == {"podAffinity", "podAntiAffinity"}


def test_nodes_are_labelled_as_upstream_labels_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """labelNodePrepareStrategy gives the zone values in turn; every node has its hostname
    label (test/utils/runners.go, test/integration/framework/perf_utils.go)."""
    url = f"sqlite:///{tmp_path}/bench.db"
    assert run_workload(capsys, url, "TopologySpreading")[0] == 0
    with EventStore.connect(url) as store:
        nodes = [e.data for e in store.read(kinds=["node_observed"])]
    assert len(nodes) == NODES
    assert all(n["labels"][HOSTNAME] == n["name"] for n in nodes)
    assert Counter(n["labels"][ZONE] for n in nodes) == {"moon-1": 7, "moon-2": 7, "moon-3": 6}
    assert {(n["allocatable"]["cpu"], n["allocatable"]["pods"]) for n in nodes} == {(4000, 110)}


def test_counts_default_to_upstream_and_init_pods_scale_with_measured_pods(
    workloads: ModuleType,
) -> None:
    basic = workloads.lookup("SchedulingBasic")
    assert workloads.size(basic) == workloads.Size(5000, 1000, 10000)
    assert workloads.size(basic, 20, 30) == workloads.Size(20, 3, 30)
    # Nodes alone: both counts scale with them (1/250 of 1,000 + 10,000).
    assert workloads.size(basic, nodes=20) == workloads.Size(20, 4, 40)
    anti = workloads.lookup("SchedulingPodAntiAffinity")
    assert workloads.size(anti, nodes=1).measured_pods == 1  # 0.4 rounds to none: one
    assert workloads.size(anti, pods=30) == workloads.Size(5000, 15, 30)
    # At 500 nodes, upstream's 500Nodes variant: 100 init + 400 measured (1,000 + 2,000
    # would not fit one per node).
    assert workloads.size(anti, nodes=500) == workloads.Size(500, 100, 400)
    assert workloads.size(anti, 500, 40) == workloads.Size(500, 10, 40)


def test_text_line_names_the_workload_counts_threshold_and_missing_plugins(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out = run_workload(capsys, f"sqlite:///{tmp_path}/b.db", "SchedulingPodAntiAffinity")
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith(f"SchedulingPodAntiAffinity: {NODES} nodes, 15 init + 30 measured")
    assert " on sqlite: " in first and " pods/s (upstream threshold 60 at 5000 nodes" in first
    assert " events/s, " in first and " log bytes/pod " in first
    missing = "InterPodAffinity" not in default_profile().plugin_names()
    assert ("without InterPodAffinity" in out) == missing


def test_list_and_unknown_names(capsys: pytest.CaptureFixture[str], workloads: ModuleType) -> None:
    capsys.readouterr()
    assert main(["bench", "--workload", "list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in listed] == list(workloads.names())
    assert "SchedulingBasic: 5000 nodes, 1000 init + 10000 measured pods" in listed[0]
    assert main(["bench", "--workload", "list", "--json"]) == 0
    assert [w["name"] for w in json.loads(capsys.readouterr().out)] == list(workloads.names())
    assert main(["bench", "--workload", "SchedulingBasics"]) == 2
    err = capsys.readouterr().err
    assert "unknown workload 'SchedulingBasics'; one of: SchedulingBasic, " in err


@pytest.mark.skipif(
    "InterPodAffinity" not in in_tree_registry(), reason="InterPodAffinity is not registered yet"
)
def test_anti_affinity_pods_never_share_a_node_once_the_plugin_runs(tmp_path: Path) -> None:
    """With InterPodAffinity in the profile, SchedulingPodAntiAffinity's pods (both
    namespaces) take one node each: 15 init pods leave 5 of 20 nodes for 30 measured."""
    profile = default_profile()
    plugins = dict(profile.plugins)
    for point, weight in (("preFilter", 0), ("filter", 0), ("preScore", 0), ("score", 2)):
        refs = plugins.get(point, ())
        if all(ref.name != "InterPodAffinity" for ref in refs):
            plugins[point] = (*refs, PluginRef("InterPodAffinity", weight))
    url = f"sqlite:///{tmp_path}/bench.db"
    result = eventsched.benchmarks.workload_bench.run(
        "SchedulingPodAntiAffinity", url, NODES, PODS, profile=replace(profile, plugins=plugins)
    )
    assert (result.bound, result.unschedulable, result.missing_plugins) == (5, 25, [])
    with EventStore.connect(url) as store:
        nodes = Counter(e.node for e in store.read(kinds=["bound"]))
    assert len(nodes) == NODES and set(nodes.values()) == {1}
