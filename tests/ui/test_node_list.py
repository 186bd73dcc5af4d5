"""`/nodes`: every node as the log last saw it, with its pods and their requests, on SQLite
and PostgreSQL, over real HTTP.

The log is a real scheduler's over a simulated cluster that changes under it: a bound pod
is deleted and a node removed while it runs, and another node is deleted while no
scheduler runs (the restarted one does not list it, and no `node_removed` says so). The
page's counts are checked against where the cluster itself holds each pod.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from eventsched.audit.numbers import amount
from eventsched.cli.db import prune
from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import EventStore, upgrade
from eventsched.model import Node
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from eventsched.ui.app import INSECURE_LOCAL, Settings
from tests.conftest import BACKENDS
from tests.scheduler.helpers import node, pod
from tests.ui.conftest import Log, Served, filled_log
from tests.waiting import wait_for

TAINT = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]


def labelled(name: str) -> Node:
    base = node(name)
    labels = {**base.labels, "topology.kubernetes.io/zone": "z1", "tier": "web"}
    return Node(name, base.allocatable, labels, base.taints, uid=f"uid-{name}")


@dataclass(frozen=True)
class Cluster:
    """Where the cluster holds each pod when the log ends: node -> pod names."""

    placed: dict[str, list[str]]


def fill(url: str, out: dict[str, Cluster]) -> None:
    upgrade(url)
    cluster = SimulatedCluster(
        [labelled("a"), node("b"), node("c"), node("gone-live", taints=TAINT)],
        [pod(f"p{i}", cpu="500m", memory="256Mi") for i in range(6)],
    )
    with EventStore.connect(url) as store:
        scheduler = _scheduler(store, cluster)
        scheduler.start()
        scheduler.run(until_idle=True)
        victim = next(p for p in cluster.list_pods() if p.node_name)
        cluster.delete_pod(victim)  # logged: pod_removed
        cluster.remove_node("gone-live")  # logged: node_removed
        scheduler.run(until_idle=True)
        scheduler.stop()
        cluster.add_node(node("gone-while-down", taints=TAINT))
        restarted = _scheduler(store, cluster)
        restarted.start()
        restarted.run(until_idle=True)
        restarted.stop()
        cluster.remove_node("gone-while-down")  # no scheduler sees it go
        cluster.add_pod(pod("late", cpu="1", memory="1Gi"))
        last = _scheduler(store, cluster)
        last.start()
        last.run(until_idle=True)
        last.stop()
    placed: dict[str, list[str]] = {}
    for p in cluster.list_pods():
        if p.node_name:
            placed.setdefault(p.node_name, []).append(p.name)
    out["cluster"] = Cluster(placed)


def _scheduler(store: EventStore, cluster: SimulatedCluster) -> Scheduler:
    return Scheduler(
        store,
        cluster,
        [default_profile()],
        in_tree_registry(),
        SchedulerOptions(initial_backoff=0.05, max_backoff=0.1),
    )


@pytest.fixture(scope="module", params=BACKENDS)
def nodes_log(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Log, Cluster]]:
    made: dict[str, Cluster] = {}
    with filled_log(request, tmp_path_factory, lambda url: fill(url, made)) as log:
        yield log, made["cluster"]


def counted_list(served: Served) -> str:
    """The node list once the page's fold has reached the log's head (its sentence says)."""
    return wait_for(
        "the page's fold to reach the log's head",
        lambda: (body := served.request("/nodes").body) and "as of the log's head" in body and body,
        timeout=60,
    )


def rows(page: str) -> dict[str, list[str]]:
    """The node table's cells, by node name."""
    body = page.split('id="nodes"', 1)[1].split("</table>", 1)[0]
    found = {}
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)[1:]:
        cells = [
            " ".join(html.unescape(re.sub(r"<[^>]+>", " ", c)).split())
            for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        ]
        found[cells[0].split()[0]] = cells
    return found


def test_every_node_with_its_pods_as_the_log_last_saw_it(
    nodes_log: tuple[Log, Cluster],
) -> None:
    log, cluster = nodes_log
    with Served(Settings(log.reader_url, chain_interval=0.5, access=INSECURE_LOCAL)) as served:
        page = counted_list(served)
        table = rows(page)
        assert sorted(table) == ["a", "b", "c", "gone-live", "gone-while-down"]
        for name in ("a", "b", "c"):
            pods = cluster.placed.get(name, [])
            cpu = 500 * len([p for p in pods if p != "late"]) + 1000 * ("late" in pods)
            memory = (256 * len([p for p in pods if p != "late"]) + 1024 * ("late" in pods)) << 20
            # node, pods, cpu, memory, taints, labels, last observed
            assert table[name][1:5] == [
                f"{len(pods)} / 110",
                f"{amount('cpu', cpu)} / 4",
                f"{amount('memory', memory)} / 8Gi",
                "0",
            ], (name, table[name])
        assert sum(len(p) for p in cluster.placed.values()) == 6  # 6 + late - the deleted one
        assert table["a"][5] == "tier=web, topology.kubernetes.io/zone=z1"
        for name in ("gone-live", "gone-while-down"):
            assert table[name][0] == f"{name} (removed)"
            assert table[name][1:6] == ["", "", "", "", ""]
        # Each name links to the node's own page.
        assert 'href="/nodes/a"' in page
        assert served.request("/nodes/a").status == 200


def test_the_navigation_links_the_node_list(nodes_log: tuple[Log, Cluster]) -> None:
    log, _ = nodes_log
    with Served(Settings(log.reader_url, chain_interval=0.5, access=INSECURE_LOCAL)) as served:
        assert '<a href="/nodes"' in served.request("/").body
        assert '<a href="/nodes" class="here">' in served.request("/nodes").body


def test_a_pruned_logs_nodes_come_from_its_base(db_url: str) -> None:
    """Nodes observed only before a prune's cut are in the log's base, not in `events`:
    listed from the fold, which starts from that base."""
    cluster = SimulatedCluster([node("a"), node("b")], [pod(f"p{i}") for i in range(4)])
    now = datetime.now(UTC)
    for when in (now - timedelta(days=3), now):  # the restart logs no unchanged node again
        with EventStore.connect(db_url) as store:
            store.clock = lambda when=when: when
            scheduler = _scheduler(store, cluster)
            scheduler.start()
            scheduler.run(until_idle=True)
            scheduler.stop()
        cluster.add_pod(pod(f"later-{when.day}"))
    with EventStore.connect(db_url) as store:
        assert prune(store, now - timedelta(days=2)) is not None
        assert not list(store.read(kinds=["node_observed"]))
    placed = {n: sum(p.node_name == n for p in cluster.list_pods()) for n in ("a", "b")}
    with Served(Settings(db_url, chain_interval=0.5, access=INSECURE_LOCAL)) as served:
        page = counted_list(served)
    table = rows(page)
    assert sorted(table) == ["a", "b"]
    for name in ("a", "b"):
        assert table[name][1] == f"{placed[name]} / 110"
        assert table[name][6] == "before the log's base"
