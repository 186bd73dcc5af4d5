"""`eventsched bench --numa`: NodeResourceTopologies on every node, Guaranteed pods, and
NodeResourceTopologyMatch rejecting nodes that fit the pod but none of whose NUMA zones do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eventsched.cli.main import main
from eventsched.events import EventStore

NRT = "NodeResourceTopologyMatch"


def bench(capsys: pytest.CaptureFixture[str], db_url: str, *extra: str) -> dict[str, Any]:
    capsys.readouterr()  # what fixtures printed (structlog's default goes to stdout)
    code = main(
        ["bench", "--nodes", "40", "--pods", "80", "--seed", "7", "--json", *extra, "--db", db_url]
    )
    assert code == 0
    return dict(json.loads(capsys.readouterr().out))


def logged(db_url: str, kind: str) -> list[dict[str, Any]]:
    """The data of each `kind` event, with the pod uid the event names as `"_uid"`."""
    with EventStore.connect(db_url) as store:
        return [{**e.data, "_uid": e.uid} for e in store.read(kinds=[kind])]


def test_bench_numa_rejects_nodes_whose_zones_are_too_small_for_a_container_that_fits_the_node(
    capsys: pytest.CaptureFixture[str], db_url: str
) -> None:
    result = bench(capsys, db_url, "--numa", "--replay")
    assert result["bound"] == 80 and result["unschedulable"] == 0
    nodes = {n["name"]: n for n in logged(db_url, "node_observed")}
    topologies = {
        o["name"]: o
        for o in logged(db_url, "object_observed")
        if o.get("kind") == "NodeResourceTopology"
    }
    # Every node has two zones under single-numa-node, container scope; a zone has half the
    # node's allocatable memory and half its allocatable CPU rounded down to whole CPUs.
    assert topologies.keys() == nodes.keys()
    for name, topology in topologies.items():
        assert {a["name"]: a["value"] for a in topology["attributes"]} == {
            "topologyManagerPolicy": "single-numa-node",
            "topologyManagerScope": "container",
        }
        allocatable = nodes[name]["allocatable"]
        assert [z["name"] for z in topology["zones"]] == ["node-0", "node-1"]
        for zone in topology["zones"]:
            available = {r["name"]: r["available"] for r in zone["resources"]}
            assert available["cpu"] == allocatable["cpu"] // 2 // 1000 * 1000
            assert available["memory"] == allocatable["memory"] // 2
    # Every pod is Guaranteed with whole CPUs, its one container asking for what the pod asks.
    pods = {p["uid"]: p for p in logged(db_url, "pod_observed")}
    assert len(pods) == 80
    for pod in pods.values():
        assert pod["qos"] == "Guaranteed"
        assert pod["requests"]["cpu"] % 1000 == 0 and pod["requests"]["cpu"] >= 1000
        assert [c["requests"] for c in pod["containers"]] == [pod["requests"]]
    # NodeResourceTopologyMatch rejected nodes for some pods: nodes that every filter before it
    # (NodeResourcesFit among them) passed, and that have the CPUs, but not in one zone.
    rejected = 0
    for filtered in logged(db_url, "filtered"):
        for rejection in filtered["rejections"]:
            if rejection["plugin"] != NRT:
                continue
            pod = pods[filtered["_uid"]]
            cpu = pod["requests"]["cpu"]
            assert rejection["reasons"] == ["cannot align container"]
            for name in rejection["nodes"]:
                rejected += 1
                assert nodes[name]["allocatable"]["cpu"] >= cpu
                zones = topologies[name]["zones"]
                assert all(
                    r["available"] < cpu
                    for z in zones
                    for r in z["resources"]
                    if r["name"] == "cpu"
                )
                # Exactly one rejection per node: the earlier filters passed it.
                assert sum(name in r["nodes"] for r in filtered["rejections"]) == 1
            assert rejection["detail"] == [
                f"container app: cpu {cpu // 1000} fits no NUMA zone "
                + "(node-0 has {0}, node-1 has {0})".format(
                    zones[0]["resources"][0]["available"] // 1000
                )
            ]
    assert rejected > 0
    # The log holds all it takes to decide every attempt again.
    assert result["replay"]["attempts"] == result["replay"]["reproduced"] > 0


def test_bench_without_numa_logs_no_topology_and_no_guaranteed_pods(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path}/plain.db"
    assert bench(capsys, url)["bound"] == 80
    assert not any(o.get("kind") == "NodeResourceTopology" for o in logged(url, "object_observed"))
    assert not any(p.get("qos") == "Guaranteed" for p in logged(url, "pod_observed"))
    assert not any(r["plugin"] == NRT for f in logged(url, "filtered") for r in f["rejections"])


def test_bench_numa_with_more_zones_and_not_with_quotas(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path}/four.db"
    result = bench(capsys, url, "--numa", "4")
    topologies = [
        o for o in logged(url, "object_observed") if o.get("kind") == "NodeResourceTopology"
    ]
    assert topologies and all(len(t["zones"]) == 4 for t in topologies)
    # Four zones of a 4-CPU node have no whole CPU each: some pods fit fewer nodes, or none.
    assert result["bound"] + result["unschedulable"] == 80
    capsys.readouterr()
    code = main(["bench", "--nodes", "4", "--pods", "4", "--numa", "--quotas", "2"])
    assert code == 2
    assert "--quotas and --numa" in capsys.readouterr().err
