"""Cost per pod of InterPodAffinity's PreFilter+Filter+PreScore+Score+NormalizeScore.

    .venv/bin/python -m eventsched.benchmarks.interpodaffinity [--nodes 5000] [--pods 2000]

Over one table of `--nodes` nodes (hostname, 10 zones) and `--pods` placed
pods (50 apps), for an incoming pod with one required anti-affinity term
(app, hostname) and for a pod without terms. "warm": the table does not
change between pods (the index of placed pods' terms is reused); "cold":
the table's generation moves before each pod, as when every cycle binds a
pod, so the index is rebuilt each time. The placed pods either have no
affinity, or each has the same required anti-affinity as its replicas.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

from eventsched.framework import CycleState, Handle
from eventsched.model import Node, NodeTable, Pod
from eventsched.plugins.interpodaffinity import InterPodAffinity

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def _node(i: int) -> Node:
    name = f"node-{i}"
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": {HOSTNAME: name, ZONE: f"zone-{i % 10}"}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}},
        }
    )


def _anti(app: str) -> dict[str, Any]:
    selector = {"matchLabels": {"app": app}}
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": selector, "topologyKey": HOSTNAME}
            ]
        }
    }


def _pod(name: str, app: str, affinity: dict[str, Any] | None) -> Pod:
    meta = {"name": name, "namespace": "default", "uid": name, "labels": {"app": app}}
    spec = {"containers": [{"name": "c"}], "affinity": affinity or {}}
    return Pod.from_manifest({"metadata": meta, "spec": spec})


def build(nodes: int, pods: int, placed_affinity: bool, seed: int = 1) -> NodeTable:
    rng = np.random.default_rng(seed)
    table = NodeTable(_node(i) for i in range(nodes))
    for i, row in enumerate(rng.integers(0, nodes, pods).tolist()):
        app = f"app-{i % 50}"
        table.add_pod(
            _pod(f"placed-{i}", app, _anti(app) if placed_affinity else None), table.names[row]
        )
    return table


def one_pod(plugin: InterPodAffinity, table: NodeTable, pod: Pod) -> None:
    state = CycleState()
    rows = np.arange(len(table))
    _, status = plugin.pre_filter(state, pod, table)
    if status is None:
        rows = rows[plugin.filter_batch(state, pod, table, rows).passed]
    if plugin.pre_score(state, pod, table, rows) is None:
        scores = plugin.score_batch(state, pod, table, rows)
        plugin.normalize_score(state, pod, scores, rows)


def per_pod_us(table: NodeTable, pod: Pod, cold: bool, repeat: int) -> float:
    """Median µs of one pod's InterPodAffinity calls; `cold` moves the table's generation first."""
    plugin = InterPodAffinity({}, Handle(table))
    one_pod(plugin, table, pod)
    samples = []
    for _ in range(repeat):
        if cold:
            table.generation += 1
        start = time.perf_counter()
        one_pod(plugin, table, pod)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args()
    incoming = {
        "one required anti-affinity term": _pod("incoming-anti", "app-7", _anti("app-7")),
        "no terms": _pod("incoming-plain", "app-7", None),
    }
    print(f"{args.nodes} nodes, {args.pods} placed pods; median of {args.repeat}, µs per pod")
    for placed_affinity in (False, True):
        table = build(args.nodes, args.pods, placed_affinity)
        placed = "placed pods: anti-affinity" if placed_affinity else "placed pods: no affinity"
        for label, pod in incoming.items():
            warm = per_pod_us(table, pod, False, args.repeat)
            cold = per_pod_us(table, pod, True, args.repeat)
            print(f"  {placed:28} | {label:32} | warm {warm:7.0f} | cold {cold:7.0f}")


if __name__ == "__main__":
    main()
