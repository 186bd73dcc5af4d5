"""Projections: pure folds, and the same state whether rebuilt from a snapshot or from the start."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from eventsched.events import (
    SNAPSHOT_NAME,
    Backoff,
    EventRecord,
    EventStore,
    Placement,
    Projections,
    Reservation,
    StoredEvent,
    digest,
    rebuild,
    save_snapshot,
)

T0 = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)


class Log:
    """Hand-made StoredEvents with increasing positions and times."""

    def __init__(self) -> None:
        self.events: list[StoredEvent] = []

    def add(
        self, kind: str, uid: str | None = None, name: str | None = None, **kw: Any
    ) -> StoredEvent:
        position = len(self.events) + 1
        event = StoredEvent(
            position=position,
            recorded_at=T0 + timedelta(seconds=position),
            kind=kind,
            scheduler=kw.pop("scheduler", "prof"),
            instance="i0",
            attempt=kw.pop("attempt", None),
            uid=uid,
            namespace=kw.pop("namespace", "ns" if name else None),
            name=name,
            node=kw.pop("node", None),
            plugin=None,
            data=kw.pop("data", {}),
        )
        assert not kw
        self.events.append(event)
        return event


def fold(log: Log) -> Projections:
    projections = Projections()
    projections.apply_all(log.events)
    return projections


def test_first_placement_wins_and_sticky_forget_removes_it() -> None:
    log = Log()
    log.add("bound", "u1", "web-0", node="n1", data={"identity": "ns/sts/web-0"})
    log.add("bound", "u2", "web-0", node="n2", data={"identity": "ns/sts/web-0"})
    log.add("bound", "u3", "solo", node="n3")
    p = fold(log)
    assert p.first_placements == {
        "ns/sts/web-0": Placement("n1", 1, "u1", "ns", "web-0"),
        "ns/solo": Placement("n3", 3, "u3", "ns", "solo"),
    }
    log.add("maintenance", data={"action": "sticky_forget", "identity": "ns/sts/web-0"})
    log.add("maintenance", data={"action": "snapshot"})
    log.add("bound", "u4", "web-0", node="n5", data={"identity": "ns/sts/web-0"})
    p = fold(log)
    assert p.first_placements["ns/sts/web-0"] == Placement("n5", 6, "u4", "ns", "web-0")
    assert p.position == 6


def test_reservations_open_and_close() -> None:
    log = Log()
    log.add("reserved", "u1", "a", node="n1", attempt="t1")
    log.add("reserved", "u2", "b", node="n2", attempt="t2", scheduler="other")
    log.add("reserved", "u3", "c", node="n3", attempt="t3")
    p = fold(log)
    assert p.open_reservations["u2"] == Reservation("t2", "n2", 2, "ns", "b", "other")
    log.add("unreserved", "u1", "a", node="n1", attempt="t1", data={"reason": "permit denied"})
    log.add("bound", "u3", "c", node="n3", attempt="t3")
    p = fold(log)
    assert set(p.open_reservations) == {"u2"}


def test_backoff_from_unschedulable_and_bind_failed() -> None:
    log = Log()
    e1 = log.add(
        "unschedulable", "u1", "a", data={"attempts": 1, "backoffSeconds": 2, "message": "0/3"}
    )
    p = fold(log)
    assert p.backoff == {"u1": Backoff("ns", "a", 1, e1.recorded_at.timestamp() + 2)}
    log.add("bind_failed", "u1", "a", data={"code": 500, "reason": "x", "final": False})
    assert fold(log).backoff["u1"].attempts == 1  # carries no backoff: unchanged
    e3 = log.add("bind_failed", "u1", "a", data={"attempts": 2, "backoffSeconds": 4.5})
    assert fold(log).backoff["u1"] == Backoff("ns", "a", 2, e3.recorded_at.timestamp() + 4.5)
    log.add("unschedulable", "u2", "b", data={"attempts": 3, "backoffSeconds": 8})
    log.add("bound", "u1", "a", node="n1")
    log.add("pod_removed", "u2", "b", data={"nodeName": ""})
    assert fold(log).backoff == {}


def test_observed_digests() -> None:
    log = Log()
    node = {
        "name": "n1",
        "allocatable": {"cpu": 4000},
        "labels": {},
        "taints": [],
        "unschedulable": False,
    }
    log.add("node_observed", node="n1", data=node)
    log.add("pod_observed", "u1", "a", data={"uid": "u1", "requests": {"cpu": 100}})
    log.add("node_observed", data={"name": "n2"})  # node column missing: data's name
    p = fold(log)
    assert p.observed == {
        "node/n1": digest(node),
        "pod/u1": digest({"requests": {"cpu": 100}, "uid": "u1"}),
        "node/n2": digest({"name": "n2"}),
    }
    log.add("node_removed", node="n1", data={"uid": ""})
    log.add("pod_removed", "u1", "a", data={"nodeName": "n1"})
    assert fold(log).observed == {"node/n2": digest({"name": "n2"})}


def test_digest_is_canonical() -> None:
    assert digest({"a": 1, "b": [1.0, 2]}) == digest({"b": [1, 2], "a": 1.0})
    assert digest({"a": 1}) != digest({"a": 2})
    assert len(digest({})) == 40


def test_apply_is_idempotent_for_applied_positions() -> None:
    log = Log()
    log.add("reserved", "u1", "a", node="n1")
    log.add("unreserved", "u1", "a", node="n1")
    p = fold(log)
    p.apply(log.events[0])  # already applied: ignored
    assert p.open_reservations == {}
    assert p.position == 2


def test_json_round_trip_and_equality() -> None:
    log = Log()
    log.add("bound", "u1", "a", node="n1")
    log.add("reserved", "u2", "b", node="n2", attempt="t")
    log.add("unschedulable", "u3", "c", data={"attempts": 2, "backoffSeconds": 0.25})
    log.add("node_observed", node="n1", data={"name": "n1"})
    p = fold(log)
    assert Projections.from_json(p.to_json()) == p
    assert Projections.from_json(p.to_state()) == p
    assert Projections() != p
    other = fold(log)
    other.observed["node/x"] = "0"
    assert other != p


@pytest.fixture
def busy_store(store: EventStore) -> EventStore:
    """A log exercising every fold, in several batches."""
    for i in range(30):
        uid, name = f"u{i}", f"web-{i % 7}"
        batch = [
            EventRecord(
                kind="pod_observed", uid=uid, namespace="ns", name=name, data={"uid": uid, "i": i}
            ),
            EventRecord(
                kind="node_observed", node=f"n{i % 4}", data={"name": f"n{i % 4}", "gen": i}
            ),
            EventRecord(
                kind="reserved",
                uid=uid,
                namespace="ns",
                name=name,
                node=f"n{i % 4}",
                attempt=f"t{i}",
            ),
        ]
        if i % 3 == 0:
            batch.append(
                EventRecord(
                    kind="bound",
                    uid=uid,
                    namespace="ns",
                    name=name,
                    node=f"n{i % 4}",
                    data={"identity": f"ns/{name}"},
                )
            )
        elif i % 3 == 1:
            batch += [
                EventRecord(
                    kind="unreserved", uid=uid, namespace="ns", name=name, node=f"n{i % 4}"
                ),
                EventRecord(
                    kind="unschedulable",
                    uid=uid,
                    namespace="ns",
                    name=name,
                    data={"attempts": i, "backoffSeconds": 1.5},
                ),
            ]
        if i == 20:
            batch.append(
                EventRecord(
                    kind="maintenance", data={"action": "sticky_forget", "identity": "ns/web-0"}
                )
            )
            batch.append(EventRecord(kind="node_removed", node="n3", data={"uid": ""}))
        store.append(batch)
    return store


def test_rebuild_with_and_without_snapshot_agree(
    busy_store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = busy_store
    full = rebuild(store)
    assert full.position == store.last_position()
    assert full == fold_log(store)
    assert full.first_placements and full.open_reservations and full.backoff and full.observed

    # A snapshot in the middle, then more events: rebuild folds only what follows it.
    middle = Projections()
    middle.apply_all(store.read(until=40))
    save_snapshot(store, middle)
    assert store.latest_snapshot(SNAPSHOT_NAME) is not None
    folded_from: list[int] = []
    real_read = store.read

    def spy_read(after: int = 0, **kw: Any) -> Any:
        folded_from.append(after)
        return real_read(after=after, **kw)

    monkeypatch.setattr(store, "read", spy_read)
    assert rebuild(store) == full
    assert folded_from == [middle.position] and middle.position == 40
    monkeypatch.undo()

    store.append([EventRecord(kind="bound", uid="late", namespace="ns", name="late", node="n9")])
    full = rebuild(store)
    save_snapshot(store, full)
    assert rebuild(store) == full == fold_log(store)
    assert store.latest_snapshot(SNAPSHOT_NAME)[0] == full.position  # type: ignore[index]


def test_old_snapshots_are_pruned_and_bad_ones_ignored(busy_store: EventStore) -> None:
    store = busy_store
    expected = rebuild(store)
    for _ in range(5):
        save_snapshot(store, expected)
    with store.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM snapshots")).scalar() == 3
    # A snapshot whose state does not match its position is not trusted.
    store.write_snapshot(SNAPSHOT_NAME, expected.position + 1, {"position": 3})
    assert rebuild(store) == expected
    store.write_snapshot(
        SNAPSHOT_NAME,
        expected.position + 2,
        {"position": expected.position + 2, "backoff": {"u": {}}},
    )
    assert rebuild(store) == expected


def test_append_stored_keeps_projections_current(store: EventStore) -> None:
    """What the scheduler does: fold the events append_stored returns, no re-read."""
    live = Projections()
    live.apply_all(
        store.append_stored(
            [
                EventRecord(
                    kind="unschedulable",
                    uid="u",
                    namespace="ns",
                    name="p",
                    data={"attempts": 1, "backoffSeconds": 1.0},
                )
            ]
        )
    )
    live.apply_all(
        store.append_stored(
            [EventRecord(kind="node_observed", node="n", data={"name": "n", "cpu": 2.0})]
        )
    )
    assert live == rebuild(store)
    assert live.observed["node/n"] == digest({"name": "n", "cpu": 2.0})


def fold_log(store: EventStore) -> Projections:
    projections = Projections()
    projections.apply_all(store.read())
    return projections
