"""Coscheduling: gang PreFilter, Permit wait/approve, Unreserve of the whole gang.

Unit tests drive the plugin through a Handle (snapshot, waiting pods, sink);
scheduler tests run the real Scheduler over the simulated cluster on both
databases; the CLI test runs the example profile through `eventsched simulate`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from eventsched.cluster import SimulatedCluster
from eventsched.config.file import parse_config
from eventsched.events import EventStore, StoredEvent, rebuild
from eventsched.framework import (
    Code,
    CycleState,
    Handle,
    ListSink,
    PluginArgsError,
    Profile,
    QueuedPodInfo,
    WaitingPod,
)
from eventsched.model import NodeTable, Pod
from eventsched.plugins import full_registry
from eventsched.plugins.coscheduling import Coscheduling
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.cli.test_cli import ROOT, eventsched
from tests.plugins.conftest import make_node
from tests.scheduler.helpers import node

GROUP = "scheduling.x-k8s.io/pod-group"
MIN = "scheduling.x-k8s.io/min-available"


def member(
    name: str,
    group: str | None = "train",
    min_available: str | None = "4",
    namespace: str = "shop",
    cpu: str = "1",
) -> Pod:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"}
    if group is not None:
        meta["labels"] = {GROUP: group}
    if min_available is not None:
        meta["annotations"] = {MIN: min_available}
    return Pod.from_manifest(
        {
            "metadata": meta,
            "spec": {
                "schedulerName": "eventsched",
                "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
            },
        }
    )


def gang(n: int, **kw: Any) -> list[Pod]:
    return [member(f"train-{i}", **kw) for i in range(n)]


def setup(args: dict[str, Any] | None = None) -> tuple[Coscheduling, Handle, ListSink]:
    handle = Handle(NodeTable([make_node("n1", cpu="64"), make_node("n2", cpu="64")]))
    sink = ListSink()  # the tests give it to the CycleStates whose records they read
    return Coscheduling(args or {}, handle), handle, sink


def park(handle: Handle, pod: Pod, timeout: float = 60.0) -> WaitingPod:
    """A member the framework holds at Permit: assumed on a node, in the waiting map."""
    handle.table.add_pod(pod.with_node("n1"), "n1")
    waiting = WaitingPod(pod, "n1", {"Coscheduling": timeout})
    handle.waiting_pods.add(waiting)
    return waiting


def verdict(waiting: WaitingPod) -> tuple[Code, str, str] | None:
    """The waiting pod's verdict so far, None while undecided (wait() would block)."""
    status = waiting._status  # no public non-blocking accessor; wait() blocks until decided
    return None if status is None else (status.code, status.plugin, status.message)


# -- args ---------------------------------------------------------------------------


def test_defaults() -> None:
    plugin, _, _ = setup()
    assert plugin.timeout == 60.0 and plugin.default_min is None


@pytest.mark.parametrize(
    ("args", "field", "problem"),
    [
        (
            {"permitWaitingTimeSeconds": "1m"},
            "permitWaitingTimeSeconds",
            "must be a positive number of seconds (got '1m')",
        ),
        (
            {"permitWaitingTimeSeconds": 0},
            "permitWaitingTimeSeconds",
            "must be a positive number of seconds (got 0)",
        ),
        (
            {"permitWaitingTimeSeconds": True},
            "permitWaitingTimeSeconds",
            "must be a positive number of seconds (got True)",
        ),
        (
            {"permitWaitingTimeSeconds": 3600},
            "permitWaitingTimeSeconds",
            "must be at most 900 (kube-scheduler's longest Permit wait; got 3600)",
        ),
        (
            {"defaultMinAvailable": 0},
            "defaultMinAvailable",
            "must be a positive integer (got 0)",
        ),
        (
            {"defaultMinAvailable": "3"},
            "defaultMinAvailable",
            "must be a positive integer (got '3')",
        ),
        (
            {"minMember": 3},
            "minMember",
            "unknown field; Coscheduling takes permitWaitingTimeSeconds, defaultMinAvailable",
        ),
    ],
)
def test_bad_args_name_the_field(args: dict[str, Any], field: str, problem: str) -> None:
    with pytest.raises(PluginArgsError) as err:
        Coscheduling(args, Handle())
    assert (err.value.field, err.value.problem) == (field, problem)


def test_bad_args_in_a_config_file_name_the_full_path() -> None:
    doc = config_doc({"permitWaitingTimeSeconds": "1m"})
    with pytest.raises(Exception) as err:
        parse_config(doc, "cos.yaml", full_registry())
    assert "profiles[0].pluginConfig[0].args.permitWaitingTimeSeconds" in str(err.value)
    assert "must be a positive number of seconds (got '1m')" in str(err.value)


# -- pods outside gangs, bad annotations ----------------------------------------------


def test_pods_outside_any_gang_pass_everywhere() -> None:
    plugin, handle, sink = setup()
    for pod in (member("solo", group=None), member("empty", group="")):
        plugin.pre_enqueue(pod)
        assert plugin.pre_filter(CycleState(sink=sink), pod, handle.table) == (None, None)
        assert plugin.permit(CycleState(sink=sink), pod, "n1") == (None, 0.0)
    assert sink.decisions == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "pod group shop/train has no minAvailable: set the annotation "
         "scheduling.x-k8s.io/min-available on its pods or the Coscheduling arg defaultMinAvailable"),
        ("four", "annotation scheduling.x-k8s.io/min-available must be a positive integer (got 'four')"),
        ("0", "annotation scheduling.x-k8s.io/min-available must be a positive integer (got '0')"),
        ("-2", "annotation scheduling.x-k8s.io/min-available must be a positive integer (got '-2')"),
        ("٣", "annotation scheduling.x-k8s.io/min-available must be a positive integer (got '٣')"),
    ],
)  # fmt: skip
def test_missing_or_malformed_min_available_is_rejected_with_the_fix(
    value: str | None, message: str
) -> None:
    plugin, handle, _ = setup()
    pod = member("train-0", min_available=value)
    plugin.pre_enqueue(pod)
    _, status = plugin.pre_filter(CycleState(), pod, handle.table)
    assert status is not None
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and status.message == message
    permit, timeout = plugin.permit(CycleState(), pod, "n1")
    assert permit is not None and permit.code == Code.UNSCHEDULABLE
    assert permit.message == message and timeout == 0.0


def test_default_min_available_applies_to_pods_without_the_annotation() -> None:
    plugin, handle, _ = setup({"defaultMinAvailable": 2})
    first, second = gang(2, min_available=None)
    status, timeout = plugin.permit(CycleState(), first, "n1")
    assert status is not None and status.is_wait and timeout == 60.0
    park(handle, first)
    assert plugin.permit(CycleState(), second, "n1") == (None, 0.0)
    # The annotation wins over the default.
    assert plugin.min_available(member("x", min_available="5")) == (5, "")


# -- PreFilter -------------------------------------------------------------------------


def test_prefilter_rejects_a_gang_smaller_than_min_available() -> None:
    plugin, handle, sink = setup()
    pods = gang(3)
    for pod in pods:
        plugin.pre_enqueue(pod)
    _, status = plugin.pre_filter(CycleState(sink=sink), pods[0], handle.table)
    assert status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message == "pod group shop/train has 3 pods, fewer than minAvailable 4"
    (recorded,) = sink.of("input_recorded")
    assert recorded.plugin == "Coscheduling"
    assert recorded.data == {
        "key": "podgroup/shop/train/preFilter",
        "value": {"pods": 3, "pending": 3, "minAvailable": 4},
    }
    # A fourth member arrives: the gang can now be complete.
    plugin.pre_enqueue(member("train-3"))
    assert plugin.pre_filter(CycleState(sink=sink), pods[0], handle.table) == (None, None)


def test_prefilter_counts_placed_and_waiting_members_and_only_this_namespace() -> None:
    plugin, handle, _ = setup()
    placed = member("train-0")
    handle.table.add_pod(placed.with_node("n2"), "n2")  # bound before
    park(handle, member("train-1"))  # waiting at Permit
    plugin.pre_enqueue(member("train-0", namespace="other"))  # same label, other namespace
    pod = member("train-2")
    plugin.pre_enqueue(pod)
    _, status = plugin.pre_filter(CycleState(), pod, handle.table)
    assert status is not None
    assert status.message == "pod group shop/train has 3 pods, fewer than minAvailable 4"
    plugin.pre_enqueue(member("train-3"))
    assert plugin.pre_filter(CycleState(), pod, handle.table) == (None, None)


def test_prefilter_does_not_guess_without_preenqueue() -> None:
    """Without PreEnqueue the pending members are unknown: no early rejection, no record."""
    plugin, handle, sink = setup()
    pod = member("train-0")
    assert plugin.pre_filter(CycleState(sink=sink), pod, handle.table) == (None, None)
    assert sink.of("input_recorded") == []


def test_prefilter_forgets_pending_members_not_seen_for_long() -> None:
    now = [1000.0]
    handle = Handle(NodeTable([make_node("n1")]), monotonic=lambda: now[0])
    plugin = Coscheduling({}, handle)
    for pod in gang(3):
        plugin.pre_enqueue(pod)  # three of these are deleted while pending, unseen
    now[0] += 16 * 60
    pod = member("train-9", min_available="2")
    plugin.pre_enqueue(pod)
    _, status = plugin.pre_filter(CycleState(), pod, handle.table)
    assert status is not None
    assert status.message == "pod group shop/train has 1 pods, fewer than minAvailable 2"


def test_prefilter_while_replaying_uses_the_recorded_count() -> None:
    plugin, handle, sink = setup()
    pod = member("train-0")
    handle.replay_inputs = {
        ("Coscheduling", "podgroup/shop/train/preFilter"): {
            "pods": 4,
            "pending": 4,
            "minAvailable": 4,
        }
    }
    # Live, nothing is known about the gang; the log says four pods were.
    assert plugin.pre_filter(CycleState(sink=sink), pod, handle.table) == (None, None)
    assert sink.of("input_recorded")[0].data["value"]["pods"] == 4


# -- Permit ------------------------------------------------------------------------------


def test_permit_waits_until_min_available_then_approves_the_whole_gang() -> None:
    plugin, handle, sink = setup({"permitWaitingTimeSeconds": 5})
    pods = gang(4)
    parked: list[WaitingPod] = []
    for i, pod in enumerate(pods[:3]):
        status, timeout = plugin.permit(CycleState(sink=sink), pod, "n1")
        assert status is not None and status.is_wait and timeout == 5.0
        assert status.message == f"pod group shop/train: {i + 1} of minAvailable 4 members reserved"
        parked.append(park(handle, pod))
    other_ns = park(handle, member("train-0", namespace="lab"))
    other_group = park(handle, member("eval-0", group="eval"))
    assert [verdict(w) for w in parked] == [None, None, None]

    assert plugin.permit(CycleState(sink=sink), pods[3], "n1") == (None, 0.0)
    assert [verdict(w) for w in parked] == [(Code.SUCCESS, "Coscheduling", "")] * 3
    assert verdict(other_ns) is None and verdict(other_group) is None
    last = sink.of("input_recorded")[-1].data
    assert last == {
        "key": "podgroup/shop/train/permit",
        "value": {
            "reserved": 4,
            "waiting": ["shop/train-0", "shop/train-1", "shop/train-2"],
            "minAvailable": 4,
        },
    }


def test_permit_counts_bound_members() -> None:
    """A member recreated after its gang ran does not wait for siblings already bound."""
    plugin, handle, _ = setup()
    for pod in gang(3):
        handle.table.add_pod(pod.with_node("n2"), "n2")
    assert plugin.permit(CycleState(), member("train-3"), "n1") == (None, 0.0)


def test_permit_reuses_what_prefilter_found_in_the_same_cycle() -> None:
    """One scan of the snapshot per attempt: Permit counts from PreFilter's CycleState entry."""
    plugin, handle, _ = setup()
    pods = gang(2, min_available="2")
    for pod in pods:
        plugin.pre_enqueue(pod)
    handle.table.add_pod(pods[0].with_node("n2"), "n2")  # bound sibling
    state = CycleState()
    assert plugin.pre_filter(state, pods[1], handle.table) == (None, None)
    handle.table.remove_pod(pods[0].uid, "n2")  # the scan's result is what Permit uses
    assert plugin.permit(state, pods[1], "n1") == (None, 0.0)
    status, _ = plugin.permit(CycleState(), pods[1], "n1")  # a fresh scan: alone now
    assert status is not None and status.is_wait


def test_permit_does_not_count_itself_twice() -> None:
    """The scheduler assumes the pod before Permit: it is in the snapshot already."""
    plugin, handle, _ = setup()
    pod = member("train-0", min_available="2")
    handle.table.add_pod(pod.with_node("n1"), "n1")
    status, _ = plugin.permit(CycleState(), pod, "n1")
    assert status is not None and status.is_wait


def test_min_available_one_approves_at_once() -> None:
    plugin, _, _ = setup()
    assert plugin.permit(CycleState(), member("solo", min_available="1"), "n1") == (None, 0.0)


# -- Unreserve ----------------------------------------------------------------------------


def test_a_failing_member_rejects_every_waiting_member_of_its_gang() -> None:
    plugin, handle, _ = setup()
    pods = gang(4)
    parked = [park(handle, pod) for pod in pods[:3]]
    bystander = park(handle, member("train-0", namespace="lab"))
    failed = pods[0]
    handle.waiting_pods.remove(failed.uid)  # its binding cycle took it out, then unreserves
    plugin.unreserve(CycleState(), failed, "n1")
    message = "pod group shop/train rejected: member shop/train-0 failed"
    assert [verdict(w) for w in parked[1:]] == [(Code.UNSCHEDULABLE, "Coscheduling", message)] * 2
    assert verdict(bystander) is None
    # Until the scheduler forgets them, the failed members are still in the snapshot
    # as assumed: they must not complete the gang for a newcomer.
    for w in parked[1:]:
        handle.waiting_pods.remove(w.pod.uid)
    status, _ = plugin.permit(CycleState(), pods[3], "n1")
    assert status is not None and status.is_wait


def test_unreserve_after_approval_leaves_allowed_members_alone() -> None:
    plugin, handle, _ = setup()
    pods = gang(2, min_available="2")
    first = park(handle, pods[0])
    assert plugin.permit(CycleState(), pods[1], "n1") == (None, 0.0)
    plugin.unreserve(CycleState(), pods[1], "n1")  # e.g. its Binding failed afterwards
    assert verdict(first) == (Code.SUCCESS, "Coscheduling", "")


# -- through the scheduler --------------------------------------------------------------


def config_doc(args: dict[str, Any], post_filter: bool = True) -> dict[str, Any]:
    """Coscheduling at every point by multiPoint (PrioritySort off); `post_filter` False
    takes it off postFilter, so that a gang that cannot complete waits for its timeout."""
    plugins: dict[str, Any] = {
        "multiPoint": {
            "enabled": [{"name": "Coscheduling"}],
            "disabled": [{"name": "PrioritySort"}],
        }
    }
    if not post_filter:
        plugins["postFilter"] = {"disabled": [{"name": "Coscheduling"}]}
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "eventsched",
                "plugins": plugins,
                "pluginConfig": [{"name": "Coscheduling", "args": args}],
            }
        ],
    }


def coscheduling_profile(timeout: float, post_filter: bool = True) -> Profile:
    (profile,) = parse_config(
        config_doc({"permitWaitingTimeSeconds": timeout}, post_filter), "test", full_registry()
    ).profiles
    return profile


def test_multipoint_enables_it_at_its_six_points() -> None:
    profile = coscheduling_profile(1)
    for point in ("preEnqueue", "preFilter", "postFilter", "reserve", "permit"):
        assert "Coscheduling" in [ref.name for ref in profile.at(point)], point
    assert [ref.name for ref in profile.at("queueSort")] == ["Coscheduling"]


def test_queue_sort_is_priority_then_group_time_then_name() -> None:
    plugin, _, _ = setup()
    solo_late = QueuedPodInfo(member("solo", None), timestamp=9.0, initial_attempt_timestamp=9.0)
    early = QueuedPodInfo(member("a-0", "a"), timestamp=1.0, initial_attempt_timestamp=1.0)
    late_member = QueuedPodInfo(member("a-1", "a"), timestamp=20.0, initial_attempt_timestamp=20.0)
    high = QueuedPodInfo(replace(member("hi", None), priority=5), timestamp=30.0)
    assert plugin.less(high, early) and not plugin.less(early, high)
    assert plugin.less(early, solo_late)
    # a-1 entered later than solo but its gang's time is a-0's (1.0): it goes first
    assert plugin.less(late_member, solo_late)
    same = QueuedPodInfo(member("a-2", "a"), timestamp=1.0, initial_attempt_timestamp=1.0)
    assert plugin.less(early, same) and not plugin.less(same, early)  # then by name


def test_post_filter_says_what_scheduler_plugins_says() -> None:
    plugin, handle, _ = setup()
    result, status = plugin.post_filter(CycleState(), member("solo", None), {})
    assert result is None and status is not None
    assert (status.code, status.message) == (Code.UNSCHEDULABLE, "can not find pod group")
    waiting = park(handle, member("g-0", "g"))
    result, status = plugin.post_filter(CycleState(), member("g-1", "g"), {})
    assert result is None and status is not None
    assert status.message == (
        "PodGroup shop/g gets rejected due to Pod g-1 is unschedulable even after PostFilter"
    )
    assert verdict(waiting) == (
        Code.UNSCHEDULABLE,
        "Coscheduling",
        "optimistic rejection in PostFilter",
    )


def make_scheduler(
    store: EventStore,
    cluster: SimulatedCluster,
    timeout: float,
    post_filter: bool = True,
    **options: Any,
) -> Scheduler:
    return Scheduler(
        store,
        cluster,
        [coscheduling_profile(timeout, post_filter)],
        full_registry(),
        SchedulerOptions(**{"initial_backoff": 0.05, "max_backoff": 0.1, **options}),
    )


def pod_events(store: EventStore, pod: Pod) -> list[StoredEvent]:
    return list(store.read_pod(pod.namespace, pod.name))


def permits(events: list[StoredEvent]) -> list[str]:
    return [e.data["decision"] for e in events if e.kind == "permitted"]


@pytest.fixture
def running() -> Iterator[list[tuple[Scheduler, threading.Event, threading.Thread]]]:
    """Schedulers run on a thread, stopped at the end even when the test fails."""
    started: list[tuple[Scheduler, threading.Event, threading.Thread]] = []
    yield started
    for scheduler, stop, thread in started:
        stop.set()
        thread.join(10)
        scheduler.stop()


def start_in_thread(
    scheduler: Scheduler, running: list[tuple[Scheduler, threading.Event, threading.Thread]]
) -> threading.Event:
    stop = threading.Event()
    scheduler.start()
    thread = threading.Thread(target=scheduler.run, args=(stop,), daemon=True)
    thread.start()
    running.append((scheduler, stop, thread))
    return stop


def halt(running: list[tuple[Scheduler, threading.Event, threading.Thread]]) -> None:
    """Stop the loop and the scheduler: what it decided is flushed to the log."""
    for scheduler, stop, thread in running:
        stop.set()
        thread.join(10)
        scheduler.stop()
    running.clear()


def wait_for(condition: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


def test_gang_of_four_with_room_for_three_times_out_and_leaves_nothing_reserved(
    store: EventStore, running: list[Any]
) -> None:
    cluster = SimulatedCluster([node("a", cpu="2"), node("b", cpu="1")], gang(4))
    # A long backoff keeps the timed-out members out of the queue afterwards, so the
    # state the timeout left behind can be looked at without a second round starting.
    scheduler = make_scheduler(
        store, cluster, 1, post_filter=False, initial_backoff=60.0, max_backoff=60.0
    )
    start_in_thread(scheduler, running)

    def settled() -> bool:
        refused = [e for e in store.read(kinds=["permitted"]) if e.data["decision"] != "wait"]
        return (
            len({e.name for e in refused}) == 3
            and len(scheduler.handle.waiting_pods) == 0
            and scheduler.bindings == 0
        )

    wait_for(settled)
    halt(running)

    assert not any(p.node_name for p in cluster.list_pods())  # nothing bound
    assert not any(scheduler.cache.is_assumed(p.uid) for p in gang(4))  # nothing assumed
    assert not rebuild(store).open_reservations  # nothing reserved, from the log alone
    decisions = [e.data["decision"] for e in store.read(kinds=["permitted"])]
    assert "timeout" in decisions and "approve" not in decisions
    messages = {
        e.data["status"]["reasons"][0]
        for e in store.read(kinds=["permitted"])
        if e.data["decision"] in ("timeout", "deny")
    }
    assert "rejected due to timeout after waiting 1s at plugin Coscheduling" in messages
    assert messages <= {
        "rejected due to timeout after waiting 1s at plugin Coscheduling",
        *(f"pod group shop/train rejected: member shop/train-{i} failed" for i in range(4)),
    }
    reserved = [p for p in gang(4) if "reserved" in [e.kind for e in pod_events(store, p)]]
    assert len(reserved) == 3
    for pod in reserved:
        events = pod_events(store, pod)
        kinds = [e.kind for e in events]
        # Each member reserved, waited, was refused (its own timeout or a sibling's),
        # and was unreserved; the log shows each step in that order.
        assert permits(events) in (["wait", "timeout"], ["wait", "deny"]), pod.name
        waited = next(i for i, e in enumerate(events) if e.kind == "permitted")
        refused = next(i for i, e in enumerate(events) if e.kind == "permitted" and i > waited)
        assert kinds.index("reserved") < waited < refused < kinds.index("unreserved", refused)
        assert events[refused].plugin == "Coscheduling"
    # The fourth member never fit: it was told why, and reserved nothing.
    (left_out,) = [p for p in gang(4) if p not in reserved]
    unschedulable = [e for e in pod_events(store, left_out) if e.kind == "unschedulable"]
    assert unschedulable[0].data["message"] == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.."
    )


def test_gang_of_four_with_room_for_four_binds_all(store: EventStore) -> None:
    pods = gang(4)
    cluster = SimulatedCluster([node("a", cpu="2"), node("b", cpu="2")], pods)
    scheduler = make_scheduler(store, cluster, 10)
    scheduler.start()
    scheduler.run(until_idle=True)
    scheduler.stop()

    assert sorted(p.name for p in cluster.list_pods() if p.node_name) == [p.name for p in pods]
    waited = [p for p in pods if permits(pod_events(store, p)) == ["wait", "approve"]]
    at_once = [p for p in pods if permits(pod_events(store, p)) == ["approve"]]
    assert len(waited) == 3 and len(at_once) == 1
    for pod in waited:
        events = pod_events(store, pod)
        approval = [e for e in events if e.kind == "permitted"][1]
        assert approval.plugin == "Coscheduling" and approval.data["afterWait"] is True
        assert [e.kind for e in events][-1] == "bound"
    # The approving member's Permit saw the three others waiting; every approval of a
    # waiting member comes after that decision in the log.
    (last,) = at_once
    completing = next(
        e
        for e in pod_events(store, last)
        if e.kind == "input_recorded" and e.data["key"] == "podgroup/shop/train/permit"
    )
    assert completing.data["value"]["reserved"] == 4
    assert completing.data["value"]["waiting"] == sorted(p.key for p in waited)
    approvals = [e for p in waited for e in pod_events(store, p) if e.kind == "permitted"]
    assert all(
        e.position > completing.position for e in approvals if e.data["decision"] == "approve"
    )
    assert not rebuild(store).open_reservations


def test_a_gang_larger_than_the_binder_pool_does_not_deadlock(store: EventStore) -> None:
    """Waiting members hold binder workers, but approval comes from the scheduling loop."""
    pods = gang(6, min_available="6", cpu="500m")
    cluster = SimulatedCluster([node("a", cpu="2"), node("b", cpu="2")], pods)
    scheduler = make_scheduler(store, cluster, 10, binder_workers=2)
    began = time.monotonic()
    scheduler.start()
    scheduler.run(until_idle=True)
    scheduler.stop()
    assert len([p for p in cluster.list_pods() if p.node_name]) == 6
    assert time.monotonic() - began < 10  # approved, not timed out
    assert [e.data["decision"] for e in store.read(kinds=["permitted"])].count("approve") == 6


def test_a_member_deleted_while_waiting_fails_the_whole_gang_at_once(
    store: EventStore, running: list[Any]
) -> None:
    pods = gang(4)
    cluster = SimulatedCluster([node("a", cpu="2"), node("b", cpu="1")], pods)
    scheduler = make_scheduler(
        store, cluster, 60, post_filter=False, initial_backoff=60.0, max_backoff=60.0
    )
    start_in_thread(scheduler, running)
    wait_for(lambda: len(scheduler.handle.waiting_pods) == 3)
    waiting = sorted(w.pod.name for w in scheduler.handle.waiting_pods)
    began = time.monotonic()
    cluster.delete_pod(f"shop/{waiting[0]}")
    wait_for(lambda: len(scheduler.handle.waiting_pods) == 0 and scheduler.bindings == 0)
    assert time.monotonic() - began < 30  # well before the 60 s timeout
    halt(running)
    message = f"pod group shop/train rejected: member shop/{waiting[0]} failed"
    for name in waiting[1:]:
        events = list(store.read_pod("shop", name))
        denied = [e for e in events if e.kind == "permitted" and e.data["decision"] == "deny"]
        assert denied and denied[0].data["status"]["reasons"] == [message]
        assert denied[0].plugin == "Coscheduling"
        assert "unreserved" in [e.kind for e in events[events.index(denied[0]) :]]
    assert not any(p.node_name for p in cluster.list_pods())


def test_a_member_that_fits_nowhere_rejects_the_waiting_gang_in_post_filter(
    store: EventStore, running: list[Any]
) -> None:
    """Upstream's PostFilter: the fourth member of a gang with room for three fails its
    Filter pass, and its three waiting siblings are rejected at once, not at their timeout."""
    cluster = SimulatedCluster([node("a", cpu="2"), node("b", cpu="1")], gang(4))
    scheduler = make_scheduler(store, cluster, 60, initial_backoff=60.0, max_backoff=60.0)
    start_in_thread(scheduler, running)
    began = time.monotonic()

    def rejected() -> list[Any]:
        return [
            e
            for e in store.read(kinds=["permitted"])
            if e.data["decision"] == "deny"
            and e.data["status"]["reasons"] == ["optimistic rejection in PostFilter"]
        ]

    wait_for(lambda: len({e.name for e in rejected()}) == 3 and scheduler.bindings == 0)
    assert time.monotonic() - began < 30  # well before the 60 s timeout
    halt(running)
    assert not any(p.node_name for p in cluster.list_pods())
    assert not rebuild(store).open_reservations
    failed = [e for e in store.read(kinds=["unschedulable"])]
    assert any("PodGroup shop/train gets rejected due to Pod" in e.data["message"] for e in failed)


# -- the CLI, with the example profile ---------------------------------------------------


@pytest.mark.slow
def test_simulate_example_profile_then_explain(db_url: str) -> None:
    run = eventsched(
        "simulate",
        "--config",
        str(ROOT / "examples" / "profiles" / "coscheduling.yaml"),
        str(ROOT / "examples" / "coscheduling"),
        db=db_url,
    )
    assert run.returncode == 0, run.stderr
    assert "4 of 7 pending pods bound, 3 unschedulable" in run.stdout
    rejected = "pod group shop/tune has 3 pods, fewer than minAvailable 4"
    assert f"shop/tune-0: 0/2 nodes are available: {rejected}." in run.stdout

    tune = eventsched("explain", "shop/tune-0", db=db_url)
    assert tune.returncode == 0, tune.stderr
    assert f"PreFilter: Coscheduling UnschedulableAndUnresolvable: {rejected}" in tune.stdout

    decisions: dict[str, list[str]] = {}
    for i in range(4):
        out = eventsched("explain", f"shop/train-{i}", "--json", db=db_url)
        assert out.returncode == 0, out.stderr
        explained = json.loads(out.stdout)
        assert explained["final_node"] in ("gpu-1", "gpu-2")
        (attempt,) = explained["attempts"]
        steps = attempt["steps"]
        decisions[f"train-{i}"] = [s["decision"] for s in steps if s["kind"] == "permitted"]
        inputs = [s for s in steps if s["kind"] == "input_recorded"]
        assert [s["key"] for s in inputs] == [
            "podgroup/shop/train/preFilter",
            "podgroup/shop/train/permit",
        ]
    assert sorted(decisions.values()) == [["approve"]] + [["wait", "approve"]] * 3
