"""`eventsched extender`'s preempt verb over real HTTP, with the bodies kube-scheduler v1.28
sends (`ExtenderPreemptionArgs` in both maps): kube-scheduler's candidates narrowed by the
profile, the call logged as an attempt, and replay deciding it again."""

from __future__ import annotations

from typing import Any

from eventsched.audit import explain_pod
from eventsched.audit.replay import replay
from eventsched.cli.explain import render
from eventsched.events import EventStore
from eventsched.plugins import full_registry
from tests.extenderserver.helpers import (
    node_manifest,
    pod_manifest,
    profile_config,
    running_extender,
)

NODELABEL = profile_config(
    [{"name": "NodeLabel", "weight": 2}],
    [{"name": "NodeLabel", "args": {"requiredLabels": ["disk"]}}],
)
NODES = [
    node_manifest("node-a", {"disk": "ssd"}),
    node_manifest("node-b"),
    node_manifest("node-c", {"disk": "ssd"}),
]


def _bound(name: str, node: str, cpu: str, priority: int) -> dict[str, Any]:
    pod = pod_manifest(name, cpu=cpu)
    pod["spec"].update(nodeName=node, priority=priority)
    pod["status"] = {"phase": "Running", "startTime": "2026-11-25T00:00:00Z"}
    return pod


RUNNING = [
    _bound("low1", "node-a", "2", 1),
    _bound("low2", "node-a", "1500m", 0),
    _bound("low3", "node-b", "3500m", 0),
    _bound("low4", "node-c", "3500m", 0),
]
BY_NAME = {p["metadata"]["name"]: p for p in RUNNING}
#: kube-scheduler's candidates (its own filters know no disk label): every lower pod.
CANDIDATES = {"node-a": ["low1", "low2"], "node-b": ["low3"], "node-c": ["low4"], "node-z": []}


def _preemptor() -> dict[str, Any]:
    pod = pod_manifest("urgent", cpu="2")
    pod["spec"]["priority"] = 100
    return pod


def _meta_args(pod: dict[str, Any]) -> dict[str, Any]:
    victims = {
        node: {"Pods": [{"UID": f"uid-{n}"} for n in names], "NumPDBViolations": 0}
        for node, names in CANDIDATES.items()
    }
    return {"Pod": pod, "NodeNameToVictims": None, "NodeNameToMetaVictims": victims}


def _object_args(pod: dict[str, Any]) -> dict[str, Any]:
    victims = {
        node: {"Pods": [BY_NAME[n] for n in names], "NumPDBViolations": 0}
        for node, names in CANDIDATES.items()
    }
    return {"Pod": pod, "NodeNameToVictims": victims, "NodeNameToMetaVictims": None}


#: node-a: with low2 gone the 2 cpu fit beside low1, which is reprieved; node-b has no
#: disk label (NodeLabel rejects it whatever is evicted); node-z is not in the view.
NARROWED = {
    "node-a": {"Pods": [{"UID": "uid-low2"}], "NumPDBViolations": 0},
    "node-c": {"Pods": [{"UID": "uid-low4"}], "NumPDBViolations": 0},
}


def test_preempt_keeps_the_nodes_and_victims_the_profile_needs(store: EventStore) -> None:
    pod = _preemptor()
    with running_extender(store, NODELABEL, NODES, [pod, *RUNNING]) as ext:
        by_uid = ext.client.post("/scheduler/preempt", _meta_args(pod))
        by_object = ext.client.post("/scheduler/preempt", _object_args(pod))
    assert by_uid.status == 200
    assert by_uid.body == {"NodeNameToMetaVictims": NARROWED}
    assert by_object.status == 200 and by_object.body == by_uid.body
    started = [e.data["extender"] for e in store.read() if e.kind == "attempt_started" and e.uid]
    assert [(s["verb"], s["form"], s["count"]) for s in started] == [
        ("preempt", "NodeNameToMetaVictims", 4),
        ("preempt", "NodeNameToVictims", 4),
    ]
    assert started[0]["victims"][0] == {
        "node": "node-a",
        "victims": ["uid-low1", "uid-low2"],
        "pdbViolations": 0,
    }
    answered = [e.data for e in store.read() if e.kind == "preempt_answered"]
    assert len(answered) == 2 and answered[0] == answered[1]
    assert answered[0]["dropped"] == [
        {"node": "node-b", "reason": "node(s) didn't have label disk"},
        {"node": "node-z", "reason": "node(s) not in eventsched's view of the cluster"},
    ]
    # Nothing was evicted: kube-scheduler acts on the answer, not eventsched.
    assert ext.cluster.get_pod("default/low2") is not None
    assert not [e for e in store.read() if e.kind in ("preempted", "evicted")]


def test_a_victim_eventsched_does_not_see_on_the_node_drops_the_node(store: EventStore) -> None:
    pod = _preemptor()
    args = {
        "Pod": pod,
        "NodeNameToMetaVictims": {
            "node-c": {"Pods": [{"UID": "uid-low1"}], "NumPDBViolations": 0},
        },
    }
    with running_extender(store, NODELABEL, NODES, [pod, *RUNNING]) as ext:
        answer = ext.client.post("/preempt", args)
    assert answer.status == 200 and answer.body == {"NodeNameToMetaVictims": {}}
    [answered] = [e.data for e in store.read() if e.kind == "preempt_answered"]
    assert answered["dropped"] == [
        {"node": "node-c", "reason": "victim(s) not on the node in eventsched's view: uid-low1"}
    ]


def test_replay_decides_the_preempt_calls_again(store: EventStore) -> None:
    pod = _preemptor()
    with running_extender(store, NODELABEL, NODES, [pod, *RUNNING]) as ext:
        ext.client.post("/preempt", _meta_args(pod))
        ext.client.post("/preempt", _object_args(pod))
    report = replay(store, full_registry())
    assert report.mismatches == []
    assert report.reproduced == 2


def test_malformed_preempt_bodies_are_refused_naming_the_field(store: EventStore) -> None:
    pod = _preemptor()
    with running_extender(store, NODELABEL, NODES) as ext:
        no_pod = ext.client.post("/preempt", {"NodeNameToMetaVictims": {}})
        no_map = ext.client.post("/preempt", {"Pod": pod})
        no_uid = ext.client.post(
            "/preempt", {"Pod": pod, "NodeNameToMetaVictims": {"node-a": {"Pods": [{}]}}}
        )
        no_pods = ext.client.post("/preempt", {"Pod": pod, "NodeNameToVictims": {"node-a": {}}})
    for answer in (no_pod, no_map, no_uid, no_pods):
        assert answer.status == 400
        assert set(answer.body) == {"NodeNameToMetaVictims", "Error"}
    assert "ExtenderPreemptionArgs.Pod" in no_pod.body["Error"]
    assert "neither NodeNameToMetaVictims nor NodeNameToVictims" in no_map.body["Error"]
    assert "NodeNameToMetaVictims[node-a].Pods[0].UID" in no_uid.body["Error"]
    assert "NodeNameToVictims[node-a].Pods: a list" in no_pods.body["Error"]


def test_explain_shows_the_preempt_call_and_its_answer(store: EventStore) -> None:
    pod = _preemptor()
    with running_extender(store, NODELABEL, NODES, [pod, *RUNNING]) as ext:
        ext.client.post("/preempt", _meta_args(pod))
    text = render(explain_pod(store, "default", "urgent"))
    assert (
        "Extender preempt call from kube-scheduler: 4 candidate node(s) "
        "(NodeNameToMetaVictims form)" in text
    )
    assert (
        "Answered: kept 2 candidate(s): node-a (evict uid-low2; 0 PDB violation(s)); "
        "node-c (evict uid-low4; 0 PDB violation(s)); dropped node-b (node(s) didn't have "
        "label disk); node-z (node(s) not in eventsched's view of the cluster)" in text
    )
    assert "no outcome recorded yet" not in text
