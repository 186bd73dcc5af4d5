"""The quota benchmark's cluster and profile (`eventsched bench --quotas N`).

The generated cluster's Deployments are spread over N namespaces (`team-0` ...), each
with an ElasticQuota: min the cluster's allocatable CPU and memory split evenly, max
twice that, so namespaces borrow and the sum of mins binds near the end. The profile is
the default one with CapacityScheduling enabled (PreFilter and PostFilter).
"""

from __future__ import annotations

import dataclasses
import zlib

from eventsched.benchmarks.scheduling import Variant
from eventsched.cluster import LoadedCluster
from eventsched.config import default_profile
from eventsched.framework.profile import PluginRef, Profile
from eventsched.model.objects import Workload
from eventsched.model.resources import CPU, MEMORY
from eventsched.plugins import full_registry
from eventsched.plugins.capacityscheduling.elasticquota import ElasticQuota

PLUGIN = "CapacityScheduling"


def namespace_of(owner: str, quotas: int) -> str:
    return f"team-{zlib.crc32(owner.encode()) % quotas}"


def with_quotas(cluster: LoadedCluster, quotas: int) -> LoadedCluster:
    """The cluster with its pods (and their ReplicaSets) in `quotas` namespaces, each with
    an ElasticQuota."""
    total_cpu = sum(n.allocatable.get(CPU, 0) for n in cluster.nodes)
    total_memory = sum(n.allocatable.get(MEMORY, 0) for n in cluster.nodes)
    share = {CPU: total_cpu // quotas, MEMORY: total_memory // quotas}
    out = LoadedCluster(nodes=list(cluster.nodes))
    for pod in cluster.pods:
        owner = pod.owner.name if pod.owner is not None else pod.name
        out.pods.append(dataclasses.replace(pod, namespace=namespace_of(owner, quotas)))
    for obj in cluster.objects:
        if isinstance(obj, Workload):
            obj = dataclasses.replace(obj, namespace=namespace_of(obj.name, quotas))
        out.objects.append(obj)
    for i in range(quotas):
        name = f"team-{i}"
        maximum = {k: 2 * v for k, v in share.items()}
        out.objects.append(ElasticQuota(name, name, dict(share), maximum))
    return out


def profile() -> Profile:
    base = default_profile()
    plugins = dict(base.plugins)
    plugins["preFilter"] = (*base.at("preFilter"), PluginRef(PLUGIN))
    plugins["postFilter"] = (*base.at("postFilter"), PluginRef(PLUGIN))
    return dataclasses.replace(base, plugins=plugins)


def variant(quotas: int) -> Variant:
    """The scheduling benchmark's Variant (scheduling.py) for `quotas` namespaces."""
    return Variant(lambda c: with_quotas(c, quotas), profile(), full_registry())
