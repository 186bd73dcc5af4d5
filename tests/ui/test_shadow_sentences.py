"""The pod page's sentence for each kind of shadow verdict, from verdict events as
`eventsched shadow` records them (eventsched/shadow/shadow.py's `_verdict_record`): the
browser tests meet only the kinds a run happens to give (no nomination, seldom an error).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from eventsched.ui.reads import Row
from eventsched.ui.shadow import ShadowVerdict, sentence

MESSAGE = "0/3 nodes are available: 3 Insufficient cpu."
OTHER = "0/3 nodes are available: 2 Insufficient cpu, 1 node(s) had untolerated taint."


def verdict(**data: Any) -> ShadowVerdict:
    record = {"scheduler": "default-scheduler", "lagSeconds": 0.1, **data}
    row = Row(7, datetime.now(UTC), "shadow_verdict", "ns", "p", "u", "", "a1", record)
    return ShadowVerdict.of(row)


CASES = [
    (
        {"observed": "placed", "verdict": "agree", "picked": "n1", "node": "n1"},
        "default-scheduler placed it on n1; eventsched agrees",
    ),
    (
        {"observed": "placed", "verdict": "tie", "picked": "n2", "node": "n1",
         "cause": "n1 and n2 both total 300", "totals": {"ours": 300, "theirs": 300}},
        "default-scheduler placed it on n1; eventsched ties (both total 300)",
    ),
    (
        {"observed": "placed", "verdict": "differ", "picked": "n2", "node": "n1",
         "cause": "TaintToleration rejects default-scheduler's node n1: untolerated taint"},
        "default-scheduler placed it on n1; eventsched would pick n2 because "
        "TaintToleration rejects default-scheduler's node n1: untolerated taint",
    ),
    (
        {"observed": "placed", "verdict": "differ", "picked": None, "node": "n1",
         "ourMessage": MESSAGE, "cause": f"eventsched finds no node: {MESSAGE}"},
        f"default-scheduler placed it on n1; eventsched finds no node: {MESSAGE}",
    ),
    (
        {"observed": "placed", "verdict": "differ", "picked": None, "node": "n1",
         "ourMessage": "plugin Boom: exploded", "ourError": True},
        "default-scheduler placed it on n1; eventsched's attempt failed: plugin Boom: exploded",
    ),
    (
        {"observed": "unschedulable", "verdict": "agree", "picked": None,
         "message": MESSAGE, "ourMessage": MESSAGE},
        f"default-scheduler left it pending: {MESSAGE}; eventsched gives the same message",
    ),
    (
        {"observed": "unschedulable", "verdict": "differ", "picked": None,
         "message": MESSAGE, "ourMessage": OTHER},
        f"default-scheduler left it pending: {MESSAGE}; eventsched gives a different one: {OTHER}",
    ),
    (
        {"observed": "unschedulable", "verdict": "differ", "picked": "n3", "message": MESSAGE},
        f"default-scheduler left it pending: {MESSAGE}; "
        "eventsched would place it on n3, preempting nothing",
    ),
    (
        {"observed": "nominated", "verdict": "agree", "picked": None, "node": "n1",
         "message": MESSAGE, "ourMessage": MESSAGE},
        f"default-scheduler left it pending, nominating n1 to preempt on: {MESSAGE}; "
        "eventsched agrees (the same node and message)",
    ),
    (
        {"observed": "nominated", "verdict": "tie", "picked": None, "node": "n1",
         "message": MESSAGE, "ourMessage": MESSAGE,
         "cause": "n1 and n2 tie on every criterion of preemption's candidate choice"},
        f"default-scheduler left it pending, nominating n1 to preempt on: {MESSAGE}; "
        "eventsched ties (n1 and n2 tie on every criterion of preemption's candidate choice)",
    ),
    (
        {"observed": "nominated", "verdict": "differ", "picked": None, "node": "n1",
         "message": MESSAGE, "ourMessage": MESSAGE,
         "cause": "default-scheduler nominated n1; eventsched's PostFilter nominates n2 "
         "(victims ns/low; chosen by fewest victims)"},
        f"default-scheduler left it pending, nominating n1 to preempt on: {MESSAGE}; "
        "eventsched differs: default-scheduler nominated n1; eventsched's PostFilter "
        "nominates n2 (victims ns/low; chosen by fewest victims)",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("data", "expected"), CASES)
def test_the_sentence(data: dict[str, Any], expected: str) -> None:
    assert sentence(verdict(**data)) == expected


def test_an_attempts_outcome_is_its_verdict() -> None:
    assert verdict(observed="placed", verdict="tie").outcome == "shadow: tie"
    assert verdict(observed="placed").outcome == "shadow: no verdict"
