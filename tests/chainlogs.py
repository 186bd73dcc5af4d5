"""Logs of a gang that cannot complete and of a pod held by two scheduling gates, written by
the real Scheduler over the simulated cluster (the tests of explain, the pages and the
views use them, and docs/samples/chains_run.py makes the docs' samples from them).

- `blocked_gang`: gang ml/ring, three members with minMember 3 on two 2-CPU nodes (rack-1,
  rack-2), one member (ring-2) asking for 4 CPUs: ring-0 and ring-1 reserve a node each and
  wait at Permit, ring-2 fits nowhere. With Coscheduling's PostFilter off the two wait (up to
  PERMIT_WAIT_SECONDS); with it on, ring-2's failure rejects them at once.
- `gated_pod`: default/train held by `kueue.x-k8s.io/admission` and `example.com/quota`,
  lifted one after the other, then placed on worker-1.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from typing import Any

from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.config.file import parse_config
from eventsched.events import EventStore
from eventsched.model import Node, Pod
from eventsched.model.podgroup import MIN_AVAILABLE_ANNOTATION, POD_GROUP_LABEL
from eventsched.plugins import full_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.plugins.test_coscheduling import config_doc

GATES = ("kueue.x-k8s.io/admission", "example.com/quota")
#: Long enough that the waiting members still wait while a test reads the log.
PERMIT_WAIT_SECONDS = 600
WAIT_S = 60.0


def node(name: str, cpu: str) -> Node:
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
        }
    )


def member(name: str, cpu: str) -> Pod:
    return Pod.from_manifest(
        {
            "metadata": {
                "name": name,
                "namespace": "ml",
                "labels": {POD_GROUP_LABEL: "ring"},
                "annotations": {MIN_AVAILABLE_ANNOTATION: "3"},
            },
            "spec": {
                "schedulerName": "eventsched",
                "containers": [{"name": "w", "resources": {"requests": {"cpu": cpu}}}],
            },
        }
    )


def gated(name: str, gates: tuple[str, ...]) -> Pod:
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "schedulerName": "eventsched",
                "schedulingGates": [{"name": g} for g in gates],
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
            },
        }
    )


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Poll `condition` (a read of the log) until it holds; fail naming `what` after WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"not reached in {WAIT_S:.0f} s: {what}"
        time.sleep(0.05)


@contextlib.contextmanager
def running(scheduler: Scheduler) -> Iterator[Scheduler]:
    """The scheduler's loop on a thread; stopped (what it decided flushed) on exit."""
    stop = threading.Event()
    scheduler.start()
    thread = threading.Thread(target=scheduler.run, args=(stop,), daemon=True)
    thread.start()
    try:
        yield scheduler
    finally:
        stop.set()
        thread.join(10)
        scheduler.stop()


def _kinds(store: EventStore, name: str) -> list[tuple[str, dict[str, Any]]]:
    return [(e.kind, dict(e.data)) for e in store.read_pod("ml", name)]


def _waiting(store: EventStore, name: str) -> bool:
    permits = [d["decision"] for k, d in _kinds(store, name) if k == "permitted"]
    return permits[-1:] == ["wait"]


def _denied(store: EventStore, name: str) -> bool:
    return any(k == "permitted" and d["decision"] == "deny" for k, d in _kinds(store, name))


def _unschedulable(store: EventStore, name: str) -> bool:
    return any(k == "unschedulable" for k, _ in _kinds(store, name))


@contextlib.contextmanager
def blocked_gang(url: str, *, post_filter: bool = False) -> Iterator[Scheduler]:
    """The gang's log at `url`, the scheduler still running, once it is stuck: without
    PostFilter ring-0 and ring-1 wait at Permit; with it they were rejected (and back off
    for a minute, so the log stays as it is while the caller reads it)."""
    args = {"permitWaitingTimeSeconds": PERMIT_WAIT_SECONDS}
    (profile,) = parse_config(config_doc(args, post_filter), "chainlogs", full_registry()).profiles
    cluster = SimulatedCluster(
        [node("rack-1", "2"), node("rack-2", "2")],
        [member("ring-0", "1"), member("ring-1", "1"), member("ring-2", "4")],
    )
    with EventStore.connect(url) as store:
        scheduler = Scheduler(
            store,
            cluster,
            [profile],
            full_registry(),
            SchedulerOptions(initial_backoff=60.0, max_backoff=60.0),
        )
        with running(scheduler):
            settled = _denied if post_filter else _waiting
            wait_for(
                lambda: (
                    all(settled(store, n) for n in ("ring-0", "ring-1"))
                    and _unschedulable(store, "ring-2")
                ),
                "ring-0 and ring-1 " + ("rejected" if post_filter else "waiting at Permit"),
            )
            yield scheduler


def gated_pod(url: str) -> None:
    """default/train's log at `url`: held by two gates, lifted one after the other, placed."""
    pod = gated("train", GATES)
    cluster = SimulatedCluster([node("worker-1", "4")], [pod])
    with EventStore.connect(url) as store:
        scheduler = Scheduler(
            store, cluster, [default_profile()], full_registry(), SchedulerOptions()
        )
        with running(scheduler):
            wait_for(lambda: _observed_gates(store) == GATES, "train observed with both gates")
            for left in (GATES[1:], ()):
                cluster.update_pod(replace(_current(cluster), scheduling_gates=left))
                wait_for(partial(_gates_are, store, left), f"gates {left} observed")
            wait_for(
                lambda: any(e.kind == "bound" for e in store.read_pod("default", "train")),
                "train bound",
            )


def _current(cluster: SimulatedCluster) -> Pod:
    pod = cluster.get_pod("default/train")
    assert pod is not None
    return pod


def _gates_are(store: EventStore, gates: tuple[str, ...]) -> bool:
    return _observed_gates(store) == gates


def _observed_gates(store: EventStore) -> tuple[str, ...]:
    observed = [e for e in store.read_pod("default", "train") if e.kind == "pod_observed"]
    return tuple(observed[-1].data.get("schedulingGates", ())) if observed else ("?",)
