"""The views `pod_queue` and `resource_rejections` (migration 0009) agree with what explain
computes by folding the log, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import sqlalchemy as sa

from eventsched.audit import explain_pod
from eventsched.audit.explainnumbers import explain_numbers
from eventsched.audit.viewat import ViewAt
from eventsched.events import upgrade
from eventsched.events.logreader import LogReader
from eventsched.plugins import full_registry
from tests.audit.test_explain_numbers import scenario
from tests.conftest import Done

ROOT = Path(__file__).resolve().parents[2]


def _rows(db_url: str, sql: str) -> list[dict[str, object]]:
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(sa.text(sql))]
    finally:
        engine.dispose()


def test_pod_queue_matches_the_fold(db_url: str, cli: Callable[..., Done], tmp_path: Path) -> None:
    upgrade(db_url)
    assert cli("simulate", str(scenario(tmp_path))).code == 0
    rows = _rows(db_url, "SELECT name, queue, priority, place FROM pod_queue ORDER BY place")
    assert [
        (r["name"], r["priority"], r["place"]) for r in rows if str(r["name"]).startswith("huge")
    ] == [
        ("huge-10", 10, 1),
        ("huge-5", 5, 2),
        ("huge-1", 1, 3),
    ]
    reader = LogReader.connect(db_url)
    try:
        views = ViewAt(reader)
        for row in rows:
            explanation = explain_pod(reader, "default", str(row["name"]))
            explain_numbers(explanation, views, full_registry(), reader.last_position(), last=1)
            assert explanation.queue is not None
            assert (explanation.queue.queue, explanation.queue.place) == (
                row["queue"],
                row["place"],
            )
    finally:
        reader.close()


def test_a_started_scheduler_queues_anew(db_url: str, cli: Callable[..., Done]) -> None:
    """Two runs of the example: the second process starts from an empty queue, so only its
    own too-big is queued, as the fold says too."""
    upgrade(db_url)
    for _ in range(2):
        assert cli("simulate", str(ROOT / "examples" / "cluster")).code == 0
    rows = _rows(db_url, "SELECT name, uid, place FROM pod_queue")
    assert [(r["name"], r["place"]) for r in rows] == [("too-big", 1)]
    reader = LogReader.connect(db_url)
    try:
        explanation = explain_pod(reader, "default", "too-big")
        explain_numbers(explanation, ViewAt(reader), full_registry(), reader.last_position())
        assert explanation.queue is not None and explanation.queue.in_queue == 1
        assert explanation.attempts[-1].pod_uid == rows[0]["uid"]
    finally:
        reader.close()


def test_resource_rejections_name_the_request_and_the_allocatable(
    db_url: str, cli: Callable[..., Done]
) -> None:
    upgrade(db_url)
    assert cli("simulate", str(ROOT / "examples" / "cluster")).code == 0
    rows = _rows(
        db_url,
        "SELECT node, resource, request, allocatable FROM resource_rejections "
        "WHERE name = 'too-big' ORDER BY node",
    )
    assert rows == [
        {"node": "worker-1", "resource": "cpu", "request": 64000, "allocatable": 7910},
        {"node": "worker-2", "resource": "cpu", "request": 64000, "allocatable": 15890},
        {"node": "worker-3", "resource": "cpu", "request": 64000, "allocatable": 3920},
    ]
