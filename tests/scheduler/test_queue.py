"""Queue order, backoff and moves, on a clock the test controls."""

from __future__ import annotations

from eventsched.framework import ASSIGNED_POD_ADD, NODE_ADD, ClusterEvent, QueuedPodInfo, Status
from eventsched.model import Pod
from eventsched.scheduler.queue import SchedulingQueue


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def by_priority(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    if a.pod.priority != b.pod.priority:
        return a.pod.priority > b.pod.priority
    return (a.timestamp, a.sequence) < (b.timestamp, b.sequence)


def pod(name: str, priority: int = 0, gates: tuple[str, ...] = ()) -> Pod:
    return Pod(uid=name, namespace="default", name=name, priority=priority, scheduling_gates=gates)


def make(clock: Clock, **kw: object) -> SchedulingQueue:
    return SchedulingQueue(by_priority, clock=clock, **kw)  # type: ignore[arg-type]


def test_active_queue_follows_queue_sort_then_arrival() -> None:
    clock = Clock()
    q = make(clock)
    for name, prio in [("a", 0), ("b", 10), ("c", 0), ("d", 10)]:
        assert q.add(pod(name, prio)) == "active"
        clock.now += 1
    order = [q.pop().pod.name for _ in range(4)]  # type: ignore[union-attr]
    assert order == ["b", "d", "a", "c"]
    assert q.pop() is None


def test_an_update_in_active_queue_resorts_the_pod() -> None:
    """kube-scheduler's activeQ.Update re-heapifies: a raised sort key takes effect at once."""
    clock = Clock()
    q = make(clock)
    for name in ("a", "b", "c"):
        q.add(pod(name))
        clock.now += 1
    assert q.update(pod("c", priority=100)) is None
    order = [q.pop().pod for _ in range(3)]  # type: ignore[union-attr]
    assert [p.name for p in order] == ["c", "a", "b"]
    assert order[0].priority == 100
    assert q.pop() is None


def test_adding_twice_or_while_in_flight_is_ignored() -> None:
    q = make(Clock())
    assert q.add(pod("a")) == "active"
    assert q.add(pod("a")) is None
    info = q.pop()
    assert info is not None and info.attempts == 1
    assert q.add(pod("a")) is None


def test_backoff_doubles_from_one_second_to_ten() -> None:
    q = make(Clock())
    assert [q.backoff_duration(n) for n in range(1, 7)] == [1, 2, 4, 8, 10, 10]


def test_rejected_pod_waits_in_unschedulable_until_a_relevant_event() -> None:
    clock = Clock()
    q = make(clock)
    q.add(pod("a"))
    info = q.pop()
    assert info is not None
    move = q.add_unschedulable(info, ["NodeResourcesFit"])
    assert move.to == "unschedulable"
    events = {"NodeResourcesFit": [NODE_ADD, ClusterEvent("AssignedPod", "Delete")]}
    assert q.move_on_event(ASSIGNED_POD_ADD, events, "AssignedPodAdd") == []
    clock.now += 5  # backoff of 1 s has passed
    moves = q.move_on_event(NODE_ADD, events, "NodeAdd")
    assert [(m.source, m.to, m.event) for m in moves] == [("unschedulable", "active", "NodeAdd")]
    again = q.pop()
    assert again is not None and again.attempts == 2


def test_moved_while_backing_off_goes_to_backoff_then_active() -> None:
    clock = Clock()
    q = make(clock)
    q.add(pod("a"))
    info = q.pop()
    assert info is not None
    q.add_unschedulable(info, ["X"])
    (move,) = q.move_on_event(NODE_ADD, {"X": [NODE_ADD]}, "NodeAdd")
    assert move.to == "backoff" and move.backoff_until == 1001.0
    assert q.pop() is None
    clock.now = 1001.0
    assert [(m.source, m.to) for m in q.flush()] == [("backoff", "active")]
    assert q.pop() is not None


def test_event_during_the_cycle_sends_the_pod_to_backoff_not_unschedulable() -> None:
    q = make(Clock())
    q.add(pod("a"))
    info = q.pop()
    assert info is not None
    q.move_on_event(NODE_ADD, {}, "NodeAdd")
    assert q.add_unschedulable(info, ["X"]).to == "backoff"


def test_event_during_the_cycle_its_rejecting_plugins_ignore_leaves_it_unschedulable() -> None:
    """v1.28.0's in-flight events are checked against the plugins that rejected the pod:
    an assigned pod added (the scheduler's own binding of another pod) does not send a pod
    that NodeResourcesFit rejected (it registers pod deletions) to backoff."""
    q = make(Clock())
    q.add(pod("a"))
    q.add(pod("b"))
    first, second = q.pop(), q.pop()
    assert first is not None and second is not None
    events = {"Fit": [ClusterEvent("AssignedPod", "Delete")], "Affinity": [ASSIGNED_POD_ADD]}
    q.move_on_event(ASSIGNED_POD_ADD, events, "AssignedPodAdd")
    assert q.add_unschedulable(first, ["Fit"]).to == "unschedulable"
    assert q.add_unschedulable(second, ["Affinity"]).to == "backoff"


def test_error_goes_to_backoff() -> None:
    q = make(Clock())
    q.add(pod("a"))
    info = q.pop()
    assert info is not None
    info.errored = True
    assert q.add_unschedulable(info, []).to == "backoff"


def test_unschedulable_too_long_is_flushed_after_five_minutes() -> None:
    clock = Clock()
    q = make(clock)
    q.add(pod("a"))
    info = q.pop()
    assert info is not None
    q.add_unschedulable(info, ["X"])
    clock.now += 299
    assert q.flush() == []
    clock.now += 1
    assert [m.event for m in q.flush()] == ["UnschedulableTimeout"]
    assert q.next_wakeup() is None


def test_gated_pods_wait_for_an_update_without_gates() -> None:
    def pre_enqueue(p: Pod) -> Status:
        return (
            Status.unresolvable("waiting for scheduling gates") if p.scheduling_gates else Status()
        )

    q = make(Clock(), pre_enqueue=pre_enqueue)
    assert q.add(pod("a", gates=("example.com/wait", "example.com/more"))) == "gated"
    assert q.pop() is None
    # One gate lifted, one left: still gated, no move.
    assert q.update(pod("a", gates=("example.com/more",))) is None
    assert q.pop() is None
    move = q.update(pod("a"))
    assert move is not None
    assert (move.source, move.to, move.event, move.info.pod.name) == (
        "gated",
        "active",
        "PodUpdate",
        "a",
    )
    assert q.pop() is not None


def test_restore_keeps_backoff_across_a_restart() -> None:
    clock = Clock()
    q = make(clock)
    assert q.restore(pod("a"), attempts=3, backoff_until=1004.0) == "backoff"
    assert q.pop() is None
    clock.now = 1004.0
    q.flush()
    info = q.pop()
    assert info is not None and info.attempts == 4


def test_deleted_pod_is_never_popped() -> None:
    q = make(Clock())
    q.add(pod("a"))
    q.add(pod("b"))
    assert q.delete("a") == "active"
    info = q.pop()
    assert info is not None and info.pod.name == "b"
    assert q.pop() is None


def test_backoff_stops_doubling_at_the_maximum_however_many_attempts() -> None:
    # A pod whose Binding is refused every time is retried thousands of times: the
    # doubling must stop at the cap instead of overflowing a float (2**1100 * 0.05).
    q = SchedulingQueue(lambda a, b: False, initial_backoff=0.05, max_backoff=0.1)
    assert q.backoff_duration(1) == 0.05
    assert q.backoff_duration(2) == 0.1
    assert q.backoff_duration(5000) == 0.1


def test_counts_follow_each_pod_through_every_queue() -> None:
    """The pending gauges' counts, kept as pods move, match where each pod is at each step
    (a re-push in activeQ, a gated pod let in and a deleted one included)."""

    def pre_enqueue(p: Pod) -> Status:
        return Status.unresolvable("gated") if p.scheduling_gates else Status()

    clock = Clock()
    q = make(clock, pre_enqueue=pre_enqueue)

    def counts(active: int = 0, backoff: int = 0, unschedulable: int = 0, gated: int = 0) -> None:
        assert q.counts() == {
            "active": active,
            "backoff": backoff,
            "unschedulable": unschedulable,
            "gated": gated,
        }

    q.add(pod("a", priority=1))
    q.add(pod("b"))
    q.add(pod("g", gates=("example.com/wait",)))
    counts(active=2, gated=1)
    q.update(pod("b", priority=5))  # re-pushed in activeQ: still one pod there
    counts(active=2, gated=1)
    first = q.pop()
    assert first is not None and first.pod.uid == "b"
    counts(active=1, gated=1)
    q.add_unschedulable(first, ["X"])
    counts(active=1, unschedulable=1, gated=1)
    q.update(pod("g"))  # the gate lifted
    counts(active=2, unschedulable=1)
    clock.now += 0.5
    (move,) = q.move_on_event(NODE_ADD, {"X": [NODE_ADD]}, "NodeAdd")
    assert move.to == "backoff"
    counts(active=2, backoff=1)
    clock.now += 1
    q.flush()
    counts(active=3)
    q.delete("a")
    counts(active=2)
    popped = [q.pop(), q.pop()]
    assert all(info is not None for info in popped) and q.pop() is None
    counts()


def test_park_sends_a_waiting_pod_to_unschedulable_until_its_plugins_event() -> None:
    """A starting process that finishes a preemption parks the preemptor, restored to
    activeQ or backoffQ, as its attempt's failure left it."""
    clock = Clock()
    q = make(clock)
    q.add(pod("active"))
    q.restore(pod("backing-off"), attempts=1, backoff_until=clock.now + 5)
    moves = [q.park(uid, ["NodeResourcesFit"]) for uid in ("active", "backing-off")]
    assert [(m.source, m.to, m.event) for m in moves if m is not None] == [
        ("active", "unschedulable", "ScheduleAttemptFailure"),
        ("backoff", "unschedulable", "ScheduleAttemptFailure"),
    ]
    assert q.counts()["unschedulable"] == 2
    clock.now += 10
    assert q.flush() == [] and q.pop() is None  # neither the stale heap entries
    delete = ClusterEvent("AssignedPod", "Delete")
    events = {"NodeResourcesFit": [NODE_ADD, delete]}
    assert q.move_on_event(ASSIGNED_POD_ADD, events, "AssignedPodAdd") == []
    moved = q.move_on_event(delete, events, "AssignedPodDelete")
    assert sorted(m.info.pod.name for m in moved) == ["active", "backing-off"]


def test_park_leaves_pods_in_flight_unknown_or_without_plugins_where_they_are() -> None:
    q = make(Clock())
    q.add(pod("a"))
    q.add(pod("b"))
    assert q.pop() is not None  # "a" is in flight
    assert q.park("a", ["NodeResourcesFit"]) is None
    assert q.park("nobody", ["NodeResourcesFit"]) is None
    assert q.park("b", []) is None
    assert q.counts()["active"] == 1
