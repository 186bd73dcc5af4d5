"""judge() on failures and nominations (placements are judged on the real kube-scheduler's:
tests/shadow/test_shadow_kube.py)."""

from __future__ import annotations

from eventsched.model import NodeTable
from eventsched.shadow.verdict import NOMINATED, UNSCHEDULABLE, Ours, Theirs, judge

MESSAGE = "0/3 nodes are available: 3 Insufficient cpu."


def test_a_failure_agrees_on_the_same_message_and_differs_naming_both() -> None:
    theirs = Theirs("default-scheduler", UNSCHEDULABLE, message=MESSAGE)
    assert judge(Ours(message=MESSAGE), theirs, NodeTable()).verdict == "agree"
    other = judge(
        Ours(message="0/3 nodes are available: 3 Insufficient memory."), theirs, NodeTable()
    )
    assert other.verdict == "differ"
    assert "Insufficient memory" in other.cause and "Insufficient cpu" in other.cause


def test_a_failure_where_eventsched_finds_a_node_differs() -> None:
    theirs = Theirs("default-scheduler", UNSCHEDULABLE, message=MESSAGE)
    judged = judge(Ours(node="n1"), theirs, NodeTable())
    assert judged.verdict == "differ" and "picks n1" in judged.cause


def test_a_nomination_on_a_node_tied_on_every_criterion_is_a_tie() -> None:
    theirs = Theirs("default-scheduler", NOMINATED, "n2", MESSAGE)
    ours = Ours(
        message=MESSAGE, preemption={"nominatedNodeName": "n1", "victims": []}, tied=("n1", "n2")
    )
    assert judge(ours, theirs, NodeTable()).verdict == "tie"
    alone = Ours(message=MESSAGE, preemption={"nominatedNodeName": "n1", "victims": []})
    judged = judge(alone, theirs, NodeTable())
    assert judged.verdict == "differ" and "nominates n1" in judged.cause


def test_the_same_nomination_with_other_victims_differs() -> None:
    victims = ({"uid": "1", "namespace": "default", "name": "low-1"},)
    theirs = Theirs("default-scheduler", NOMINATED, "n1", MESSAGE, victims)
    ours = Ours(
        message=MESSAGE,
        preemption={
            "nominatedNodeName": "n1",
            "victims": [{"namespace": "default", "name": "low-2"}],
        },
    )
    judged = judge(ours, theirs, NodeTable())
    assert judged.verdict == "differ" and "default/low-1" in judged.cause
    same = Ours(
        message=MESSAGE, preemption={"nominatedNodeName": "n1", "victims": [dict(victims[0])]}
    )
    assert judge(same, theirs, NodeTable()).verdict == "agree"
