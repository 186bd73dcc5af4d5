"""NodeResourceTopologyMatch in the real Scheduler on the simulated cluster, its nodes and
NodeResourceTopologies read from manifests as `eventsched simulate` reads them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from eventsched.audit.explain import explain_pod
from eventsched.cli.explain import render
from eventsched.cluster import SimulatedCluster
from eventsched.cluster.manifests import load_manifests
from eventsched.config.file import parse_config
from eventsched.events import EventStore
from eventsched.plugins import full_registry
from eventsched.plugins.noderesourcetopology.topology import NodeResourceTopology
from eventsched.scheduler import Scheduler, SchedulerOptions

REGISTRY = full_registry()
PLUGIN = "NodeResourceTopologyMatch"
CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "eventsched",
            "plugins": {
                "filter": {"enabled": [{"name": PLUGIN}]},
                "score": {"enabled": [{"name": PLUGIN, "weight": 10}]},
            },
        }
    ],
}


def node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": "16", "memory": "32Gi", "pods": "110"}},
    }


def topology(name: str, cpus_per_cell: int) -> dict[str, Any]:
    cells = [
        {
            "name": f"node-{i}",
            "type": "Node",
            "resources": [
                {"name": "cpu", "capacity": 8, "allocatable": 8, "available": cpus_per_cell},
                {"name": "memory", "capacity": "16Gi", "allocatable": "16Gi", "available": "16Gi"},
            ],
        }
        for i in range(2)
    ]
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": name},
        "attributes": [
            {"name": "topologyManagerPolicy", "value": "single-numa-node"},
            {"name": "topologyManagerScope", "value": "container"},
        ],
        "zones": cells,
    }


def pod(name: str, cpu: str) -> dict[str, Any]:
    resources = {"cpu": cpu, "memory": "1Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": "eventsched",
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "resources": {"requests": resources, "limits": resources},
                }
            ],
        },
    }


def test_the_scheduler_places_pods_on_a_numa_cell_that_holds_them(
    store: EventStore, tmp_path: Path
) -> None:
    # "fragmented" has 8 free cpus, but 4 per cell; "roomy" has 6 per cell.
    docs = [
        node("fragmented"),
        node("roomy"),
        topology("fragmented", 4),
        topology("roomy", 6),
        pod("six", "6"),
        pod("seven", "7"),
    ]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    loaded = load_manifests(path)
    assert sorted(o.key for o in loaded.objects if isinstance(o, NodeResourceTopology)) == [
        "NodeResourceTopology/fragmented",
        "NodeResourceTopology/roomy",
    ]
    cluster = SimulatedCluster(loaded.nodes, loaded.pods, objects=loaded.objects)
    profiles = parse_config(CONFIG, "test", REGISTRY).profiles
    scheduler = Scheduler(store, cluster, profiles, REGISTRY, SchedulerOptions())
    scheduler.start()
    scheduler.run(until_idle=True)
    scheduler.stop()
    placed = {p.name: p.node_name for p in cluster.list_pods()}
    # The NRT is not updated after binding (no agent in the simulation): "seven" fits no cell.
    assert placed == {"six": "roomy", "seven": ""}
    filtered = [e.data for e in store.read(kinds=["filtered"]) if e.name == "seven"]
    assert filtered[0]["rejections"] == [
        {
            "plugin": PLUGIN,
            "code": "Unschedulable",
            "reasons": ["cannot align container"],
            "nodes": [name],
            "detail": [f"container c: cpu 7 fits no NUMA zone (node-0 has {n}, node-1 has {n})"],
        }
        for name, n in (("fragmented", 4), ("roomy", 6))
    ]
    shown = render(explain_pod(store, "default", "seven"))
    assert (
        "NodeResourceTopologyMatch rejected 2 node(s) (cannot align container): fragmented, roomy"
        in shown
    )
    assert "      roomy: container c: cpu 7 fits no NUMA zone (node-0 has 6, node-1 has 6)" in shown
    # the message stays kube-scheduler's
    assert "0/2 nodes are available: 2 cannot align container." in shown
