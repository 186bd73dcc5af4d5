"""SimulatedCluster: the status the scheduler and the kubelet write (nominatedNodeName,
startTime) and Events naming a related pod, as DefaultPreemption needs them.

The same behaviour on every adapter is tests/kube/test_cluster_contract.py's; these
are the simulated cluster's own details (what is delivered, and when).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from eventsched.cluster import ClusterChange, SimulatedCluster
from eventsched.model import Node, Pod


def pod(name: str, node_name: str = "") -> Pod:
    return Pod(uid=f"uid-{name}", namespace="default", name=name, node_name=node_name)


class Changes(list[ClusterChange]):
    def __call__(self, change: ClusterChange) -> None:
        self.append(change)

    def pods(self) -> list[tuple[str, str, str]]:
        return [
            (c.type, c.obj.name, c.obj.nominated_node_name) for c in self if isinstance(c.obj, Pod)
        ]


@pytest.fixture
def started() -> tuple[SimulatedCluster, Changes]:
    cluster = SimulatedCluster([Node(name="n1"), Node(name="n2")], [pod("a"), pod("b")])
    changes = Changes()
    cluster.start(changes)
    changes.clear()
    return cluster, changes


def current(cluster: SimulatedCluster, name: str) -> Pod:
    found = cluster.get_pod(f"default/{name}")
    assert found is not None
    return found


def test_nomination_is_set_left_alone_and_cleared_as_update_pod_would(
    started: tuple[SimulatedCluster, Changes],
) -> None:
    """`updatePod`: None leaves the nomination, a name sets it, "" clears it; each only
    when it differs from the pod the scheduler holds, each delivered once."""
    cluster, changes = started
    cluster.set_unschedulable(pod("a"), "m", "n1")
    nominated = current(cluster, "a")
    assert changes.pods() == [("MODIFIED", "a", "n1")]
    cluster.set_unschedulable(nominated, "m2")  # None: the nomination stays
    cluster.set_unschedulable(nominated, "m3", "n1")  # what the pod has: nothing to write
    assert current(cluster, "a").nominated_node_name == "n1"
    assert cluster.conditions["default/a"]["message"] == "m3"
    cluster.set_unschedulable(nominated, "m4", "")
    assert changes.pods() == [("MODIFIED", "a", "n1"), ("MODIFIED", "a", "")]
    cluster.set_unschedulable(pod("b"), "m", "")  # "" for a pod without one is harmless
    assert len(changes) == 2


def test_clear_nomination_empties_it_once_and_a_pod_gone_is_no_error(
    started: tuple[SimulatedCluster, Changes],
) -> None:
    cluster, changes = started
    cluster.set_unschedulable(pod("a"), "m", "n2")
    nominated = current(cluster, "a")
    cluster.clear_nomination(nominated)
    assert current(cluster, "a").nominated_node_name == ""
    cluster.clear_nomination(nominated)  # the cluster's pod has none: nothing delivered
    cluster.clear_nomination(pod("b"))  # the scheduler's copy has none: nothing sent
    assert changes.pods() == [("MODIFIED", "a", "n2"), ("MODIFIED", "a", "")]
    cluster.delete_pod("default/a")
    cluster.clear_nomination(nominated)


def test_a_user_update_keeps_the_status_the_scheduler_and_kubelet_wrote(
    started: tuple[SimulatedCluster, Changes],
) -> None:
    """An update of the spec is observed with status.nominatedNodeName still there, as the
    informer shows a pod after a PUT (which cannot change the status)."""
    cluster, changes = started
    cluster.set_unschedulable(pod("a"), "m", "n1")
    cluster.update_pod(replace(pod("a"), labels={"tier": "web"}))
    assert changes.pods()[-1] == ("MODIFIED", "a", "n1")
    assert current(cluster, "a").labels == {"tier": "web"}


def test_the_kubelet_starts_a_bound_pod_at_binding(
    started: tuple[SimulatedCluster, Changes],
) -> None:
    cluster, changes = started
    cluster.start_pods = True
    before = datetime.now(UTC).replace(microsecond=0)
    assert current(cluster, "a").start_time == ""
    assert cluster.bind(pod("a"), "n1").ok
    [change] = changes
    assert isinstance(change.obj, Pod)
    started_at = datetime.strptime(change.obj.start_time, "%Y-%m-%dT%H:%M:%SZ")
    assert before <= started_at.replace(tzinfo=UTC) <= datetime.now(UTC)
    assert current(cluster, "a").start_time == change.obj.start_time
    created = cluster.add_pod(pod("c", node_name="n2"))  # created on a node: started too
    assert created.start_time
    given = cluster.add_pod(replace(pod("d", node_name="n2"), start_time="2026-01-01T00:00:00Z"))
    assert given.start_time == "2026-01-01T00:00:00Z"


def test_an_event_keeps_its_related_pod(started: tuple[SimulatedCluster, Changes]) -> None:
    cluster, _ = started
    cluster.emit_event(pod("a"), "Normal", "Preempted", "Preempting", "x", related=pod("b"))
    cluster.emit_event(pod("a"), "Warning", "FailedScheduling", "Scheduling", "y")
    assert [(e.pod_key, e.related_key, e.related_uid) for e in cluster.events] == [
        ("default/a", "default/b", "uid-b"),
        ("default/a", "", ""),
    ]


def test_without_start_pods_a_bound_pod_is_as_our_binding_left_it(
    started: tuple[SimulatedCluster, Changes],
) -> None:
    """The default: no startTime, so the bound pod differs only in nodeName (not observed
    again by the scheduler)."""
    cluster, changes = started
    assert cluster.bind(pod("a"), "n1").ok
    assert current(cluster, "a") == pod("a", node_name="n1")
    assert [c.obj for c in changes] == [pod("a", node_name="n1")]
    assert cluster.add_pod(pod("c", node_name="n2")).start_time == ""
