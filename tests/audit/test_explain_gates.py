"""A pod held by two scheduling gates, lifted one after the other (tests/chainlogs.py: the
real Scheduler over the simulated cluster): `explain` (text and --json) and the view
`scheduling_gates` read it as held, admitted, ungated, queued, placed, on SQLite and
PostgreSQL."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from eventsched.audit import explain_pod
from eventsched.audit.gates import gate_history
from eventsched.cli.explain import render
from eventsched.events import EventRecord, EventStore
from tests.chainlogs import GATES, gated_pod
from tests.cli.test_cli import eventsched

ADMISSION, QUOTA = GATES


def explain(db_url: str, *args: str) -> str:
    done = eventsched("explain", *args, db=db_url)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_two_gates_lifted_one_after_the_other(db_url: str) -> None:
    gated_pod(db_url)
    with EventStore.connect(db_url) as store:
        explained = explain_pod(store, "default", "train")
        positions = {e.kind: e.position for e in store.read_pod("default", "train")}
    history = explained.gates
    assert history is not None and history.holding == []
    admission, quota = history.gates
    assert (admission.name, quota.name) == GATES and admission.admission
    assert admission.held_position == quota.held_position
    assert admission.lifted_position is not None and quota.lifted_position is not None
    assert admission.held_position < admission.lifted_position < quota.lifted_position
    steps = [(s.what, s.gates, s.detail) for s in history.steps]
    assert steps == [
        ("held", [ADMISSION, QUOTA], ""),
        ("lifted", [ADMISSION], ""),
        ("lifted", [QUOTA], ""),
        ("ungated", [], ""),
        ("queued", [], "active"),
        ("placed", [], "worker-1"),
    ]
    order = [s.position for s in history.steps]
    assert order == sorted(order)
    # The queued step is the scheduler's `requeued` out of the gated pods, placed its `bound`.
    assert history.steps[4].position == positions["requeued"]
    assert history.steps[5].position == positions["bound"] == order[-1]
    assert explained.final_node == "worker-1"

    lines = render(explained).splitlines()
    start = lines.index(f"  Scheduling gates: {ADMISSION}, {QUOTA}; every gate lifted")
    timeline = [line.split(" ", 5)[-1] for line in lines[start + 1 : start + 7]]
    assert [t.rsplit(" (log position", 1)[0] for t in timeline] == [
        f"held by {ADMISSION}, {QUOTA}",
        f"{ADMISSION} lifted (admitted by Kueue) after {admission.held_seconds:.1f} s",
        f"{QUOTA} lifted after {quota.held_seconds:.1f} s",
        "ungated: no gate left",
        "queued (active queue)",
        "placed on worker-1",
    ]

    out = json.loads(explain(db_url, "default/train", "--json"))
    assert [g["name"] for g in out["gates"]["gates"]] == list(GATES)
    assert [s["what"] for s in out["gates"]["steps"]] == [s[0] for s in steps]
    assert out["gates"]["gates"][0]["lifted_position"] == admission.lifted_position
    assert "  Scheduling gates: " in explain(db_url, "default/train")


def test_the_scheduling_gates_view(db_url: str) -> None:
    gated_pod(db_url)
    with EventStore.connect(db_url) as store:
        history = explain_pod(store, "default", "train").gates
        assert history is not None
        with store.engine.connect() as conn:
            rows = [
                dict(r._mapping)
                for r in conn.execute(sa.text("SELECT * FROM scheduling_gates ORDER BY gate"))
            ]
    assert list(rows[0]) == [
        "namespace",
        "name",
        "uid",
        "gate",
        "held_position",
        "held_since",
        "lifted_position",
        "lifted_at",
    ]
    by_gate = {g.name: g for g in history.gates}
    assert [r["gate"] for r in rows] == sorted(GATES)
    for row in rows:
        gate = by_gate[row["gate"]]
        assert (row["namespace"], row["name"]) == ("default", "train")
        assert (row["held_position"], row["lifted_position"]) == (
            gate.held_position,
            gate.lifted_position,
        )
        assert _iso(row["held_since"]) == gate.held_since
        assert _iso(row["lifted_at"]) == gate.lifted_at


def _iso(value: Any) -> str:
    """A view's time as explain writes it (SQLite hands back text, PostgreSQL a datetime)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    assert isinstance(value, datetime)
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()


def observed(uid: str, gates: list[str]) -> EventRecord:
    record: dict[str, Any] = {"uid": uid, "namespace": "default", "name": "job", "priority": 0}
    if gates:
        record["schedulingGates"] = gates
    return EventRecord(
        kind="pod_observed",
        scheduler="eventsched",
        uid=uid,
        namespace="default",
        name="job",
        data=record,
    )


def test_a_pod_still_held_and_one_removed_held(store: EventStore) -> None:
    """Held by a gate at the end of the log; deleted while held, then re-created and held
    again: each life has its own gates, and the view has no lift for either."""
    store.append([observed("u1", [QUOTA])])
    store.append([EventRecord(kind="pod_removed", uid="u1", namespace="default", name="job")])
    store.append([observed("u2", [ADMISSION, QUOTA]), observed("u2", [QUOTA])])
    history = gate_history(store.read_pod("default", "job"))
    assert history is not None and history.holding == [QUOTA]
    assert [(s.what, s.gates) for s in history.steps] == [
        ("held", [QUOTA]),
        ("removed", [QUOTA]),
        ("held", [ADMISSION, QUOTA]),
        ("lifted", [ADMISSION]),
    ]
    assert [g.lifted_position for g in history.gates] == [None, 4, None]
    lines = render(explain_pod(store, "default", "job")).splitlines()
    assert lines[2] == f"  Scheduling gates: {QUOTA}, {ADMISSION}, {QUOTA}; still held by {QUOTA}"
    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT uid, gate, lifted_position FROM scheduling_gates ORDER BY uid, gate")
        ).all()
    assert [tuple(r) for r in rows] == [
        ("u1", QUOTA, None),
        ("u2", QUOTA, None),
        ("u2", ADMISSION, 4),
    ]


def test_a_pod_never_gated_has_no_gates(store: EventStore) -> None:
    store.append([observed("u3", [])])
    assert explain_pod(store, "default", "job").gates is None
    assert "Scheduling gates" not in render(explain_pod(store, "default", "job"))
