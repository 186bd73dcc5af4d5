"""Small clusters and profiles for scheduler tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import EventStore
from eventsched.framework import CycleState, Handle, PluginRef, Profile, Registry, Status
from eventsched.metrics import SchedulerMetrics
from eventsched.model import Node, Pod
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions


def node(name: str, cpu: str = "4", memory: str = "8Gi", taints: list[dict] | None = None) -> Node:
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {"taints": taints or []},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
        }
    )


def pod(
    name: str,
    cpu: str = "500m",
    memory: str = "256Mi",
    namespace: str = "default",
    uid: str | None = None,
) -> Pod:
    return Pod.from_manifest(
        {
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": uid or f"uid-{namespace}-{name}",
            },
            "spec": {
                "schedulerName": "eventsched",
                "containers": [
                    {"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
                ],
            },
        }
    )


class FailingPreBind:
    """PreBind that fails, with a Reserve that counts what it reserved and unreserved."""

    name = "FailingPreBind"

    def __init__(self, args: Mapping[str, Any], handle: Handle, features: object = None) -> None:
        self.fail = str(args.get("fail", "preBind"))
        self.reserved: list[str] = []
        self.unreserved: list[str] = []

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        state.write("FailingPreBind", node_name)
        self.reserved.append(pod.name)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        assert state.read("FailingPreBind") == node_name
        self.unreserved.append(pod.name)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return Status.as_error("volume did not attach") if self.fail == "preBind" else None


def registry_with_test_plugins() -> Registry:
    registry = in_tree_registry()
    registry.register("FailingPreBind", FailingPreBind)
    return registry


def profile_with(
    point_plugins: dict[str, tuple[str, ...]], args: dict[str, Any] | None = None
) -> Profile:
    base = default_profile()
    plugins = dict(base.plugins)
    for point, names in point_plugins.items():
        plugins[point] = tuple(PluginRef(n) for n in names) + tuple(plugins.get(point, ()))
    return Profile(base.scheduler_name, plugins, args or {})


def metered(
    store: EventStore,
    cluster: SimulatedCluster,
    profile: Profile | None = None,
    registry: Registry | None = None,
    backoff: float = 30,
    version: str = "1.28",
) -> tuple[Scheduler, SchedulerMetrics]:
    """A started Scheduler with its own SchedulerMetrics (the default profile and in-tree
    plugins unless given; `backoff`: initial and maximum backoff in seconds; `version`: the
    Kubernetes version whose families the metrics show)."""
    metrics = SchedulerMetrics(version=version)
    scheduler = Scheduler(
        store,
        cluster,
        [profile or default_profile()],
        registry or in_tree_registry(),
        SchedulerOptions(initial_backoff=backoff, max_backoff=backoff),
        metrics=metrics,
    )
    scheduler.start()
    return scheduler, metrics


def metered_run(
    store: EventStore,
    cluster: SimulatedCluster,
    profile: Profile | None = None,
    registry: Registry | None = None,
    version: str = "1.28",
) -> SchedulerMetrics:
    """`metered`, run until idle and stopped: the metrics of that run."""
    scheduler, metrics = metered(store, cluster, profile, registry, version=version)
    scheduler.run(until_idle=True)
    scheduler.stop()
    return metrics


def started_scheduler(store: EventStore, cluster: SimulatedCluster) -> Scheduler:
    """A started Scheduler with the default profile and short backoffs, for tests that
    change the cluster between runs until idle."""
    scheduler = Scheduler(
        store,
        cluster,
        [default_profile()],
        in_tree_registry(),
        SchedulerOptions(initial_backoff=0.05, max_backoff=0.1),
    )
    scheduler.start()
    return scheduler
