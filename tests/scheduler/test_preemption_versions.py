"""Preemption end to end at v1.34 and v1.37: what the preemptor's failure says and what the
victims' Events say, as kube-scheduler v1.34.4 and v1.37.2 word them; replay reproduces.

v1.28's wording is pinned by test_preemption.py (same scenarios)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from eventsched.audit.replay import Selection, replay
from eventsched.cluster.sim import SimulatedCluster
from eventsched.config.defaults import default_profile
from eventsched.config.featuregates import features_for
from eventsched.events import EventStore
from eventsched.framework import Code, Features, Handle, WaitingPod
from eventsched.model import NodeTable, Pod
from eventsched.model.preemptionwrites import preempted_event_message
from eventsched.plugins import in_tree_registry
from eventsched.scheduler.eviction import PREEMPTED_IN_MEMORY, evict_victims
from tests.framework.fakes import framework, nodes
from tests.scheduler.helpers import node
from tests.scheduler.test_preemption import kinds_of, placed, ppod
from tests.scheduler.test_scheduler import run_scheduler


def scenario() -> SimulatedCluster:
    """test_preemption.py's first scenario: `critical` evicts a-low and a-mid on a."""
    return SimulatedCluster(
        [node("a", cpu="3"), node("b", cpu="3")],
        [
            ppod("a-low", "1", 1, "a"),
            ppod("a-mid", "1", 2, "a"),
            ppod("a-keep", "1", 50, "a"),
            ppod("b-high", "2", 5, "b"),
            ppod("b-keep", "1", 60, "b"),
            ppod("critical", "2", 100),
        ],
    )


@pytest.mark.parametrize("version", ["1.34", "1.37"])
def test_the_preemptors_failure_and_the_victims_events(store: EventStore, version: str) -> None:
    features = features_for(version)
    cluster = scenario()
    run_scheduler(store, cluster, profiles=[default_profile("eventsched", features)])
    assert placed(cluster)["critical"] == "a"
    (first_failure,) = [e for e in kinds_of(store, ["unschedulable"]) if e.name == "critical"]
    message = first_failure.data["message"]
    if version == "1.34":
        # v1.34's successful preemption says nothing (Evaluator.Preempt: Success, no message).
        assert message == "0/2 nodes are available: 2 Insufficient cpu."
    else:
        # v1.37 (default_preemption_test.go TestPostFilter's success statuses): the
        # message ends with where it found room, with no "." added (FitError.Error).
        assert message == (
            "0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential "
            "placement for pod on node a, preempting 2 victims"
        )
    (post_filtered,) = [e for e in kinds_of(store, ["post_filtered"]) if e.name == "critical"]
    assert post_filtered.data["status"]["code"] == "Success"
    # The PodScheduled condition carried the same message (the condition is gone once
    # the pod is bound; the FailedScheduling Event stays).
    failed = [e for e in cluster.events if e.reason == "FailedScheduling"]
    assert [e.message for e in failed if e.pod_key == "default/critical"] == [message]
    preempted = [e for e in cluster.events if e.reason == "Preempted"]
    assert sorted(e.pod_key for e in preempted) == ["default/a-low", "default/a-mid"]
    # preemption.go PreemptPod (v1.34) / executor.go (v1.37): "Preempted by pod <UID> on node <node>"
    assert {e.message for e in preempted} == {"Preempted by pod uid-critical on node a"}
    report = replay(store, in_tree_registry(), Selection())
    assert report.reproduced == report.attempts, report.to_dict()


@pytest.mark.parametrize("version", ["1.34", "1.37"])
def test_not_eligible_gets_one_dot(store: EventStore, version: str) -> None:
    """test_preemption.py's preemptionPolicy=Never, where v1.28 ends with "..": from v1.34
    FitError adds no "." after the PostFilter message."""
    cluster = SimulatedCluster(
        [node("a", cpu="2")],
        [ppod("low", "2", 0, "a"), ppod("polite", "1", 100, preemptionPolicy="Never")],
    )
    run_scheduler(store, cluster, profiles=[default_profile("eventsched", features_for(version))])
    (failure, *_) = kinds_of(store, ["unschedulable"])
    assert failure.data["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: not eligible due to preemptionPolicy=Never."
    )


# -- a victim waiting on Permit -----------------------------------------------------------


@dataclass
class Written:
    """What evict_victims asks of the cluster and the journal, kept."""

    events: list[tuple[str, str]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    evicted: list[dict[str, Any]] = field(default_factory=list)

    # Cluster
    def preempt(self, victim: Pod, preemptor: Pod) -> None:
        self.deleted.append(victim.name)

    def emit_event(
        self, pod: Pod, kind: str, reason: str, action: str, note: str, **_: Any
    ) -> None:
        self.events.append((pod.name, note))

    def clear_nomination(self, pod: Pod) -> None:
        pass

    # Journal.pending
    @property
    def pending(self) -> Written:
        return self

    def add(self, kind: str, data: dict[str, Any], **_: Any) -> None:
        self.evicted.append(data)


@pytest.mark.parametrize(
    ("version", "outcome", "note", "code", "message"),
    [
        ("1.28", "rejected", "Preempted by a pod on node a", Code.UNSCHEDULABLE, "preempted"),
        ("1.34", "rejected", "Preempted by pod uid-p on node a", Code.UNSCHEDULABLE, "preempted"),
        (
            "1.37",
            PREEMPTED_IN_MEMORY,
            "Preempted by pod uid-p on node a (in kube-scheduler memory).",
            Code.ERROR,
            "preempted",
        ),
    ],
)
def test_a_victim_waiting_on_permit(
    version: str, outcome: str, note: str, code: Code, message: str
) -> None:
    """v1.28/v1.34 `waitingPod.Reject(pluginName, "preempted")`; v1.37 executor.go
    `waitingPod.Preempt` (an Error) and the Event's " (in kube-scheduler memory)." suffix.
    Neither deletes the victim."""
    victim = ppod("gang-0", "1", 0, "a")
    handle = Handle(NodeTable())
    waiting = WaitingPod(victim, "a", {"Coscheduling": 60.0})
    handle.waiting_pods.add(waiting)
    written = Written()
    done = evict_victims(
        written,  # type: ignore[arg-type]
        written,  # type: ignore[arg-type]
        handle,
        None,
        ppod("p", "1", 100),
        "eventsched",
        "attempt-1",
        "a",
        [victim],
        features=Features(version=version),
    )
    assert done and written.deleted == []
    assert [e["outcome"] for e in written.evicted] == [outcome]
    assert written.events == [("gang-0", note)]
    status = waiting.wait()
    assert (status.code, status.message, status.plugin) == (code, message, "DefaultPreemption")


def test_a_victim_whose_wait_had_ended_is_deleted_at_v137() -> None:
    """executor.go: `Preempt` returns false when the wait was over; the victim is then
    deleted through the API, and its Event has no suffix."""
    victim = ppod("gang-0", "1", 0, "a")
    handle = Handle(NodeTable())
    waiting = WaitingPod(victim, "a", {"Coscheduling": 60.0})
    waiting.allow("Coscheduling")
    handle.waiting_pods.add(waiting)
    written = Written()
    evict_victims(
        written,  # type: ignore[arg-type]
        written,  # type: ignore[arg-type]
        handle,
        None,
        ppod("p", "1", 100),
        "eventsched",
        "attempt-1",
        "a",
        [victim],
        features=Features(version="1.37"),
    )
    assert written.deleted == ["gang-0"]
    assert written.events == [("gang-0", "Preempted by pod uid-p on node a")]


def test_the_event_text_per_version() -> None:
    assert preempted_event_message("n") == "Preempted by a pod on node n"
    assert preempted_event_message("n", "u") == "Preempted by pod u on node n"
    assert preempted_event_message("n", "u", in_memory=True) == (
        "Preempted by pod u on node n (in kube-scheduler memory)."
    )


def test_a_preempted_wait_fails_the_binding_cycle_with_upstreams_error() -> None:
    """framework.go WaitOnPermit: a status that is not a rejection comes back as
    "waiting on permit for pod: <message>", naming its plugin."""
    victim = ppod("gang-0", "1", 0, "a")
    fw = framework(nodes("a"), {}, {}, Features(version="1.37"))
    waiting = WaitingPod(victim, "a", {"Coscheduling": 60.0})
    fw.handle.waiting_pods.add(waiting)
    assert waiting.preempt("DefaultPreemption", "preempted")
    assert not waiting.preempt("DefaultPreemption", "preempted")  # the verdict stands
    status = fw.wait_on_permit(victim)
    assert (status.code, status.message, status.plugin) == (
        Code.ERROR,
        "waiting on permit for pod: preempted",
        "DefaultPreemption",
    )
