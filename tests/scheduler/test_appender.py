"""The append off the loop: decisions go on while a batch is written, none acts before it is.

The test steps the loop by hand (`schedule_one`, `_hand_off`, `_wait_for_inbox`), as the
loop thread would, while the appender's thread is held inside `append_stored`.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import AppendInDoubtError, EventStore, EventStoreError, StoredEvent
from eventsched.events.record import EventRecord
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.loginvariants import ONCE_PER_ATTEMPT
from tests.scheduler.helpers import node, pod
from tests.scheduler.test_group_commit import batch_of


class HeldStore(EventStore):
    """A real store whose next append waits, once `hold` is called, until `release`;
    `fail` makes the appends fail instead, `in_doubt` commits one and says it may not have."""

    held: threading.Event | None = None
    entered: threading.Event
    failing = False
    in_doubt = False

    def hold(self) -> None:
        self.entered = threading.Event()
        self.held = threading.Event()

    def release(self) -> None:
        assert self.held is not None
        self.held.set()
        self.held = None

    def append_stored(self, records: list[EventRecord]) -> list[StoredEvent]:  # type: ignore[override]
        held = self.held
        if held is not None:
            self.entered.set()
            assert held.wait(10), "the test never released the append"
        if self.failing:
            raise EventStoreError("database is down (test)")
        if not self.in_doubt:
            return super().append_stored(records)
        self.in_doubt = False
        before = self.appender.appended
        stored = super().append_stored(records)
        committed = self.appender.appended
        assert committed is not None
        self.appender.appended = before  # as when COMMIT's answer is lost
        doubt = AppendInDoubtError(self.url, "answer lost (test)", committed.batch, committed.hash)
        doubt.stored = stored
        raise doubt


def started(store: HeldStore, cluster: SimulatedCluster) -> Scheduler:
    """Started, with the cluster's pods queued and the first of them decided (pending)."""
    scheduler = Scheduler(
        store,
        cluster,
        [default_profile()],
        in_tree_registry(),
        SchedulerOptions(group_commit_attempts=1, log_retry=0.01),
    )
    scheduler.start()
    while not scheduler.schedule_one():  # the pods arrive through the inbox
        scheduler._drain_inbox()
    return scheduler


def until_answered(scheduler: Scheduler) -> None:
    """Handle the inbox until the appender's outcome has been taken."""
    while scheduler.journal.appending:
        scheduler._wait_for_inbox()


def hand_off_held(store: HeldStore, scheduler: Scheduler) -> None:
    """Hand off what is pending and wait until the appender is held inside its append."""
    store.hold()
    scheduler._hand_off()
    assert store.entered.wait(10), "the batch never reached the appender"


def decide_the_next_while_held(store: HeldStore, scheduler: Scheduler) -> None:
    """Hand off what is pending, decide the next pod while the appender holds it, then let
    the append go on and take its outcome."""
    hand_off_held(store, scheduler)
    while not scheduler.schedule_one():
        scheduler._drain_inbox()
    store.release()
    until_answered(scheduler)


def end_with_a_batch_in_flight(
    store: HeldStore, scheduler: Scheduler, end: Callable[[], None]
) -> None:
    """Call `end` (stop or abandon) on a thread while the appender holds a batch, then let
    the batch go: `end` must return once it is settled."""
    hand_off_held(store, scheduler)
    ending = threading.Thread(target=end)
    ending.start()
    store.release()
    ending.join(20)
    assert not ending.is_alive()


def decided_names(scheduler: Scheduler) -> list[str]:
    return [each.info.pod.name for each in scheduler.binding.decided]


def check_log(store: EventStore, names: list[str]) -> list[StoredEvent]:
    """Gap-free, chained, every attempt's events once, each pod bound once."""
    events = list(store.read())
    assert [e.position for e in events] == list(range(1, len(events) + 1))
    report = store.verify_chain()
    assert report.ok, report.detail
    twice = Counter((e.attempt, e.kind) for e in events if e.attempt and e.kind in ONCE_PER_ATTEMPT)
    assert set(twice.values()) == {1}, f"appended twice: {twice}"
    assert sorted(e.name for e in events if e.kind == "bound") == sorted(names)
    return events


def test_the_loop_decides_while_a_batch_is_appended_and_binds_only_once_it_is_durable(
    db_url: str,
) -> None:
    store = HeldStore.connect(db_url)
    cluster = SimulatedCluster([node("a", cpu="1"), node("b", cpu="1")], [pod("p", cpu="1")])
    scheduler = started(store, cluster)
    cluster.add_pod(pod("q", cpu="1"))
    hand_off_held(store, scheduler)
    assert scheduler.journal.appending

    while not scheduler.schedule_one():  # q arrives and is decided meanwhile
        scheduler._drain_inbox()
    assert scheduler.cache.node_of(pod("q").uid) not in (
        None,
        scheduler.cache.node_of(pod("p").uid),
    )
    assert not scheduler.journal.hand_off(), "a second batch went while the first was appended"
    assert decided_names(scheduler) == ["p", "q"]
    assert scheduler.bindings == 0 and cluster.bindings == [] and cluster.events == []
    assert list(store.read(kinds=["reserved"])) == []

    store.release()
    until_answered(scheduler)
    assert [e.name for e in store.read(kinds=["reserved"])] == ["p"]
    assert decided_names(scheduler) == ["q"], "q's binding waits for its own batch"
    assert scheduler.bindings == 1

    scheduler.run(until_idle=True)
    assert scheduler.bindings == 0 and scheduler.journal.unwritten == 0
    scheduler.stop()
    placed = dict(cluster.bindings)
    assert sorted(placed) == ["default/p", "default/q"] and sorted(placed.values()) == ["a", "b"]
    events = check_log(store, ["p", "q"])
    p, q = (next(e for e in events if e.kind == "reserved" and e.name == n) for n in "pq")
    assert batch_of(store, p.position) < batch_of(store, q.position)
    store.close()


def test_a_failed_append_pauses_scheduling_and_is_retried_with_what_joined_since(
    db_url: str,
) -> None:
    store = HeldStore.connect(db_url)
    cluster = SimulatedCluster([node("a")], [pod("p", cpu="1")])
    scheduler = started(store, cluster)
    cluster.add_pod(pod("q", cpu="1"))
    store.failing = True
    decide_the_next_while_held(store, scheduler)
    assert scheduler.log_down and not scheduler.ready
    assert not scheduler.journal.hand_off(), "handed off while the log is down"
    assert decided_names(scheduler) == ["p", "q"] and cluster.bindings == []
    assert scheduler.journal.unwritten > 0

    store.failing = False
    scheduler.run(until_idle=True)
    assert not scheduler.log_down
    scheduler.stop()
    assert sorted(cluster.bindings) == [("default/p", "a"), ("default/q", "a")]
    events = check_log(store, ["p", "q"])
    p, q = (next(e for e in events if e.kind == "reserved" and e.name == n) for n in "pq")
    assert batch_of(store, p.position) == batch_of(store, q.position), "retried as one batch"
    store.close()


def test_an_in_doubt_append_is_settled_on_the_loop_and_not_appended_twice(db_url: str) -> None:
    store = HeldStore.connect(db_url)
    cluster = SimulatedCluster([node("a")], [pod("p", cpu="1")])
    scheduler = started(store, cluster)
    cluster.add_pod(pod("q", cpu="1"))
    store.in_doubt = True
    decide_the_next_while_held(store, scheduler)
    assert scheduler.log_down and cluster.bindings == []
    assert [e.name for e in store.read(kinds=["reserved"])] == ["p"], "committed, unanswered"

    scheduler.run(until_idle=True)
    scheduler.stop()
    assert sorted(cluster.bindings) == [("default/p", "a"), ("default/q", "a")]
    check_log(store, ["p", "q"])
    store.close()


def test_stop_waits_for_the_batch_being_appended_and_binds_its_decisions(db_url: str) -> None:
    store = HeldStore.connect(db_url)
    cluster = SimulatedCluster([node("a")], [pod("p")])
    scheduler = started(store, cluster)
    end_with_a_batch_in_flight(store, scheduler, scheduler.stop)
    assert cluster.bindings == [("default/p", "a")]
    check_log(store, ["p"])
    store.close()


def test_abandoning_waits_for_the_batch_being_appended_and_binds_nothing(db_url: str) -> None:
    store = HeldStore.connect(db_url)
    cluster = SimulatedCluster([node("a")], [pod("p")])
    scheduler = started(store, cluster)
    end_with_a_batch_in_flight(store, scheduler, scheduler.abandon)
    assert [e.name for e in store.read(kinds=["reserved", "permitted"])] == ["p", "p"]
    assert cluster.bindings == [] and scheduler.bindings == 0
    store.close()
