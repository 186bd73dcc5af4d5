"""Several profiles in one process: each pod goes to the profile its schedulerName names."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from eventsched.cluster import SimulatedCluster
from eventsched.config.file import parse_config
from eventsched.events import EventStore
from eventsched.framework import Profile
from eventsched.model import Pod
from eventsched.plugins import full_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.scheduler.helpers import node, pod

REGISTRY = full_registry()
HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
#: Two profiles that disagree: spread (the default LeastAllocated) and pack (MostAllocated,
#: weighted over NodeResourcesBalancedAllocation, which otherwise prefers the idle node).
PROFILES: list[dict[str, Any]] = [
    {"schedulerName": "eventsched"},
    {
        "schedulerName": "eventsched-pack",
        "plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}},
        "pluginConfig": [
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
        ],
    },
]


def profiles(*docs: dict[str, Any]) -> tuple[Profile, ...]:
    return parse_config({**HEAD, "profiles": list(docs)}, "test", REGISTRY).profiles


def of(scheduler_name: str, name: str) -> Pod:
    return replace(pod(name, cpu="1"), scheduler_name=scheduler_name)


def run(store: EventStore, cluster: SimulatedCluster, resolved: tuple[Profile, ...]) -> None:
    scheduler = Scheduler(store, cluster, resolved, REGISTRY, SchedulerOptions())
    scheduler.start()
    scheduler.run(until_idle=True)
    scheduler.stop()


def test_each_pod_is_scheduled_by_its_own_profile(store: EventStore) -> None:
    # "busy" already runs 2 of its 4 cpus: spreading avoids it, packing prefers it.
    busy = replace(pod("running", cpu="2"), node_name="busy", scheduler_name="other")
    cluster = SimulatedCluster(
        [node("busy"), node("idle")],
        [busy, of("eventsched", "spread"), of("eventsched-pack", "pack"), of("other", "theirs")],
    )
    run(store, cluster, profiles(*PROFILES))
    placed = {p.name: p.node_name for p in cluster.list_pods()}
    assert placed["spread"] == "idle"
    assert placed["pack"] == "busy"
    assert placed["theirs"] == ""  # another scheduler's pod is left alone
    started = {e.name: e.scheduler for e in store.read(kinds=["attempt_started"])}
    assert started == {"spread": "eventsched", "pack": "eventsched-pack"}


def test_config_loaded_is_recorded_per_profile_and_again_only_when_it_changes(
    store: EventStore,
) -> None:
    def loaded() -> list[tuple[str, str]]:
        return [(e.scheduler, e.data["digest"]) for e in store.read(kinds=["config_loaded"])]

    run(store, SimulatedCluster([node("n")], []), profiles(*PROFILES))
    first = loaded()
    assert [name for name, _ in first] == ["eventsched", "eventsched-pack"]
    assert first[0][1] != first[1][1]
    run(store, SimulatedCluster([node("n")], []), profiles(*PROFILES))
    assert loaded() == first  # same configuration: nothing new
    changed = [PROFILES[0], {**PROFILES[1], "percentageOfNodesToScore": 30}]
    run(store, SimulatedCluster([node("n")], []), profiles(*changed))
    now = loaded()
    assert now[:2] == first and len(now) == 3
    assert now[2][0] == "eventsched-pack" and now[2][1] != first[1][1]
    attempt_digests = {e.data["configDigest"] for e in store.read(kinds=["attempt_started"])}
    assert attempt_digests <= {digest for _, digest in now}
