"""A node update eventsched would not log is logged when kube-scheduler's cache would
give the node another image summary (cache.go UpdateNode: removeNodeImageStates, then
addNodeImageStates counts the holders anew, whatever changed in the Node)."""

from __future__ import annotations

from dataclasses import replace

from eventsched.audit import Selection, replay
from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import EventStore
from eventsched.model import Node, Pod
from eventsched.model.node import NodeImage
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.scheduler.helpers import node

MB = 1024 * 1024
IMAGE = (NodeImage(("big:latest",), 900 * MB),)


def with_image(n: Node) -> Node:
    return replace(n, images=IMAGE)


def image_pod(name: str) -> Pod:
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {
                "schedulerName": "default-scheduler",
                "containers": [{"name": "c", "image": "big"}],
            },
        }
    )


def observations(store: EventStore, name: str) -> int:
    return sum(1 for e in store.read(kinds=["node_observed"]) if e.node == name)


def test_an_identical_update_is_logged_when_it_refreshes_the_image_summary(
    store: EventStore,
) -> None:
    a, b = with_image(node("a")), with_image(node("b"))
    cluster = SimulatedCluster([a, node("c")], [])
    scheduler = Scheduler(
        store,
        cluster,
        [default_profile("default-scheduler")],
        in_tree_registry(),
        SchedulerOptions(initial_backoff=0.05, max_backoff=0.1),
    )
    scheduler.start()
    try:
        scheduler.run(until_idle=True)
        cluster.add_node(b)
        scheduler.run(until_idle=True)
        cluster.update_node(b)  # b counts both holders already: nothing to log
        scheduler.run(until_idle=True)
        table = scheduler.view.table
        assert [table.image_summaries[table.row_of(n) or 0].get("big:latest") for n in "ab"] == [
            (900 * MB, 1),
            (900 * MB, 2),
        ]
        assert (observations(store, "a"), observations(store, "b")) == (1, 1)
        cluster.add_pod(image_pod("first"))
        scheduler.run(until_idle=True)
        cluster.update_node(a)  # the same Node: kube-scheduler's UpdateNode refreshes a
        cluster.add_pod(image_pod("second"))
        scheduler.run(until_idle=True)
        assert table.image_summaries[table.row_of("a") or 0].get("big:latest") == (900 * MB, 2)
        assert (observations(store, "a"), observations(store, "b")) == (2, 1)
    finally:
        scheduler.stop()
    scored = [e for e in store.read(kinds=["scored"])]
    assert len(scored) == 2
    # first: a 900MB * 1/3 -> 28, b 900MB * 2/3 -> 59; second: both 59.
    image_scores = [
        {t["node"]: n for t, n in zip(e.data["top"], plugin["normalized"], strict=True)}
        for e in scored
        for plugin in e.data["plugins"]
        if plugin["name"] == "ImageLocality"
    ]
    assert [(s["a"], s["b"]) for s in image_scores] == [(28, 59), (59, 59)]
    report = replay(store, in_tree_registry(), Selection())
    assert report.mismatches == [] and report.reproduced == report.attempts == 2
