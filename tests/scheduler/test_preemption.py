"""DefaultPreemption end to end on the simulated cluster: decision, log, evictions, retry.

Each test runs the real Scheduler with the default profile (DefaultPreemption at
postFilter) on SQLite and PostgreSQL, and checks what kube-scheduler v1.28 would
have done (the victims, the node, the nomination, the messages) and that the log
says it in order: `preempted` durable before the first `evicted`, and replay
recomputes every attempt, the preemptions included.
"""

from __future__ import annotations

from typing import Any

from eventsched.audit.replay import Selection, replay
from eventsched.cluster.sim import SimulatedCluster
from eventsched.events import EventStore, StoredEvent
from eventsched.model import Pod
from eventsched.model.disruption import PodDisruptionBudget
from eventsched.model.preemptionwrites import preempted_event_message
from eventsched.plugins import in_tree_registry
from tests.scheduler.helpers import node
from tests.scheduler.test_scheduler import run_scheduler


def ppod(
    name: str,
    cpu: str,
    priority: int,
    node_name: str = "",
    start: str = "",
    **spec: Any,
) -> Pod:
    manifest: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {
            "schedulerName": "eventsched",
            "priority": priority,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
            **spec,
        },
    }
    if node_name:
        manifest["spec"]["nodeName"] = node_name
    if start:
        manifest["status"] = {"startTime": start}
    return Pod.from_manifest(manifest)


def kinds_of(store: EventStore, kinds: list[str]) -> list[StoredEvent]:
    return list(store.read(kinds=kinds))


def placed(cluster: SimulatedCluster) -> dict[str, str]:
    return {p.name: p.node_name for p in cluster.list_pods()}


def test_high_priority_pod_evicts_the_fewest_lowest_priority_pods(store: EventStore) -> None:
    # a: two victims needed (1 cpu each, priorities 1 and 2); b: one victim of priority 5.
    # pickOneNodeForPreemption: no PDBs; the highest victim priority is lower on a (2 < 5).
    cluster = SimulatedCluster(
        [node("a", cpu="3"), node("b", cpu="3")],
        [
            ppod("a-low", "1", 1, "a"),
            ppod("a-mid", "1", 2, "a"),
            ppod("a-keep", "1", 50, "a"),
            ppod("b-high", "2", 5, "b"),
            ppod("b-keep", "1", 60, "b"),
            ppod("critical", "2", 100),
        ],
    )
    run_scheduler(store, cluster)

    assert placed(cluster) == {
        "a-keep": "a",
        "b-high": "b",
        "b-keep": "b",
        "critical": "a",
    }
    (decision,) = kinds_of(store, ["preempted"])
    assert decision.name == "critical" and decision.node == "a"
    assert [v["name"] for v in decision.data["victims"]] == ["a-mid", "a-low"]
    assert decision.data["chosenBy"] == "lowest highest-victim priority"
    assert sorted(c["node"] for c in decision.data["candidates"]) == ["a", "b"]
    evicted = kinds_of(store, ["evicted"])
    assert sorted(e.name for e in evicted) == ["a-low", "a-mid"]
    assert all(e.attempt == decision.attempt and e.data["outcome"] == "deleted" for e in evicted)
    # The decision was durable before the first eviction: an earlier batch.
    assert decision.position < min(e.position for e in evicted)
    # The victims' Events name the preemptor; the preemptor was nominated, then bound.
    preempted = [e for e in cluster.events if e.reason == "Preempted"]
    assert sorted(e.pod_key for e in preempted) == ["default/a-low", "default/a-mid"]
    assert all(e.message == preempted_event_message("a") for e in preempted)
    assert all(e.related_key == "default/critical" for e in preempted)
    (first_failure,) = [e for e in kinds_of(store, ["unschedulable"]) if e.name == "critical"]
    assert first_failure.data["nominatedNodeName"] == "a"
    assert first_failure.data["message"] == "0/2 nodes are available: 2 Insufficient cpu."
    report = replay(store, in_tree_registry(), Selection())
    assert report.reproduced == report.attempts, report.to_dict()


def test_preemption_policy_never_evicts_nothing(store: EventStore) -> None:
    cluster = SimulatedCluster(
        [node("a", cpu="2")],
        [ppod("low", "2", 0, "a"), ppod("polite", "1", 100, preemptionPolicy="Never")],
    )
    run_scheduler(store, cluster)
    assert placed(cluster) == {"low": "a", "polite": ""}
    assert kinds_of(store, ["preempted", "evicted"]) == []
    (failure, *_) = kinds_of(store, ["unschedulable"])
    assert failure.data["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: not eligible due to preemptionPolicy=Never.."
    )


def test_a_pdb_protected_pod_is_reprieved_when_another_victim_will_do(store: EventStore) -> None:
    # One node; two equal-priority candidates for one victim slot. The budget allows no
    # disruption of app=db, so the db pod is reprieved first and the cache pod goes.
    db = ppod("db", "1", 1, "a", start="2026-11-24T08:00:00Z")
    db = Pod.from_record({**db.to_record(), "labels": {"app": "db"}})
    cache = ppod("cache", "1", 1, "a", start="2026-11-24T08:00:00Z")
    cluster = SimulatedCluster(
        [node("a", cpu="2")],
        [db, cache, ppod("urgent", "1", 100)],
        objects=[
            PodDisruptionBudget.from_manifest(
                {
                    "metadata": {"namespace": "default", "name": "db"},
                    "spec": {"selector": {"matchLabels": {"app": "db"}}},
                    "status": {"disruptionsAllowed": 0},
                }
            )
        ],
    )
    run_scheduler(store, cluster)
    assert placed(cluster) == {"db": "a", "urgent": "a"}
    (decision,) = kinds_of(store, ["preempted"])
    assert decision.data["victims"] == [
        {
            "uid": "uid-cache",
            "namespace": "default",
            "name": "cache",
            "priority": 1,
            "pdbViolation": False,
        }
    ]


def test_a_nominated_pod_holds_its_node_against_lower_priority_pods(store: EventStore) -> None:
    # `critical` preempts `victim` and is nominated to a; `filler` (priority 10) would fit
    # where the victim was, but the nominated pod counts there, so it does not take it.
    cluster = SimulatedCluster(
        [node("a", cpu="4")],
        [
            ppod("victim", "3", 0, "a"),
            ppod("critical", "3", 100),
            ppod("filler", "3", 10),
        ],
    )
    run_scheduler(store, cluster)
    assert placed(cluster)["critical"] == "a"
    assert placed(cluster)["filler"] == ""
    failures = [e for e in kinds_of(store, ["unschedulable"]) if e.name == "filler"]
    assert failures[0].data["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    report = replay(store, in_tree_registry(), Selection())
    assert report.reproduced == report.attempts, report.to_dict()
