"""`eventsched explain` of a shadow attempt, from a log written as the vocabulary documents
`shadow_verdict` (SQLite and PostgreSQL): every kind of verdict in one line each. The real
shadow's logs are read in tests/shadow/test_shadow_read.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from eventsched.events import EventRecord, EventStore
from tests.conftest import Done

MESSAGE = "0/3 nodes are available: 3 Insufficient cpu."
OTHER = "0/3 nodes are available: 2 Insufficient cpu, 1 node(s) had untolerated taint."


def shadow_log(store: EventStore, name: str, observed: str, node: str | None, **data: Any) -> None:
    """A shadow attempt of pod `name`: started, filtered (n1 rejected), eventsched's node
    (data.picked) selected, then the verdict."""
    pod: dict[str, Any] = {
        "scheduler": "default-scheduler",
        "attempt": f"att-{name}",
        "uid": f"uid-{name}",
        "namespace": "shop",
        "name": name,
    }
    shadow = {"scheduler": "default-scheduler", "observed": observed}
    verdict = {"scheduler": "default-scheduler", "observed": observed, "lagSeconds": 0.25, **data}
    if node:
        shadow["node"] = verdict["node"] = node
    picked = data.get("picked")
    records = [
        EventRecord(
            kind="pod_observed", data={"name": name}, **{k: pod[k] for k in pod if k != "attempt"}
        ),
        EventRecord(
            kind="attempt_started", data={"attempts": 1, "nodes": 3, "shadow": shadow}, **pod
        ),
        EventRecord(
            kind="filtered",
            data={
                "numNodesToFind": 3,
                "startIndex": 0,
                "evaluated": 3,
                "feasible": 2 if picked else 0,
                "rejections": [
                    {
                        "plugin": "NodeResourcesFit",
                        "code": "Unschedulable",
                        "reasons": ["Insufficient cpu"],
                        "nodes": ["n1"],
                    }
                ],
            },
            **pod,
        ),
    ]
    if picked:
        records.append(EventRecord(kind="selected", node=picked, data={"score": 180}, **pod))
    records.append(EventRecord(kind="shadow_verdict", node=node, data=verdict, **pod))
    store.append(records)


def shadow_line(cli: Callable[..., Done], pod: str) -> str:
    done = cli("explain", f"shop/{pod}")
    assert done.code == 0, done.err
    assert "(no outcome recorded yet)" not in done.out
    lines = [line.strip() for line in done.out.splitlines() if "Shadow: " in line]
    assert len(lines) == 1, done.out
    return lines[0]


CASES = [
    pytest.param(
        "placed", "n2",
        {"verdict": "agree", "picked": "n2", "totals": {"ours": 180, "theirs": 180}},
        "default-scheduler placed it on n2; eventsched agrees (total 180)",
        id="placed-agree",
    ),
    pytest.param(
        "placed", "n2",
        {"verdict": "tie", "picked": "n3", "cause": "n2 and n3 both total 180",
         "totals": {"ours": 180, "theirs": 180}},
        "default-scheduler placed it on n2; eventsched picks n3, a tie: n2 and n3 both total 180",
        id="placed-tie",
    ),
    pytest.param(
        "placed", "n2",
        {"verdict": "differ", "picked": "n3", "totals": {"ours": 190, "theirs": 150},
         "cause": "n3 totals 190 against 150 for default-scheduler's node n2: "
                  "NodeResourcesFit 80 vs 40 (weighted)"},
        "default-scheduler placed it on n2; eventsched would pick n3 because n3 totals 190 "
        "against 150 for default-scheduler's node n2: NodeResourcesFit 80 vs 40 (weighted)",
        id="placed-differ",
    ),
    pytest.param(
        "placed", "n1",
        {"verdict": "differ", "picked": None, "ourMessage": MESSAGE,
         "cause": "NodeResourcesFit rejects default-scheduler's node n1: Insufficient cpu"},
        "default-scheduler placed it on n1; eventsched differs: NodeResourcesFit rejects "
        "default-scheduler's node n1: Insufficient cpu",
        id="placed-differ-no-node",
    ),
    pytest.param(
        "unschedulable", None,
        {"verdict": "agree", "picked": None, "message": MESSAGE, "ourMessage": MESSAGE},
        f"default-scheduler left it pending: {MESSAGE}; eventsched gives the same message",
        id="unschedulable-agree",
    ),
    pytest.param(
        "unschedulable", None,
        {"verdict": "differ", "picked": None, "message": MESSAGE, "ourMessage": OTHER,
         "cause": f"the messages differ: eventsched says {OTHER!r}, default-scheduler said {MESSAGE!r}"},
        f"default-scheduler left it pending: {MESSAGE}; eventsched gives another message: {OTHER}",
        id="unschedulable-differ",
    ),
    pytest.param(
        "unschedulable", None,
        {"verdict": "differ", "picked": "n3", "message": MESSAGE,
         "cause": f"default-scheduler found no node, but eventsched picks n3: "
                  f"default-scheduler said: {MESSAGE}"},
        f"default-scheduler left it pending: {MESSAGE}; eventsched would pick n3, which fits",
        id="unschedulable-differ-fits",
    ),
    pytest.param(
        "nominated", "n2",
        {"verdict": "agree", "picked": None, "message": MESSAGE, "ourMessage": MESSAGE,
         "preemption": {"nominatedNodeName": "n2", "victims": [{"namespace": "shop", "name": "low"}]},
         "victims": [{"uid": "u-low", "namespace": "shop", "name": "low"},
                     {"uid": "u-low2", "namespace": "shop", "name": "low-2"}]},
        f"default-scheduler nominated n2 for preemption (deleting shop/low, shop/low-2), leaving "
        f"it pending: {MESSAGE}; eventsched agrees: its PostFilter nominates n2 too (evicting "
        "shop/low in its dry run), with the same message",
        id="nominated-agree",
    ),
    pytest.param(
        "nominated", "n2",
        {"verdict": "differ", "picked": None, "message": MESSAGE, "ourMessage": MESSAGE,
         "preemption": {"nominatedNodeName": "n3", "victims": [{"namespace": "shop", "name": "x"}]},
         "cause": "default-scheduler nominated n2; eventsched's PostFilter nominates n3 "
                  "(victims shop/x; chosen by fewest victims)"},
        f"default-scheduler nominated n2 for preemption, leaving it pending: {MESSAGE}; "
        "eventsched differs: default-scheduler nominated n2; eventsched's PostFilter nominates "
        "n3 (victims shop/x; chosen by fewest victims)",
        id="nominated-differ",
    ),
    pytest.param(
        "nominated", "n2",
        {"verdict": "tie", "picked": None, "message": MESSAGE, "ourMessage": MESSAGE,
         "preemption": {"nominatedNodeName": "n3", "victims": [{"namespace": "shop", "name": "x"}]},
         "cause": "n2 and n3 tie on every criterion of preemption's candidate choice"},
        f"default-scheduler nominated n2 for preemption, leaving it pending: {MESSAGE}; "
        "eventsched's PostFilter nominates n3, a tie: n2 and n3 tie on every criterion of "
        "preemption's candidate choice",
        id="nominated-tie",
    ),
    pytest.param(
        "nominated", "n2",
        {"verdict": "differ", "picked": None, "message": MESSAGE, "ourMessage": MESSAGE,
         "preemption": {"nominatedNodeName": "n2", "victims": [{"namespace": "shop", "name": "x"}]},
         "victims": [{"uid": "u-low", "namespace": "shop", "name": "low"}],
         "cause": "both preempt on n2, but default-scheduler evicts shop/low and eventsched shop/x"},
        f"default-scheduler nominated n2 for preemption (deleting shop/low), leaving it pending: "
        f"{MESSAGE}; eventsched differs: both preempt on n2, but default-scheduler evicts "
        "shop/low and eventsched shop/x",
        id="nominated-other-victims",
    ),
    pytest.param(
        "nominated", "n2",
        {"verdict": "differ", "picked": None, "message": MESSAGE, "ourMessage": OTHER,
         "preemption": {"nominatedNodeName": "n2", "victims": [{"namespace": "shop", "name": "x"}]},
         "cause": f"the messages differ: eventsched says {OTHER!r}, default-scheduler said {MESSAGE!r}"},
        f"default-scheduler nominated n2 for preemption, leaving it pending: {MESSAGE}; "
        f"eventsched's PostFilter nominates n2 too, with another message: {OTHER}",
        id="nominated-other-message",
    ),
    pytest.param(
        "placed", "n2",
        {"verdict": "differ", "picked": None, "ourError": True,
         "ourMessage": "running PreFilter plugin \"Broken\": boom",
         "cause": "eventsched finds no node: running PreFilter plugin \"Broken\": boom"},
        "default-scheduler placed it on n2; eventsched's own attempt erred: running PreFilter "
        "plugin \"Broken\": boom (differ)",
        id="our-error",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("observed", "node", "data", "expected"), CASES)
def test_the_shadow_line(
    store: EventStore,
    cli: Callable[..., Done],
    observed: str,
    node: str | None,
    data: dict[str, Any],
    expected: str,
) -> None:
    shadow_log(store, "web", observed, node, **data)
    assert shadow_line(cli, "web") == f"Shadow: {expected}"


def test_the_attempt_is_explained_like_any_other(
    store: EventStore, cli: Callable[..., Done]
) -> None:
    shadow_log(store, "web", "placed", "n2", verdict="tie", picked="n3",
               cause="n2 and n3 both total 180", totals={"ours": 180, "theirs": 180})  # fmt: skip
    out = cli("explain", "shop/web").out
    assert "1 scheduling attempt(s); not bound\n" in out
    assert "Filter: 3 nodes, evaluated 3 from index 0 (looking for 3), 2 feasible" in out
    assert "NodeResourcesFit rejected 1 node(s) (Insufficient cpu): n1" in out
    # eventsched's own node, then the verdict, which ends the attempt.
    assert out.rstrip().endswith(
        "  Selected n3 with score 180: highest score\n"
        "  Shadow: default-scheduler placed it on n2; eventsched picks n3, a tie: "
        "n2 and n3 both total 180"
    )


def test_json_carries_the_verdict(store: EventStore, cli: Callable[..., Done]) -> None:
    shadow_log(store, "vip", "nominated", "n2", verdict="differ", picked=None, message=MESSAGE,
               ourMessage=MESSAGE, cause="default-scheduler nominated n2; eventsched's "
               "PostFilter nominates n3 (victims shop/x; chosen by fewest victims)",
               preemption={"nominatedNodeName": "n3", "victims": [{"namespace": "shop", "name": "x"}]},
               victims=[{"uid": "u-low", "namespace": "shop", "name": "low"}])  # fmt: skip
    done = cli("explain", "--json", "shop/vip")
    assert done.code == 0, done.err
    attempt = json.loads(done.out)["attempts"][0]
    assert attempt["outcome"] == "shadow verdict"
    assert attempt["message"] == MESSAGE
    assert attempt["shadow"] == {
        "position": 4,
        "scheduler": "default-scheduler",
        "observed": "nominated",
        "verdict": "differ",
        "node": "n2",
        "picked": None,
        "message": MESSAGE,
        "our_message": MESSAGE,
        "our_error": False,
        "cause": "default-scheduler nominated n2; eventsched's PostFilter nominates n3 "
        "(victims shop/x; chosen by fewest victims)",
        "our_total": None,
        "their_total": None,
        "our_nomination": "n3",
        "our_victims": ["shop/x"],
        "victims": ["shop/low"],
        "lag_seconds": 0.25,
    }
    # An attempt of eventsched's own has none.
    pod = {"attempt": "att-own", "uid": "uid-own", "namespace": "shop", "name": "own"}
    store.append(
        [
            EventRecord(kind="attempt_started", data={"attempts": 1, "nodes": 3}, **pod),
            EventRecord(kind="selected", node="n2", data={"score": None}, **pod),
            EventRecord(kind="bound", node="n2", data={"code": 201}, **pod),
        ]
    )
    own = json.loads(cli("explain", "--json", "shop/own").out)["attempts"][0]
    assert (own["outcome"], own["shadow"]) == ("bound", None)
