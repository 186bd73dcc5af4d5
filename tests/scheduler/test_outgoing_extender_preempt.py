"""eventsched's DefaultPreemption calls an extender's preempt verb as kube-scheduler v1.28's
`Evaluator.callExtenders` does.

Three nodes of 4 cpu, each nearly full with one low-priority pod (priorities 1, 2, 3 on
node-a, node-b, node-c); `urgent` (priority 100) needs 1 cpu. The dry run finds a
candidate on every node; on its own DefaultPreemption picks node-a (the lowest-priority
victim). The scripted extender (tests/scheduler/test_outgoing_extenders.py's) answers as
each test says; the scheduler runs on the simulated cluster with the log on SQLite and
PostgreSQL, and replay decides every attempt again with the extender stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from eventsched.cluster import SimulatedCluster
from eventsched.events import EventStore
from tests.scheduler.test_outgoing_extenders import (
    assert_replays_without_calling,
    config,
    extender,
    failed_message,
    gpu_node,
    placed,
)
from tests.scheduler.test_preemption import ppod
from tests.scheduler.test_scheduler import run_scheduler

#: Every message ends as FitError.Error() ends each part: with a period.
FIT_ERROR = "0/3 nodes are available: 3 Insufficient cpu."


def _cluster() -> SimulatedCluster:
    running = [
        ppod(f"low-{n}", "3500m", p, f"node-{n}") for n, p in zip("abc", (1, 2, 3), strict=True)
    ]
    return SimulatedCluster(
        [gpu_node(f"node-{n}") for n in "abc"], [*running, ppod("urgent", "1", 100)]
    )


def _run(store: EventStore, **entry: Any) -> SimulatedCluster:
    cluster = _cluster()
    run_scheduler(store, cluster, profiles=list(config(**entry).profiles))
    return cluster


def _meta(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The candidates sent, in either form, as NodeNameToMetaVictims."""
    if body["NodeNameToMetaVictims"] is not None:
        return dict(body["NodeNameToMetaVictims"])
    return {
        node: {
            "Pods": [{"UID": p["metadata"]["uid"]} for p in victims["Pods"]],
            "NumPDBViolations": victims["NumPDBViolations"],
        }
        for node, victims in body["NodeNameToVictims"].items()
    }


def keep_only(*nodes: str) -> Callable[[dict[str, Any]], tuple[int, Any]]:
    def answer(body: dict[str, Any]) -> tuple[int, Any]:
        sent = _meta(body)
        return 200, {"NodeNameToMetaVictims": {n: sent[n] for n in nodes if n in sent}}

    return answer


def answer_with(result: Any) -> Callable[[dict[str, Any]], tuple[int, Any]]:
    return lambda body: (200, result)


def _evicted(store: EventStore) -> list[str]:
    return sorted(e.name for e in store.read(kinds=["evicted"]))


@pytest.mark.parametrize("cache_capable", [True, False], ids=["MetaVictims", "Victims"])
def test_the_extender_narrows_the_candidates_in_either_form(
    store: EventStore, cache_capable: bool
) -> None:
    with extender({"preempt": keep_only("node-c")}) as ext:
        cluster = _run(
            store, urlPrefix=ext.url, preemptVerb="preempt", nodeCacheCapable=cache_capable
        )
        assert placed(cluster, "urgent") == "node-c"
        assert _evicted(store) == ["low-c"]
        ((verb, body),) = ext.requests
        assert verb == "preempt"
        assert set(body) == {"Pod", "NodeNameToVictims", "NodeNameToMetaVictims"}
        assert body["Pod"]["metadata"]["name"] == "urgent"
        if cache_capable:
            assert body["NodeNameToVictims"] is None
        else:
            assert body["NodeNameToMetaVictims"] is None
            victim = body["NodeNameToVictims"]["node-a"]["Pods"][0]
            assert victim["metadata"]["name"] == "low-a"
            assert victim["spec"]["nodeName"] == "node-a"
        assert _meta(body) == {
            f"node-{n}": {"Pods": [{"UID": f"uid-low-{n}"}], "NumPDBViolations": 0} for n in "abc"
        }
        (decision,) = store.read(kinds=["preempted"])
        assert decision.node == "node-c"
        assert decision.data["extenders"] == [{"extender": ext.url, "kept": ["node-c"]}]
        assert decision.data["dryRunCandidates"] == 3
        assert [c["node"] for c in decision.data["candidates"]] == ["node-c"]
        assert_replays_without_calling(store, ext)


def test_without_a_preempt_verb_the_extender_is_not_asked(store: EventStore) -> None:
    with extender({"filter": lambda body: (500, {})}) as ext:
        cluster = _run(store, urlPrefix=ext.url, filterVerb="filter", ignorable=True)
        assert placed(cluster, "urgent") == "node-a"
        assert "preempt" not in ext.verbs()
        (decision,) = store.read(kinds=["preempted"])
        assert "extenders" not in decision.data


def test_an_uninterested_extender_is_not_asked(store: EventStore) -> None:
    with extender({"preempt": keep_only("node-c")}) as ext:
        cluster = _run(
            store,
            urlPrefix=ext.url,
            preemptVerb="preempt",
            managedResources=[{"name": "example.com/gpu"}],
        )
        assert placed(cluster, "urgent") == "node-a"
        assert ext.requests == []


@pytest.mark.parametrize("ignorable", [False, True])
def test_a_failing_extender_fails_the_preemption_unless_ignorable(
    store: EventStore, ignorable: bool
) -> None:
    with extender({"preempt": lambda body: (500, {})}) as ext:
        cluster = _run(store, urlPrefix=ext.url, preemptVerb="preempt", ignorable=ignorable)
        if ignorable:
            assert placed(cluster, "urgent") == "node-a"
            assert _evicted(store) == ["low-a"]
            (decision,) = store.read(kinds=["preempted"])
            assert decision.data["extenders"] == [
                {
                    "extender": ext.url,
                    "error": f"failed preempt with extender at URL {ext.url}/preempt, code 500",
                }
            ]
        else:
            assert placed(cluster, "urgent") == ""
            assert _evicted(store) == []
            assert failed_message(cluster, "urgent") == (
                f"{FIT_ERROR} preemption: failed preempt with extender at URL "
                f"{ext.url}/preempt, code 500."
            )
        assert_replays_without_calling(store, ext)


def test_an_answer_that_keeps_nothing_leaves_no_candidate(store: EventStore) -> None:
    with extender({"preempt": answer_with({"NodeNameToMetaVictims": {}})}) as ext:
        cluster = _run(store, urlPrefix=ext.url, preemptVerb="preempt")
        assert placed(cluster, "urgent") == ""
        assert _evicted(store) == []
        assert failed_message(cluster, "urgent") == (
            f"{FIT_ERROR} preemption: no candidate node for preemption."
        )
        assert_replays_without_calling(store, ext)


def test_a_victim_not_on_its_node_fails_the_call(store: EventStore) -> None:
    wrong = {"NodeNameToMetaVictims": {"node-c": {"Pods": [{"UID": "uid-low-a"}]}}}
    with extender({"preempt": answer_with(wrong)}) as ext:
        cluster = _run(store, urlPrefix=ext.url, preemptVerb="preempt")
        assert placed(cluster, "urgent") == ""
        assert failed_message(cluster, "urgent") == (
            f"{FIT_ERROR} preemption: extender: {ext.url} claims to preempt pod "
            "(UID: &{uid-low-a}) on node: node-c, but the pod is not found on that node."
        )
        assert_replays_without_calling(store, ext)


@pytest.mark.parametrize("ignorable", [False, True])
def test_a_node_without_victims_is_refused_or_ignored(store: EventStore, ignorable: bool) -> None:
    answer = {
        "NodeNameToMetaVictims": {
            "node-b": {"Pods": [], "NumPDBViolations": 0},
            "node-c": {"Pods": [{"UID": "uid-low-c"}], "NumPDBViolations": 0},
        }
    }
    with extender({"preempt": answer_with(answer)}) as ext:
        cluster = _run(store, urlPrefix=ext.url, preemptVerb="preempt", ignorable=ignorable)
        if ignorable:
            assert placed(cluster, "urgent") == "node-c"
            (decision,) = store.read(kinds=["preempted"])
            assert decision.data["extenders"] == [
                {"extender": ext.url, "kept": ["node-c"], "ignored": ["node-b"]}
            ]
        else:
            assert placed(cluster, "urgent") == ""
            assert failed_message(cluster, "urgent") == (
                f'{FIT_ERROR} preemption: expected at least one victim pod on node "node-b".'
            )
        assert_replays_without_calling(store, ext)
