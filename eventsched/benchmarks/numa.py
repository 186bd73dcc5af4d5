"""The NUMA benchmark's cluster and profile (`eventsched bench --numa [ZONES]`).

Every generated node gets a NodeResourceTopology (`topology.node.k8s.io/v1alpha2`) with
ZONES NUMA zones (`node-0` ...) under the kubelet's `single-numa-node` policy in
`container` scope. The zones split the node's allocatable memory evenly and its
allocatable CPU in whole CPUs (the kubelet hands out exclusive CPUs whole): each zone
has `allocatable cpu / ZONES` rounded down to a whole CPU, so a 4-CPU node (3920m
allocatable) has zones of 1 CPU and a container asking for 2 CPUs fits the node but no
zone of it. Zones are fully available and stay so: the simulation has no agent that
updates a NodeResourceTopology as pods bind (docs/plugins/noderesourcetopology.md).

Every pod becomes Guaranteed (limits equal to requests, CPU rounded up to whole CPUs),
else NodeResourceTopologyMatch would pass it everywhere. The profile is the default one
with NodeResourceTopologyMatch's Filter (last) and Score (weight 1, its default
LeastAllocated strategy).
"""

from __future__ import annotations

import dataclasses

from eventsched.benchmarks.scheduling import Variant
from eventsched.cluster import LoadedCluster
from eventsched.config import default_profile
from eventsched.framework.profile import PluginRef, Profile
from eventsched.model import Pod
from eventsched.model.containers import GUARANTEED, ContainerRequests
from eventsched.model.resources import CPU, MEMORY
from eventsched.plugins import full_registry
from eventsched.plugins.noderesourcetopology.topology import NodeResourceTopology

PLUGIN = "NodeResourceTopologyMatch"
POLICY = "single-numa-node"
SCOPE = "container"


def topology(node_name: str, allocatable: dict[str, int], zones: int) -> NodeResourceTopology:
    """`zones` NUMA zones splitting `allocatable` cpu (whole CPUs) and memory evenly."""
    cpu = allocatable.get(CPU, 0) // zones // 1000 * 1000
    memory = allocatable.get(MEMORY, 0) // zones
    manifest = {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": node_name},
        "attributes": [
            {"name": "topologyManagerPolicy", "value": POLICY},
            {"name": "topologyManagerScope", "value": SCOPE},
        ],
        "zones": [
            {
                "name": f"node-{i}",
                "type": "Node",
                "costs": [
                    {"name": f"node-{j}", "value": 10 if i == j else 20} for j in range(zones)
                ],
                "resources": [
                    {"name": name, "capacity": amount, "allocatable": amount, "available": amount}
                    for name, amount in ((CPU, f"{cpu}m"), (MEMORY, memory))
                ],
            }
            for i in range(zones)
        ],
    }
    return NodeResourceTopology.from_manifest(manifest)


def guaranteed(pod: Pod) -> Pod:
    """The pod with limits equal to its requests, CPU rounded up to whole CPUs, as
    `Pod.from_manifest` reads such a pod (the generated pods have one container)."""
    requests = dict(pod.requests)
    requests[CPU] = max(1000, -(-requests.get(CPU, 0) // 1000) * 1000)
    name = pod.containers[0].name if pod.containers else "app"
    return dataclasses.replace(
        pod,
        requests=requests,
        non_zero=(requests[CPU], requests.get(MEMORY, 0)),
        containers=(ContainerRequests(name, dict(requests)),),
        qos=GUARANTEED,
    )


def with_topology(cluster: LoadedCluster, zones: int) -> LoadedCluster:
    """The cluster with a NodeResourceTopology per node and Guaranteed pods."""
    out = LoadedCluster(nodes=list(cluster.nodes), objects=list(cluster.objects))
    # Replicas share their requests: make each distinct pod shape once.
    made: dict[tuple[str, str], Pod] = {}
    for pod in cluster.pods:
        key = (pod.namespace, pod.owner.name if pod.owner is not None else pod.name)
        shape = made.get(key)
        if shape is None:
            shape = made[key] = guaranteed(pod)
        out.pods.append(
            dataclasses.replace(
                pod,
                requests=shape.requests,
                non_zero=shape.non_zero,
                containers=shape.containers,
                qos=GUARANTEED,
            )
        )
    for node in cluster.nodes:
        out.objects.append(topology(node.name, dict(node.allocatable), zones))
    return out


def profile() -> Profile:
    base = default_profile()
    plugins = dict(base.plugins)
    plugins["filter"] = (*base.at("filter"), PluginRef(PLUGIN))
    plugins["score"] = (*base.at("score"), PluginRef(PLUGIN, 1))
    return dataclasses.replace(base, plugins=plugins)


def variant(zones: int) -> Variant:
    """The scheduling benchmark's Variant (scheduling.py) for `zones` NUMA zones."""
    return Variant(lambda c: with_topology(c, zones), profile(), full_registry())
