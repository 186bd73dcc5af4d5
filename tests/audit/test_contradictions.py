"""A pod's events that contradict each other (audit/contradictions.py), written through the
store's own append (so the hash chain verifies), as `explain` reports them; and no false
alarm on the logs the examples make."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from eventsched.audit import explain_pod
from eventsched.audit.contradictions import contradictions
from eventsched.audit.integrity import check_batches
from eventsched.cli.main import main
from eventsched.events import EventRecord, EventStore, upgrade
from eventsched.events.logreader import LogReader
from tests.events.test_event_chain import drop_triggers

ROOT = Path(__file__).resolve().parents[2]


def ev(
    kind: str, node: str | None = None, attempt: str | None = "a1", **data: object
) -> EventRecord:
    return EventRecord(
        kind=kind, attempt=attempt, uid="u1", namespace="shop", name="db-0", node=node, data=data
    )


def placed(attempt: str, node: str) -> list[EventRecord]:
    """An attempt that selected, reserved and bound `node`."""
    return [
        ev("attempt_started", attempt=attempt),
        ev("selected", node, attempt),
        ev("reserved", node, attempt),
        ev("bound", node, attempt),
    ]


REJECTED = {"rejections": [{"plugin": "NodeResourcesFit", "code": "Unschedulable",
                            "reasons": ["Insufficient cpu"], "nodes": ["w-1"]}]}  # fmt: skip

#: name -> (the pod's events, in order, and what the contradiction says; "" for none).
CASES: dict[str, tuple[list[EventRecord], str]] = {
    "bound elsewhere than selected": (
        [ev("attempt_started"), ev("selected", "w-1"), ev("reserved", "w-1"), ev("bound", "w-2")],
        "bound to w-2 (position 4), but the attempt selected w-1 (position 2)",
    ),
    "reserved elsewhere than selected": (
        [ev("attempt_started"), ev("selected", "w-1"), ev("reserved", "w-2")],
        "reserved w-2 (position 3), but the attempt selected w-1 (position 2)",
    ),
    "binding failed elsewhere than selected": (
        [ev("attempt_started"), ev("selected", "w-1"), ev("bind_failed", "w-2")],
        "binding to w-2 (position 3), but the attempt selected w-1 (position 2)",
    ),
    "bound by an attempt that found no node": (
        [ev("attempt_started"), ev("unschedulable", message="0/3 nodes"), ev("bound", "w-1")],
        "bound to w-1 (position 3), but the attempt found no node (unschedulable at position 2)",
    ),
    "selected a node its own Filter rejected": (
        [ev("attempt_started"), ev("filtered", **REJECTED), ev("selected", "w-1")],
        "selected w-1 (position 3), which NodeResourcesFit rejected in the same attempt's Filter",
    ),
    "unreserved another node": (
        [
            ev("attempt_started"),
            ev("selected", "w-1"),
            ev("reserved", "w-1"),
            ev("unreserved", "w-2"),
        ],
        "unreserved w-2 (position 4), but the attempt reserved w-1 (position 3)",
    ),
    "bound twice without a removal": (
        placed("a1", "w-1") + placed("a2", "w-2"),
        "bound to w-2 (position 8), but it was bound to w-1 (position 4) and not removed between",
    ),
    "bound twice with a removal between": (
        [*placed("a1", "w-1"), ev("pod_removed", "w-1", None), *placed("a2", "w-2")],
        "",
    ),
    "observed on another node than bound": (
        [*placed("a1", "w-1"), ev("pod_observed", "w-2", None)],
        "observed on w-2 (position 5), but bound to w-1 (position 4) and not removed between",
    ),
    "bound to another node than observed": (
        [ev("pod_observed", "w-2", None), *placed("a1", "w-1")],
        "bound to w-1 (position 5), but it was observed on w-2 (position 1)",
    ),
    "evicted from another node than bound": (
        [*placed("a1", "w-1"), ev("evicted", "w-2", "preemptor", outcome="deleted")],
        "evicted from w-2 (position 5), but bound to w-1 (position 4)",
    ),
    "removed from another node than bound": (
        [*placed("a1", "w-1"), ev("pod_removed", "w-2", None, nodeName="w-2")],
        "removed from w-2 (position 5), but bound to w-1 (position 4)",
    ),
    "a consistent attempt": (placed("a1", "w-1"), ""),
}


@pytest.mark.parametrize("case", CASES)
def test_explain_says_what_contradicts(store: EventStore, case: str) -> None:
    records, said = CASES[case]
    for record in records:  # one batch each: positions are the list's, from 1
        store.append([record])
    integrity = explain_pod(store, "shop", "db-0").integrity
    assert integrity is not None
    assert integrity.breaks == [], "written through the append API: the chain verifies"
    assert integrity.batches == len(records)
    if not said:
        assert integrity.ok and integrity.contradictions == []
        return
    assert not integrity.ok
    first = integrity.contradictions[0]
    assert said in first.detail, [c.detail for c in integrity.contradictions]
    assert (first.pod, first.uid) == ("shop/db-0", "u1")


def test_time_going_back_is_a_contradiction_and_a_broken_chain(
    store: EventStore, db_url: str
) -> None:
    for record in placed("a1", "w-1"):
        store.append([record])
    engine = sa.create_engine(db_url)
    try:
        drop_triggers(engine)
        with engine.begin() as conn:
            conn.execute(
                sa.text("UPDATE events SET recorded_at = :at WHERE position = 4"),
                # Before the first event, within its day (PostgreSQL's partition).
                {"at": store.read_uid("u1")[0].recorded_at - timedelta(microseconds=1)},
            )
    finally:
        engine.dispose()
    integrity = explain_pod(store, "shop", "db-0").integrity
    assert integrity is not None and not integrity.ok
    assert [b.batch for b in integrity.breaks] == [4]
    [said] = integrity.contradictions
    assert said.position == 4 and "time never goes back along positions" in said.detail


EXAMPLES = [
    ("cluster", None),
    ("preemption", None),
    ("spread", None),
    *[
        (name, name)
        for name in (
            "capacityscheduling",
            "coscheduling",
            "importancesort",
            "nodelabel",
            "noderesourcesallocatable",
            "noderesourcetopology",
            "pinnedhost",
            "randomscore",
            "stickynode",
        )
    ],
]


@pytest.mark.parametrize(("example", "profile"), EXAMPLES, ids=[e for e, _ in EXAMPLES])
def test_no_false_alarm_on_the_examples(tmp_path: Path, example: str, profile: str | None) -> None:
    """Each example simulated twice into one log (the second run places the same names
    again, as new pods): no contradiction anywhere, every batch verifies. On SQLite: the
    rules read events, not the database."""
    url = f"sqlite:///{tmp_path / 'events.db'}"
    upgrade(url)
    config = (
        ["--config", str(ROOT / "examples" / "profiles" / f"{profile}.yaml")] if profile else []
    )
    for _ in range(2):
        assert main(["simulate", *config, str(ROOT / "examples" / example), "--db", url]) == 0
    reader = LogReader.connect(url)
    try:
        events = list(reader.read())
        assert contradictions(events) == []
        assert check_batches(reader, [e.position for e in events]).ok
    finally:
        reader.close()
