"""Group commit while nothing is scheduled: what comes in after the fact shares one append."""

from __future__ import annotations

import threading
from collections.abc import Callable

import sqlalchemy as sa

from eventsched.cluster import SimulatedCluster
from eventsched.cluster.types import SimEvent
from eventsched.config import default_profile
from eventsched.events import EventStore, StoredEvent
from eventsched.events.schema import event_batches
from eventsched.model import Node, Pod
from eventsched.model.changes import BindOutcome
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.scheduler.helpers import node, pod
from tests.waiting import wait_for


class GatedBinds(SimulatedCluster):
    """Each pod's Binding waits until the test opens its gate."""

    def __init__(self, nodes: list[Node], pods: list[Pod]) -> None:
        super().__init__(nodes, pods)
        self.gates = {p.name: threading.Event() for p in pods}

    def bind(self, pod: Pod, node_name: str) -> BindOutcome:
        assert self.gates[pod.name].wait(10), f"the test never opened {pod.name}'s gate"
        return super().bind(pod, node_name)


def batch_of(store: EventStore, position: int) -> int:
    with store.engine.connect() as conn:
        found = conn.execute(
            sa.select(event_batches.c.batch).where(
                event_batches.c.first_position <= position,
                event_batches.c.last_position >= position,
            )
        ).scalar_one()
    return int(found)


def bound_events(store: EventStore) -> list[StoredEvent]:
    return list(store.read(kinds=["bound"]))


def scheduled_events(cluster: SimulatedCluster) -> list[SimEvent]:
    return [e for e in cluster.events if e.reason == "Scheduled"]


def bound_counted(scheduler: Scheduler, count: int) -> Callable[[], bool]:
    return lambda: scheduler.stats.bound == count


def test_bindings_that_end_while_nothing_is_scheduled_share_one_append(
    store: EventStore,
) -> None:
    # Three decisions are made and durable, then their Bindings end one at a time while
    # the queue is empty. Each `bound` used to be appended alone, a transaction per
    # Binding (as at a client QPS of 50); now they join one group, within the window.
    names = ["a", "b", "c"]
    cluster = GatedBinds([node("n1", cpu="8")], [pod(name) for name in names])
    scheduler = Scheduler(
        store,
        cluster,
        [default_profile()],
        in_tree_registry(),
        SchedulerOptions(group_commit_wait=2.0, binder_workers=3),
    )
    scheduler.start()
    stop = threading.Event()
    loop = threading.Thread(target=scheduler.run, args=(stop,), daemon=True)
    loop.start()
    try:
        wait_for("three binding cycles", lambda: scheduler.bindings == 3)
        for count, name in enumerate(names, start=1):
            cluster.gates[name].set()
            wait_for(f"{name}'s binding handled", bound_counted(scheduler, count))
        wait_for("three bound events in the log", lambda: len(bound_events(store)) == 3)
        wait_for("three Scheduled Events", lambda: len(scheduled_events(cluster)) == 3)
    finally:
        stop.set()
        loop.join(10)
        scheduler.stop()
    bound = bound_events(store)
    assert {batch_of(store, e.position) for e in bound} == {batch_of(store, bound[0].position)}
    # The decisions were appended before any Binding, in a batch of their own.
    permitted = list(store.read(kinds=["permitted"]))
    assert max(e.position for e in permitted) < min(e.position for e in bound)
    assert {e.pod_key for e in scheduled_events(cluster)} == {f"default/{name}" for name in names}
