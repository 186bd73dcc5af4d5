"""Extenders in the cycle at v1.34 and v1.37 (test_outgoing_extenders.py pins v1.28):
an extender's rejections name "Extender" among the pod's unschedulable plugins from
v1.34, and at v1.37 the nodes an extender scored break a tie by a `Randomizer` drawn
from the attempt's seed (kube-scheduler: `rand.Int()`), where nodes no extender scored
break it by the heap's order alone."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from eventsched.config.file import parse_config
from eventsched.events import EventStore
from eventsched.framework import CycleState, Features, Framework, Handle, ListSink, schedule_pod
from eventsched.model import NodeTable
from eventsched.plugins import full_registry
from tests.scheduler.test_outgoing_extenders import (
    assert_replays_without_calling,
    extender,
    failed_message,
    gpu_node,
    keep_all_but,
    pending,
    placed,
    schedule,
)


def config(features: Features, **entry: Any) -> Any:
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "eventsched"}],
        "extenders": [entry],
    }
    return parse_config(doc, "test", full_registry(), features)


@pytest.mark.parametrize("version", ["1.28", "1.34", "1.37"])
def test_an_extenders_rejections_name_the_extender_from_v134(
    store: EventStore, version: str
) -> None:
    # from schedule_one_test.go TestSchedulerSchedulePod: "test with extender which filters
    # out some Nodes" (UnschedulablePlugins gains framework.ExtenderName, kubernetes#122019)
    with extender({"filter": keep_all_but("node-a", "node-b", "node-c")}) as ext:
        loaded = config(
            Features(version=version), urlPrefix=ext.url, filterVerb="filter", nodeCacheCapable=True
        )
        cluster = schedule(store, loaded, [pending("web")])
        assert placed(cluster, "web") == ""
        dot = "." if version == "1.28" else ""
        assert failed_message(cluster, "web") == (
            "0/3 nodes are available: 3 no license here. preemption: 0/3 nodes are available: "
            f"3 No preemption victims found for incoming pod.{dot}"
        )
        failures = [e for e in store.read(kinds=["unschedulable"]) if e.name == "web"]
        want = [] if version == "1.28" else ["Extender"]
        assert failures[0].data["plugins"] == want
        assert_replays_without_calling(store, ext)


def zero_scores(body: dict[str, Any]) -> tuple[int, Any]:
    names = body["NodeNames"] or [n["metadata"]["name"] for n in body["Nodes"]["items"]]
    return 200, [{"Host": n, "Score": 0} for n in names]


def picks(fw: Framework, table: NodeTable) -> set[str]:
    return {
        schedule_pod(fw, CycleState("a", seed), pending("web"), table, 0, ListSink()).node
        for seed in range(24)
    }


def test_nodes_an_extender_scored_break_a_tie_by_the_seed_at_v137() -> None:
    """Three identical nodes tie. Without extenders v1.37 always takes the first scored
    (the heap's top); with an extender that scored them (all 0), the seed decides."""
    table = NodeTable([gpu_node(f"node-{c}") for c in "abc"])
    v137 = Features(version="1.37")
    plain = replace(config(v137, urlPrefix="http://127.0.0.1:1", filterVerb="f").profiles[0])
    plain = replace(plain, extenders=())
    assert picks(Framework(plain, full_registry(), Handle(table)), table) == {"node-a"}
    with extender({"prioritize": zero_scores}) as ext:
        loaded = config(v137, urlPrefix=ext.url, prioritizeVerb="prioritize", weight=1)
        fw = Framework(loaded.profiles[0], full_registry(), Handle(table))
        assert len(picks(fw, table)) > 1


def test_a_tie_at_v137_replays_without_the_extender(store: EventStore) -> None:
    with extender({"prioritize": zero_scores}) as ext:
        loaded = config(
            Features(version="1.37"), urlPrefix=ext.url, prioritizeVerb="prioritize", weight=1
        )
        schedule(store, loaded, [pending("web")])
        (selected,) = [e for e in store.read(kinds=["selected"]) if e.name == "web"]
        assert selected.data["tieCount"] == 3 and selected.data["tieBreak"] == "heap"
        assert_replays_without_calling(store, ext)
