"""`eventsched explain` of a preemptor and of its victims, from a log written as the
vocabulary documents `preempted` and `evicted` (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from eventsched.audit import explain_pod
from eventsched.cli.explain import render
from eventsched.events import EventRecord, EventStore

ROOT = Path(__file__).resolve().parents[2]
ATTEMPT = "att-big-1"
PREEMPTOR = {"uid": "uid-big", "namespace": "prod", "name": "big"}


def pod(kind: str, name: str, uid: str, **kw: Any) -> EventRecord:
    return EventRecord(
        kind=kind, scheduler="default-scheduler", uid=uid, namespace="prod", name=name, **kw
    )


def observed(name: str, uid: str, priority: int, node: str | None = None) -> EventRecord:
    record: dict[str, Any] = {"name": name, "namespace": "prod", "uid": uid, "priority": priority}
    if node:
        record["nodeName"] = node
    return pod("pod_observed", name, uid, data=record, node=node)


def evicted(name: str, uid: str, outcome: str, **data: Any) -> EventRecord:
    return pod(
        "evicted",
        name,
        uid,
        attempt=ATTEMPT,
        node="n2",
        data={"preemptor": PREEMPTOR, "outcome": outcome, **data},
    )


def a_preemption(store: EventStore, *, evict_all: bool = True) -> None:
    """big (priority 1000) fits nowhere; DefaultPreemption picks n2, evicting web-a (PDB
    violated) and web-b; n1 and n3 were candidates too."""
    store.append(
        [
            observed("web-a", "uid-a", 10, "n2"),
            observed("web-b", "uid-b", 5, "n2"),
            observed("big", "uid-big", 500),
            observed("big", "uid-big", 1000),
        ]
    )
    attempt = [
        pod(
            "attempt_started",
            "big",
            "uid-big",
            attempt=ATTEMPT,
            data={"attempts": 1, "nodes": 4, "seed": 7, "startIndex": 0, "configDigest": "d"},
        ),
        pod(
            "filtered",
            "big",
            "uid-big",
            attempt=ATTEMPT,
            data={
                "numAllNodes": 4,
                "numNodesToFind": 4,
                "startIndex": 0,
                "evaluated": 4,
                "feasible": 0,
                "rejections": [
                    {
                        "plugin": "NodeResourcesFit",
                        "code": "Unschedulable",
                        "reasons": ["Insufficient cpu"],
                        "nodes": ["n1", "n2", "n3", "n4"],
                    }
                ],
            },
        ),
        pod(
            "post_filtered",
            "big",
            "uid-big",
            attempt=ATTEMPT,
            plugin="DefaultPreemption",
            data={"status": {"code": "Success"}, "nominatedNodeName": "n2"},
        ),
        pod(
            "preempted",
            "big",
            "uid-big",
            attempt=ATTEMPT,
            node="n2",
            plugin="DefaultPreemption",
            data={
                "nominatedNodeName": "n2",
                "victims": [
                    {
                        "uid": "uid-a",
                        "namespace": "prod",
                        "name": "web-a",
                        "priority": 10,
                        "pdbViolation": True,
                    },
                    {
                        "uid": "uid-b",
                        "namespace": "prod",
                        "name": "web-b",
                        "priority": 5,
                        "pdbViolation": False,
                    },
                ],
                "candidates": [
                    {"node": "n1", "victims": ["u1", "u2", "u3"], "pdbViolations": 0},
                    {"node": "n2", "victims": ["uid-a", "uid-b"], "pdbViolations": 1},
                    {"node": "n3", "victims": ["u4"], "pdbViolations": 2},
                ],
                "chosenBy": "lowest highest-victim priority",
                "offset": 1,
                "numCandidates": 3,
                "evaluated": 3,
                "potentialNodes": 4,
                "lowerNominated": [{"uid": "uid-low", "namespace": "prod", "name": "low"}],
            },
        ),
        pod(
            "unschedulable",
            "big",
            "uid-big",
            attempt=ATTEMPT,
            data={
                "message": "0/4 nodes are available: 4 Insufficient cpu.",
                "code": "Unschedulable",
                "queue": "unschedulable",
                "plugins": ["NodeResourcesFit"],
                "attempts": 1,
                "backoffSeconds": 1,
            },
        ),
    ]
    store.append(attempt)
    store.append(
        [evicted("web-a", "uid-a", "deleted", code=200)]
        + (
            [evicted("web-b", "uid-b", "failed", code=500, reason="etcd timeout")]
            if evict_all
            else []
        )
    )


def test_explain_a_preemptor(store: EventStore) -> None:
    a_preemption(store)
    explained = explain_pod(store, "prod", "big")
    (attempt,) = explained.attempts
    preemption = attempt.preemption
    assert preemption is not None
    assert preemption.nominated_node == "n2"
    assert [(v.name, v.outcome, v.code) for v in preemption.victims] == [
        ("web-a", "deleted", 200),
        ("web-b", "failed", 500),
    ]
    # The preemptor's priority: its last observation before the decision (500, then 1000).
    assert preemption.priority == 1000 and preemption.plugin == "DefaultPreemption"
    a, b = preemption.victims
    assert (a.evicted_position, b.evicted_position) == (10, 11)
    text = render(explained)
    lines = text.splitlines()
    post = lines.index("  PostFilter: Success (nominated node n2)")
    assert lines[post + 1 :][:7] == [
        "  Preemption by DefaultPreemption: nominated node n2, 2 victims "
        "(this pod's priority 1000):",
        "    prod/web-a (priority 10, violates a PodDisruptionBudget): deleted at "
        f"{a.evicted_at} (log position 10)",
        f"    prod/web-b (priority 5): failed (500: etcd timeout) at {b.evicted_at} "
        "(log position 11)",
        "  Dry run: 3 candidates among 3 node(s) visited (of 4 where preemption might help, "
        "from offset 1, looking for 3); chosen by lowest highest-victim priority",
        "    other candidates: n1: 3 victims, n3: 1 victim (2 PDB violations)",
        "    nomination to n2 cleared for lower-priority prod/low",
        "  Unschedulable: 0/4 nodes are available: 4 Insufficient cpu. → unschedulable queue, "
        "backoff 1s",
    ]
    assert "Preempted by" not in text


def test_explain_a_victim(store: EventStore) -> None:
    a_preemption(store)
    explained = explain_pod(store, "prod", "web-a")
    # The eviction is under the preemptor's attempt, not one of web-a's attempts.
    assert explained.attempts == []
    (victim,) = explained.preempted_by
    assert (victim.preemptor, victim.preemptor_priority, victim.priority) == ("prod/big", 1000, 10)
    assert victim.pdb_violation and victim.decided_position == 8 and victim.position == 10
    text = render(explained)
    # kube-scheduler placed web-a before eventsched ran: no attempt, but where it ran.
    assert (
        text.splitlines()[1] == "  0 scheduling attempt(s); not bound by eventsched; observed on n2"
    )
    assert (
        f"  Preempted by prod/big (priority 1000 over this pod's 10) on node n2 in attempt "
        f"{ATTEMPT} at {victim.decided_at}: chosen by lowest highest-victim priority; violates "
        f"a PodDisruptionBudget; outcome deleted at {victim.recorded_at} (log position 10)"
    ) in text.splitlines()
    failed = render(explain_pod(store, "prod", "web-b"))
    assert "; outcome failed (500: etcd timeout) at " in failed.splitlines()[2]
    assert failed.splitlines()[2].endswith(" (log position 11)")


def test_a_victim_whose_eviction_is_not_written_yet(store: EventStore) -> None:
    a_preemption(store, evict_all=False)
    preemptor = render(explain_pod(store, "prod", "big"))
    assert "    prod/web-b (priority 5): no eviction recorded yet" in preemptor.splitlines()
    victim = explain_pod(store, "prod", "web-b")
    (chosen,) = victim.preempted_by
    assert (chosen.outcome, chosen.priority, chosen.preemptor_priority) == (None, 5, 1000)
    assert render(victim).splitlines()[2] == (
        f"  Preempted by prod/big (priority 1000 over this pod's 5) on node n2 in attempt "
        f"{ATTEMPT} at {chosen.decided_at}: chosen by lowest highest-victim priority; "
        "no eviction recorded yet"
    )


def test_explain_command_json(db_url: str) -> None:
    with EventStore.connect(db_url) as store:
        a_preemption(store)
    env = {**os.environ, "EVENTSCHED_DATABASE_URL": db_url}

    def explain(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "eventsched.cli.main", "explain", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    big = json.loads(explain("prod/big", "--json"))
    assert big["attempts"][0]["preemption"]["chosen_by"] == "lowest highest-victim priority"
    assert [v["outcome"] for v in big["attempts"][0]["preemption"]["victims"]] == [
        "deleted",
        "failed",
    ]
    web = json.loads(explain("prod/web-a", "--json"))
    assert web["preempted_by"][0]["outcome"] == "deleted"
    assert web["preempted_by"][0]["pdb_violation"] is True
    assert web["preempted_by"][0]["preemptor_priority"] == 1000
    assert big["attempts"][0]["preemption"]["priority"] == 1000
    assert "Preempted by prod/big (priority 1000 over this pod's 10) on node n2" in explain(
        "prod/web-a"
    )


def test_explain_after_simulating_the_preemption_example(db_url: str) -> None:
    """examples/preemption/ (docs/querying.md): the scheduler's own events, explained."""
    env = {**os.environ, "EVENTSCHED_DATABASE_URL": db_url}

    def eventsched(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "eventsched.cli.main", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "2 of 2 pending pods bound" in eventsched("simulate", "examples/preemption/")
    checkout = eventsched("explain", "shop/checkout").splitlines()
    # simulate decides as the newest version: v1.37's preemption says where it found room.
    start = checkout.index(
        "  PostFilter: DefaultPreemption Success: preemption: found a potential placement for "
        "pod on node node-a, preempting 2 victims (nominated node node-a)"
    )
    assert checkout[start + 1] == (
        "  Preemption by DefaultPreemption: nominated node node-a, 2 victims "
        "(this pod's priority 1000):"
    )
    for line, victim in zip(checkout[start + 2 : start + 4], ("batch-1", "batch-2"), strict=True):
        assert line.startswith(f"    jobs/{victim} (priority 10): deleted at ")
    assert checkout[start + 4].startswith("  Dry run: 3 candidates among 3 node(s) visited")
    assert checkout[start + 4].endswith("chosen by lowest highest-victim priority")
    assert checkout[start + 5].startswith("    other candidates: node-")
    report = eventsched("explain", "jobs/report-1").splitlines()
    # The example's running pods come in bound; the simulated cluster deletes the victim.
    assert report[1] == (
        "  0 scheduling attempt(s); not bound by eventsched; observed on node-c; "
        "removed from the cluster"
    )
    assert report[2].startswith(
        "  Preempted by shop/payments (priority 1000 over this pod's 50) on node node-c in "
    )
    assert ": chosen by fewest PDB violations; outcome deleted at " in report[2]
    web = json.loads(eventsched("explain", "shop/web-1", "--json"))
    assert web["preempted_by"] == []
