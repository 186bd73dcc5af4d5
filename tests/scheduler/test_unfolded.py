"""An attempt sees the first placements of events the log puts before it, folded or not."""

from __future__ import annotations

from dataclasses import replace

import yaml

from eventsched.audit.replay import Selection, replay
from eventsched.cluster import SimulatedCluster
from eventsched.config.file import parse_config
from eventsched.events import EventRecord, EventStore
from eventsched.model import Pod
from eventsched.model.changes import BindOutcome
from eventsched.plugins import full_registry
from eventsched.scheduler.unfolded import UnfoldedPlacements
from tests.scheduler.helpers import node, pod
from tests.scheduler.test_scheduler import run_scheduler

SHARED_IDENTITY = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: eventsched
    plugins:
      multiPoint:
        enabled:
          - name: StickyNode
            weight: 10
    pluginConfig:
      - name: StickyNode
        args:
          identity: label:app
          policy: strict
"""


class OthersArriveWhileTheFirstBinds(SimulatedCluster):
    """The first pod's Binding brings the others: they are decided after its `bound`
    joined the pending batch (the loop takes the inbox in order), before it is folded."""

    def __init__(self, first: Pod, others: list[Pod], nodes: int) -> None:
        super().__init__([node(f"n{i}", cpu="8") for i in range(nodes)], [first])
        self.others = others

    def bind(self, pod: Pod, node_name: str) -> BindOutcome:
        outcome = super().bind(pod, node_name)
        others, self.others = self.others, []
        for other in others:
            self.add_pod(other)
        return outcome


def test_pods_sharing_an_identity_follow_the_first_and_replay_agrees(store: EventStore) -> None:
    profile = parse_config(yaml.safe_load(SHARED_IDENTITY), "test", full_registry()).profiles[0]
    pods = [replace(pod(f"web-{i}", cpu="100m"), labels={"app": "web"}) for i in range(30)]
    cluster = OthersArriveWhileTheFirstBinds(pods[0], pods[1:], nodes=6)
    # One attempt a group: a binding cycle's `bound` reaches the log in the group of
    # the attempts decided after it, which must already see its first placement.
    run_scheduler(
        store, cluster, profiles=[profile], registry=full_registry(), group_commit_attempts=1
    )
    assert sum(1 for p in cluster.list_pods() if p.node_name) == 30
    followed = [e for e in store.read(kinds=["prefiltered"]) if e.data.get("nodeNames")]
    assert followed, "no attempt saw the identity's first placement"
    report = replay(store, full_registry(), Selection())
    assert report.mismatches == [] and report.reproduced == report.attempts == 30


def record(kind: str, node: str | None, **data: object) -> EventRecord:
    return EventRecord(kind, namespace="ns", name="p", node=node, data=data)


def test_overlay_follows_the_fold_until_its_batch_is_folded() -> None:
    folded: dict[str, str] = {"ns/old": "n0"}
    overlay = UnfoldedPlacements(folded.get)
    first = overlay.new_batch()
    overlay.note(record("bound", "n1", identity="app=web"))
    overlay.note(record("bound", "n2", identity="app=web"))  # the first one wins
    overlay.note(record("bound", "n3", identity="ns/old"))  # already placed: no change
    assert overlay.first_node("app=web") == "n1" and overlay.first_node("ns/old") == "n0"
    second = overlay.new_batch()
    overlay.note(record("maintenance", None, action="sticky_forget", identity="ns/old"))
    assert overlay.first_node("ns/old") is None
    folded["app=web"] = "n1"
    overlay.folded(first)
    assert overlay.first_node("app=web") == "n1" and overlay.first_node("ns/old") is None
    del folded["ns/old"]
    overlay.folded(second)
    assert overlay.first_node("ns/old") is None and overlay.first_node("app=web") == "n1"
