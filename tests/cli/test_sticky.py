"""StickyNode end to end: real processes, a real database, the example profile and cluster.

The restart test is the issue's: schedule, stop the process, re-create the
pods (a manifest load gives them new uids), start a new process on a cluster
that has changed so that they would go elsewhere: they land on their first
nodes, because the first placement comes from the log.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_cli import ROOT, eventsched

PROFILE = str(ROOT / "examples" / "profiles" / "stickynode.yaml")
CLUSTER = str(ROOT / "examples" / "stickynode" / "cluster.yaml")
MORE_NODES = str(ROOT / "examples" / "stickynode" / "more-nodes.yaml")
DB0, DB1 = "shop/StatefulSet/db/0", "shop/StatefulSet/db/1"


def simulate(db: str, *paths: str) -> str:
    result = eventsched("simulate", "--config", PROFILE, *paths, db=db)
    assert result.returncode == 0, result.stderr
    return result.stdout


def placements(db: str) -> dict[str, dict[str, Any]]:
    result = eventsched("sticky", "list", "--json", db=db)
    assert result.returncode == 0, result.stderr
    return {row["identity"]: row for row in json.loads(result.stdout)}


def explain(db: str, pod: str) -> dict[str, Any]:
    result = eventsched("explain", pod, "--json", db=db)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


@pytest.mark.slow
def test_without_history_the_grown_cluster_sends_the_pods_elsewhere(tmp_path: Path) -> None:
    """The control for the restart test: the change really would move the pods."""
    control = f"sqlite:///{tmp_path / 'control.db'}"
    assert eventsched("db", "upgrade", db=control).returncode == 0
    simulate(control, CLUSTER, MORE_NODES)
    assert {explain(control, f"shop/db-{i}")["final_node"] for i in (0, 1)} == {"big-1", "big-2"}


@pytest.mark.slow
def test_restarted_scheduler_returns_recreated_pods_to_their_first_nodes(db_url: str) -> None:
    assert "2 of 2 pending pods bound" in simulate(db_url, CLUSTER)
    first = placements(db_url)
    assert set(first) == {DB0, DB1}
    assert {first[DB0]["node"], first[DB1]["node"]} == {"worker-1", "worker-2"}

    # A new process, the pods re-created (new uids), the cluster grown.
    out = eventsched("simulate", "--config", PROFILE, CLUSTER, MORE_NODES, db=db_url)
    assert out.returncode == 0, out.stderr
    assert "2 of 2 pending pods bound, 0 unschedulable, on 4 nodes" in out.stdout
    assert "2 first placements" in out.stderr  # rebuilt from the log
    for identity, name in ((DB0, "shop/db-0"), (DB1, "shop/db-1")):
        explained = explain(db_url, name)
        before, after = explained["attempts"]
        assert before["pod_uid"] != after["pod_uid"]
        node = first[identity]["node"]
        assert explained["final_node"] == after["selected"] == node
        assert after["prefilter"]["nodeNames"] == [node]
        assert after["absent"]["reasons"] == ["node(s) didn't satisfy plugin(s) [StickyNode]"]
        bound = [s for s in after["steps"] if s["kind"] == "bound"]
        assert bound and bound[0]["identity"] == identity
    # The first placements are the first ones still, not the second bindings.
    assert placements(db_url) == first


@pytest.mark.slow
def test_sticky_list_and_forget(db_url: str) -> None:
    empty = eventsched("sticky", "list", db=db_url)
    assert empty.returncode == 0 and empty.stdout == "no first placements in the event log\n"

    simulate(db_url, CLUSTER)
    listed = eventsched("sticky", "list", db=db_url)
    assert listed.returncode == 0, listed.stderr
    header, *rows = listed.stdout.splitlines()
    assert header.split() == ["IDENTITY", "NODE", "SINCE", "POSITION", "POD", "UID"]
    found = placements(db_url)
    for row, identity in zip(rows, (DB0, DB1), strict=True):
        p = found[identity]
        assert row.split() == [
            identity,
            p["node"],
            p["since"],
            str(p["position"]),
            f"{p['namespace']}/{p['name']}",
            p["uid"],
        ]
        assert p["since"] and p["since"][:4].isdigit()

    forgot = eventsched("sticky", "forget", DB0, db=db_url)
    assert forgot.returncode == 0, forgot.stderr
    assert forgot.stdout.startswith(
        f"forgot {DB0}: first placement on {found[DB0]['node']} "
        f"(log position {found[DB0]['position']}); recorded at position "
    )
    assert set(placements(db_url)) == {DB1}

    again = eventsched("sticky", "forget", DB0, db=db_url)
    assert again.returncode == 2
    assert again.stdout == ""
    assert again.stderr == (
        f"eventsched: error: identity '{DB0}' has no first placement in the event log; "
        "`eventsched sticky list` shows those that do\n"
    )

    # The forget is in the log: the next run places db-0 afresh (a big node now wins)
    # and records that as its new first placement; db-1 keeps its first node.
    simulate(db_url, CLUSTER, MORE_NODES)
    now = placements(db_url)
    assert now[DB0]["node"] in ("big-1", "big-2")
    assert now[DB1] == found[DB1]
    assert explain(db_url, "shop/db-0")["final_node"] == now[DB0]["node"]


def test_sticky_needs_an_action() -> None:
    result = eventsched("sticky")
    assert result.returncode == 2
    assert "eventsched sticky: error: the following arguments are required: ACTION" in (
        result.stderr
    )
