"""`eventsched extender` over real HTTP, with the bodies kube-scheduler v1.28 sends.

The server runs on the simulated cluster with a log on SQLite and PostgreSQL; each call's
answer is checked, and so is what the log holds afterwards: the call as an attempt, its
decisions, and for bind the Binding and `bound`. Replay re-decides the filter and
prioritize calls from the log alone.
"""

from __future__ import annotations

import pytest

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
    [
        {
            "name": "NodeLabel",
            "args": {"requiredLabels": ["disk"], "scoreLabel": "perf", "order": "ascending"},
        }
    ],
)
NODES = [
    node_manifest("node-a", {"disk": "ssd", "perf": "3"}),
    node_manifest("node-b"),
    node_manifest("node-c", {"disk": "ssd", "perf": "9"}),
    node_manifest("node-d", {"disk": "hdd", "perf": "5"}, cpu="1"),
]


def _verbs(store: EventStore, uid: str) -> list[str]:
    return [
        e.data["extender"]["verb"]
        for e in store.read()
        if e.kind == "attempt_started" and e.uid == uid and "extender" in e.data
    ]


def test_filter_in_both_forms_answers_as_the_profile_filters(store: EventStore) -> None:
    pod = pod_manifest("train", cpu="2")
    with running_extender(store, NODELABEL, NODES) as ext:
        by_name = ext.client.filter(pod, NODES, names=True)
        by_object = ext.client.filter(pod, NODES, names=False)
    assert by_name.status == 200
    assert by_name.body["NodeNames"] == ["node-a", "node-c"]
    assert by_name.body["Nodes"] is None
    assert by_name.body["Error"] == ""
    # node-b has no disk label; node-d has too little cpu left for 2.
    assert by_name.body["FailedAndUnresolvableNodes"] == {
        "node-b": "node(s) didn't have label disk"
    }
    assert by_name.body["FailedNodes"] == {"node-d": "Insufficient cpu"}
    assert by_object.status == 200
    assert by_object.body["NodeNames"] is None
    assert [n["metadata"]["name"] for n in by_object.body["Nodes"]["items"]] == [
        "node-a",
        "node-c",
    ]
    # The objects passed back are the ones sent, untouched.
    assert by_object.body["Nodes"]["items"][0] == NODES[0]
    assert by_object.body["FailedNodes"] == by_name.body["FailedNodes"]
    assert _verbs(store, "uid-train") == ["filter", "filter"]
    filtered = [e for e in store.read() if e.kind == "filtered"]
    assert [f.data["feasible"] for f in filtered] == [2, 2]


def test_prioritize_gives_ten_only_to_the_nodes_eventsched_would_choose(
    store: EventStore,
) -> None:
    pod = pod_manifest("train")
    with running_extender(store, NODELABEL, NODES) as ext:
        answer = ext.client.prioritize(pod, ["node-a", "node-c", "node-d"])
    assert answer.status == 200
    scores = {p["Host"]: p["Score"] for p in answer.body}
    assert scores["node-c"] == 10  # the highest perf label: eventsched's choice
    assert max(scores["node-a"], scores["node-d"]) < 10
    assert all(0 <= s <= 10 for s in scores.values())
    (scored,) = [e for e in store.read() if e.kind == "scored"]
    assert scored.data["top"][0]["node"] == "node-c"
    assert _verbs(store, "uid-train") == ["prioritize"]


def test_bind_posts_the_binding_after_logging_the_decision(store: EventStore) -> None:
    pod = pod_manifest("train")
    with running_extender(store, NODELABEL, NODES, [pod]) as ext:
        assert ext.client.filter(pod, NODES).status == 200
        answer = ext.client.bind(pod, "node-c")
        placed = ext.cluster.get_pod("default/train")
    assert answer.status == 200 and answer.body == {"Error": ""}
    assert placed is not None and placed.node_name == "node-c"
    kinds = [(e.kind, e.node) for e in store.read() if e.uid == "uid-train" and e.attempt]
    bind_attempt = kinds[kinds.index(("attempt_started", None), 1) :]
    assert bind_attempt == [
        ("attempt_started", None),
        ("selected", "node-c"),
        ("reserved", "node-c"),
        ("bound", "node-c"),
    ]
    assert _verbs(store, "uid-train") == ["filter", "bind"]


def test_bind_of_a_pod_never_filtered_still_logs_its_decision_first(store: EventStore) -> None:
    # A bind-only extender: kube-scheduler never sent the pod in a filter call.
    stranger = pod_manifest("stranger")
    with running_extender(store, NODELABEL, NODES, [stranger]) as ext:
        ext.scheduler.view.pods.pop("uid-stranger", None)  # as if never observed
        answer = ext.client.bind(stranger, "node-a")
        placed = ext.cluster.get_pod("default/stranger")
    assert answer.status == 200 and answer.body == {"Error": ""}
    assert placed is not None and placed.node_name == "node-a"
    kinds = [e.kind for e in store.read() if e.uid == "uid-stranger" and e.attempt]
    assert kinds == ["attempt_started", "selected", "reserved", "bound"]


def test_bind_to_a_node_eventsched_does_not_know_is_refused(store: EventStore) -> None:
    pod = pod_manifest("train")
    with running_extender(store, NODELABEL, NODES, [pod]) as ext:
        answer = ext.client.bind(pod, "node-z")
    assert answer.status == 500
    assert answer.body["Error"] == "eventsched extender: node node-z is not known"
    assert not [e for e in store.read() if e.kind in ("selected", "bound")]


def test_malformed_bodies_get_an_error_in_the_verbs_shape_and_the_server_keeps_serving(
    store: EventStore,
) -> None:
    with running_extender(store, NODELABEL, NODES) as ext:
        bad_json = ext.client.post("/filter", b"{not json")
        no_pod = ext.client.post("/filter", {"NodeNames": ["node-a"]})
        no_nodes = ext.client.post("/prioritize", {"Pod": pod_manifest("p")})
        bad_names = ext.client.post("/filter", {"Pod": pod_manifest("p"), "NodeNames": [1, 2]})
        bad_bind = ext.client.post("/bind", {"PodName": "p"})
        unknown = ext.client.post("/evict", {})
        preempt = ext.client.post("/preempt", {})
        after = ext.client.filter(pod_manifest("fine"), NODES)
        health = ext.client.get("/healthz")
        metrics = ext.client.get("/metrics")
    for answer in (bad_json, no_pod, no_nodes, bad_names, bad_bind):
        assert answer.status == 400
        assert answer.body["Error"]
    assert "not JSON" in bad_json.body["Error"]
    assert set(bad_json.body) == {
        "Nodes",
        "NodeNames",
        "FailedNodes",
        "FailedAndUnresolvableNodes",
        "Error",
    }
    assert "ExtenderArgs.Pod" in no_pod.body["Error"]
    assert "ExtenderBindingArgs.PodNamespace" in bad_bind.body["Error"]
    assert unknown.status == 404
    assert preempt.status == 400 and "ExtenderPreemptionArgs.Pod" in preempt.body["Error"]
    assert after.status == 200 and after.body["NodeNames"] == ["node-a", "node-c", "node-d"]
    assert health == (200, "ok")
    assert metrics[0] == 200
    assert 'eventsched_extender_requests_total{code="400",verb="filter"} 3.0' in metrics[1]
    assert "scheduler_framework_extension_point_duration_seconds" in metrics[1]


def test_a_node_eventsched_has_not_observed_fails_by_name(store: EventStore) -> None:
    ghost = node_manifest("node-z", {"disk": "ssd"})
    with running_extender(store, NODELABEL, NODES) as ext:
        answer = ext.client.filter(pod_manifest("p"), [*NODES, ghost], names=True)
    assert answer.body["FailedNodes"]["node-z"] == "node(s) not in eventsched's view of the cluster"


def test_replay_decides_the_filter_and_prioritize_calls_again(store: EventStore) -> None:
    pod = pod_manifest("train")
    with running_extender(store, NODELABEL, NODES, [pod]) as ext:
        ext.client.filter(pod, NODES, names=False)
        ext.client.filter(pod, NODES, names=True)
        ext.client.prioritize(pod, ["node-a", "node-c", "node-d"])
        ext.client.bind(pod, "node-c")
    report = replay(store, full_registry())
    assert report.mismatches == []
    assert report.reproduced == 3
    assert [s["reason"] for s in report.skipped] == [
        "an extender bind call: kube-scheduler chose the node"
    ]


def test_replay_reproduces_a_prioritize_whose_mean_total_is_a_whole_number(
    store: EventStore,
) -> None:
    # node-a and node-c total 485 and 685: `scored` records their mean as 585.0, and the
    # log keeps an integral float as the int 585, as it keeps every number on either
    # database. Replay must compare the recomputed decision as the log stores it.
    pod = pod_manifest("train")
    with running_extender(store, NODELABEL, NODES, [pod]) as ext:
        ext.client.prioritize(pod, ["node-a", "node-c"])
    [scored] = [e.data for e in store.read() if e.kind == "scored"]
    assert scored["summary"] == {"max": 685, "mean": 585, "min": 485}
    report = replay(store, full_registry())
    assert report.mismatches == []
    assert report.reproduced == 1


def test_explain_shows_each_call_and_what_it_answered(
    store: EventStore, capsys: pytest.CaptureFixture[str]
) -> None:
    pod = pod_manifest("train")
    with running_extender(store, NODELABEL, NODES, [pod]) as ext:
        ext.client.filter(pod, NODES)
        ext.client.prioritize(pod, ["node-a", "node-c", "node-d"])
        ext.client.bind(pod, "node-c")
    text = render(explain_pod(store, "default", "train"))
    assert "3 scheduling attempt(s); bound to node-c" in text
    assert "Extender filter call from kube-scheduler: 4 candidate node(s) (NodeNames form)" in text
    assert "NodeLabel rejected 1 node(s) (node(s) didn't have label disk): node-b" in text
    assert "Answered: 3 of 4 candidate(s) passed" in text
    assert "Extender prioritize call from kube-scheduler: 3 candidate node(s)" in text
    assert "Answered: 10 for node-c" in text
    assert "Extender bind call from kube-scheduler: bind to node-c" in text
    assert "Bound to node-c" in text
