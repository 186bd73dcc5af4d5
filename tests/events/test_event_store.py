"""The store's contract, on both backends: what goes in comes back, in order, or fails loudly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from eventsched.events import (
    PAGE_SIZE,
    DatabaseUnavailableError,
    EventRecord,
    EventStore,
    EventStoreError,
    SchemaOutdatedError,
    StoredEvent,
    create_engine,
    display_url,
)


def full_record(**overrides: object) -> EventRecord:
    fields: dict[str, object] = {
        "kind": "selected",
        "scheduler": "default-profile",
        "instance": "replica-0",
        "attempt": "att-1",
        "uid": "uid-1",
        "namespace": "ns",
        "name": "pod-a",
        "node": "node-3",
        "plugin": "NodeResourcesFit",
        "data": {
            "score": 87,
            "seed": 12345678901234,
            "ratio": 0.25,
            "reason": "höchste Punktzahl ✓",
            "ties": ["node-3", "node-7"],
            "nested": {"b": [1, {"c": None}], "a": True},
        },
    }
    fields.update(overrides)
    return EventRecord(**fields)  # type: ignore[arg-type]


def test_round_trip_keeps_every_column_and_json_data(store: EventStore) -> None:
    before = datetime.now(UTC)
    record = full_record()
    assert store.append([record]) == [1]
    (event,) = list(store.read())
    assert event.position == 1
    for column in ("kind", "scheduler", "instance", "attempt", "uid", "namespace", "name", "node"):
        assert getattr(event, column) == getattr(record, column)
    assert event.plugin == "NodeResourcesFit"
    assert event.data == record.data
    assert isinstance(event.data, dict)
    assert event.recorded_at.tzinfo is not None
    assert event.recorded_at.utcoffset() == timedelta(0)
    assert before - timedelta(seconds=1) <= event.recorded_at <= datetime.now(UTC)
    assert event.pod_key == "ns/pod-a"


def test_nullable_columns_and_defaults(store: EventStore) -> None:
    store.append([EventRecord(kind="config_loaded")])
    (event,) = list(store.read())
    assert (event.scheduler, event.instance) == ("", "")
    assert (event.attempt, event.uid, event.namespace, event.name, event.node, event.plugin) == (
        None,
        None,
        None,
        None,
        None,
        None,
    )
    assert event.data == {}


def test_append_stored_returns_what_read_gives_back(store: EventStore) -> None:
    stored = store.append_stored([full_record(), full_record(kind="reserved", data={"x": 1.0})])
    assert [e.position for e in stored] == [1, 2]
    assert stored == list(store.read())
    assert stored[1].data == {"x": 1}  # integral floats are stored as the integers they equal


def test_positions_are_consecutive_across_batches(store: EventStore) -> None:
    assert store.append([EventRecord(kind="queued")] * 3) == [1, 2, 3]
    assert store.append([]) == []
    assert store.append([EventRecord(kind="queued")] * 2) == [4, 5]
    assert store.last_position() == 5
    times = [e.recorded_at for e in store.read()]
    assert times == sorted(times)


def test_a_clock_stepped_back_never_records_a_batch_before_the_head(store: EventStore) -> None:
    """Time order must stay position order, or dropping old time partitions would leave gaps."""
    noon = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
    store.clock = lambda: noon
    store.append([EventRecord(kind="queued")])
    store.clock = lambda: noon - timedelta(hours=1)
    store.append([EventRecord(kind="queued")])
    store.clock = lambda: noon + timedelta(seconds=1)
    store.append([EventRecord(kind="queued")])
    assert [e.recorded_at for e in store.read()] == [noon, noon, noon + timedelta(seconds=1)]
    assert store.verify_chain().ok


def test_empty_log(store: EventStore) -> None:
    assert store.last_position() == 0
    assert list(store.read()) == []
    assert store.read_pod("ns", "nope") == []


def test_read_by_pod_uid_attempt(store: EventStore) -> None:
    store.append(
        [
            full_record(kind="attempt_started", uid="u1", name="a", attempt="t1"),
            full_record(kind="selected", uid="u1", name="a", attempt="t1"),
            full_record(kind="attempt_started", uid="u2", name="b", attempt="t2"),
        ]
    )
    # The same pod name re-created with a new uid: observed, then queued (a pod's events
    # are found by the uids of the rows that name it first).
    store.append(
        [
            full_record(kind="pod_observed", uid="u3", name="a", attempt=None),
            full_record(kind="queued", uid="u3", name="a", attempt=None),
        ]
    )
    assert [e.position for e in store.read_pod("ns", "a")] == [1, 2, 4, 5]
    assert [e.position for e in store.read_pod("other", "a")] == []
    assert [e.position for e in store.read_uid("u1")] == [1, 2]
    assert [e.position for e in store.read_attempt("t2")] == [3]
    assert all(isinstance(e, StoredEvent) for e in store.read_uid("u3"))
    # A victim of t1's preemption: its own uid, t1's attempt.
    store.append([full_record(kind="evicted", uid="v9", name="victim", attempt="t1")])
    assert [e.position for e in store.read_attempt("t1")] == [1, 2, 6]


def test_read_ranges_kinds_and_limits(store: EventStore) -> None:
    kinds = ["queued", "attempt_started", "filtered", "scored", "selected", "bound"]
    store.append([EventRecord(kind=k, data={"i": i}) for i, k in enumerate(kinds)])
    assert [e.position for e in store.read(after=2)] == [3, 4, 5, 6]
    assert [e.position for e in store.read(after=2, until=4)] == [3, 4]
    assert [e.kind for e in store.read(kinds=["bound", "queued"])] == ["queued", "bound"]
    assert [e.position for e in store.read(kinds={"scored"}, after=4)] == []
    assert [e.position for e in store.read(limit=2, after=1)] == [2, 3]
    assert list(store.read(limit=0)) == []
    assert list(store.read(kinds=[])) == []
    first = next(store.read(kinds=["filtered"]))
    assert first.data == {"i": 2}


def test_read_streams_in_pages(store: EventStore, monkeypatch: pytest.MonkeyPatch) -> None:
    import eventsched.events.logreader as store_module

    monkeypatch.setattr(store_module, "PAGE_SIZE", 3)
    store.append([EventRecord(kind="queued", data={"i": i}) for i in range(10)])
    assert [e.position for e in store.read()] == list(range(1, 11))
    assert [e.position for e in store.read(limit=7)] == list(range(1, 8))
    assert [e.position for e in store.read(after=2, until=9, limit=5)] == [3, 4, 5, 6, 7]
    assert PAGE_SIZE == 5000


def test_filtered_reads_go_window_by_window_and_miss_nothing(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import eventsched.events.logreader as store_module

    monkeypatch.setattr(store_module, "PAGE_SIZE", 3)
    monkeypatch.setattr(store_module, "WINDOW", 7)
    kinds = ["queued", "bound", "bound", "scored", "bound"] * 8  # runs longer than a page
    store.append([EventRecord(kind=k) for k in kinds])
    bound = [i + 1 for i, k in enumerate(kinds) if k == "bound"]
    assert [e.position for e in store.read(kinds=["bound"])] == bound
    assert [e.position for e in store.read(kinds=["bound"], after=5, until=30)] == [
        p for p in bound if 5 < p <= 30
    ]
    assert [e.position for e in store.read(kinds=["bound"], limit=4)] == bound[:4]
    assert [e.position for e in store.read(kinds=["requeued"])] == []


def test_unknown_kind_is_refused_and_nothing_written(store: EventStore) -> None:
    with pytest.raises(EventStoreError, match="unknown event kind 'boundd'"):
        store.append([EventRecord(kind="queued"), EventRecord(kind="boundd")])
    assert store.last_position() == 0
    with pytest.raises(EventStoreError, match="unknown event kind"):
        store.read(kinds=["nope"])


@pytest.mark.parametrize(
    "data",
    [{"x": float("nan")}, {"x": object()}, {1: "int key"}, ["not", "an", "object"]],
    ids=["nan", "object", "int-key", "list"],
)
def test_data_that_is_not_json_is_refused(store: EventStore, data: object) -> None:
    with pytest.raises(EventStoreError, match="cannot append a queued event"):
        store.append([EventRecord(kind="queued", data=data)])  # type: ignore[arg-type]
    assert store.last_position() == 0


def test_closed_port_is_database_unavailable() -> None:
    url = "postgresql+psycopg://eventsched:secret@127.0.0.1:1/events"
    with pytest.raises(DatabaseUnavailableError) as caught:
        EventStore.connect(url)
    message = str(caught.value)
    assert message.startswith(
        "cannot reach the event log at postgresql+psycopg://eventsched:***@127.0.0.1:1/events: "
    )
    assert message.endswith(
        "; check the URL (--db or EVENTSCHED_DATABASE_URL) and that the database is running"
    )
    assert "secret" not in message


def test_unopenable_sqlite_file_is_database_unavailable() -> None:
    with pytest.raises(DatabaseUnavailableError, match="cannot reach the event log at sqlite"):
        EventStore.connect("sqlite:////nonexistent-dir/sub/events.db")


def test_every_operation_on_an_unreachable_database_raises() -> None:
    dead = EventStore(create_engine("postgresql+psycopg://x@127.0.0.1:1/x"))
    with pytest.raises(DatabaseUnavailableError):
        dead.append([EventRecord(kind="queued")])
    with pytest.raises(DatabaseUnavailableError):
        list(dead.read())
    with pytest.raises(DatabaseUnavailableError):
        dead.last_position()
    with pytest.raises(DatabaseUnavailableError):
        dead.verify_chain()
    dead.close()


def test_bad_url_is_an_event_store_error() -> None:
    with pytest.raises(EventStoreError, match="not a database URL"):
        EventStore.connect("not a url")


def test_url_hides_the_password(db_url: str) -> None:
    with EventStore.connect(db_url) as store:
        assert store.url == display_url(db_url)
        assert repr(store).startswith("EventStore(")


def test_missing_schema_on_connect_names_the_upgrade_command(empty_db_url: str) -> None:
    with pytest.raises(SchemaOutdatedError, match="eventsched db upgrade --db"):
        EventStore.connect(empty_db_url)
    with (
        EventStore.connect(empty_db_url, require_schema=False) as store,
        pytest.raises(EventStoreError, match="eventsched db upgrade"),
    ):
        store.append([EventRecord(kind="queued")])


@pytest.mark.parametrize(
    ("column", "value"), [("name", 5), ("node", b"n1"), ("scheduler", None), ("instance", None)]
)
def test_columns_must_be_text(store: EventStore, column: str, value: object) -> None:
    record = EventRecord(kind="queued", **{column: value})  # type: ignore[arg-type]
    with pytest.raises(EventStoreError, match=f"{column} must be text"):
        store.append([record])
    assert store.last_position() == 0


@pytest.mark.parametrize("backend", ["postgresql"])
def test_a_pooled_connection_turned_read_only_is_replaced(store: EventStore) -> None:
    """A primary demoted under its open connections refuses writes (SQLSTATE 25006):
    the append goes on a new connection, which libpq makes to the read-write server."""
    store.append([EventRecord(kind="queued")])
    with store.engine.connect() as conn:  # the connection the pool keeps for the next append
        conn.exec_driver_sql("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        conn.commit()
        read_only = conn.exec_driver_sql("SHOW transaction_read_only").scalar()
    assert read_only == "on"
    assert store.append([EventRecord(kind="queued")]) == [2]
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("SHOW transaction_read_only").scalar() == "off"


def kill_pooled_connection(store: EventStore, server: str) -> None:
    """What a server restart does to the connection waiting in the store's pool."""
    with store.engine.connect() as conn:
        pid = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
    admin = sa.create_engine(server)
    try:
        with admin.begin() as conn:
            conn.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    finally:
        admin.dispose()


@pytest.mark.parametrize("backend", ["postgresql"])
def test_a_server_side_disconnect_is_survived(store: EventStore, postgres_server: str) -> None:
    """Dead pooled connections are retried once: nothing had been sent on them."""
    store.append([EventRecord(kind="queued")])
    kill_pooled_connection(store, postgres_server)
    assert store.append([EventRecord(kind="queued")]) == [2]
    kill_pooled_connection(store, postgres_server)
    assert [e.position for e in store.read()] == [1, 2]
