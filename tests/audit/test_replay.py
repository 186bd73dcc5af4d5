"""Replay decides every recorded attempt again from the log alone, and says what does not reproduce."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa

from eventsched.audit import Selection, replay
from eventsched.events import EventStore
from eventsched.plugins import full_registry
from tests.conftest import Done
from tests.extenderserver.helpers import (
    node_manifest,
    pod_manifest,
    profile_config,
    running_extender,
)

ROOT = Path(__file__).resolve().parents[2]
PROFILES = [
    "importancesort",
    "nodelabel",
    "pinnedhost",
    "stickynode",
    "randomscore",
    "coscheduling",
    "networktraffic",
    "noderesourcesallocatable",
    "capacityscheduling",
    "noderesourcetopology",
]


@contextmanager
def editing_events(db_url: str) -> Iterator[sa.Connection]:
    """A transaction in which the append-only triggers do not stop UPDATE (as an attacker's)."""
    engine = sa.create_engine(db_url)
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(sa.text("ALTER TABLE events DISABLE TRIGGER USER"))
            else:
                conn.execute(sa.text("DROP TRIGGER events_no_update"))
            yield conn
    finally:
        engine.dispose()


def rewrite(conn: sa.Connection, position: int, data: dict) -> None:
    conn.execute(
        sa.text("UPDATE events SET data = :d WHERE position = :p"),
        {"d": json.dumps(data), "p": position},
    )


def report(cli: Callable[..., Done], *extra: str) -> tuple[int, dict]:
    done = cli("replay", "--json", *extra)
    return done.code, json.loads(done.out)


def test_a_generated_run_with_ties_and_restarts_reproduces_entirely(
    cli: Callable[..., Done],
) -> None:
    # Identical generated nodes tie often: the recorded seed must break each tie the same way.
    assert cli("simulate", "--nodes", "60", "--pods", "300", "--seed", "3").code == 0
    assert cli("simulate", "--nodes", "60", "--pods", "300", "--seed", "4").code == 0
    code, data = report(cli)
    assert code == 0, data["mismatches"][:3]
    assert data["attempts"] >= 600 and data["reproduced"] == data["attempts"]
    assert data["mismatches"] == [] and data["skipped"] == []
    assert data["chain"]["ok"] is True


@pytest.mark.parametrize("plugin", PROFILES)
def test_each_of_our_plugins_reproduces(cli: Callable[..., Done], plugin: str) -> None:
    # NetworkTraffic's example points at a Prometheus that is not running here:
    # the failed reads are recorded and replay skips the plugin the same way.
    config = ROOT / "examples" / "profiles" / f"{plugin}.yaml"
    assert cli("simulate", "--config", str(config), str(ROOT / "examples" / plugin)).code == 0
    code, data = report(cli)
    assert code == 0, data["mismatches"]
    assert data["attempts"] > 0 and data["reproduced"] == data["attempts"]


def test_pod_and_position_selection(cli: Callable[..., Done], store: EventStore) -> None:
    assert cli("simulate", str(ROOT / "examples" / "cluster")).code == 0
    code, data = report(cli, "--pod", "default/too-big")
    assert code == 0 and data["attempts"] == 1
    last = store.last_position()
    code, data = report(cli, "--since", str(last))
    assert code == 0 and data["attempts"] == 0 and data["lastPosition"] == last


def test_an_edited_observation_breaks_the_chain_and_the_decision(
    cli: Callable[..., Done], db_url: str, store: EventStore
) -> None:
    assert cli("simulate", str(ROOT / "examples" / "cluster")).code == 0
    # An attacker who owns the tables makes worker-3 look four times bigger.
    with editing_events(db_url) as conn:
        row = conn.execute(
            sa.text(
                "SELECT position, data FROM events WHERE kind = 'node_observed' AND node = 'worker-3'"
            )
        ).one()
        data = row.data if isinstance(row.data, dict) else json.loads(row.data)
        data["allocatable"]["cpu"] = data["allocatable"]["cpu"] * 4
        rewrite(conn, row.position, data)
    code, result = report(cli)
    assert code == 1
    assert result["chain"]["ok"] is False and result["chain"]["firstBrokenBatch"] is not None
    assert result["mismatches"], "a bigger worker-3 must change some placement"
    first = result["mismatches"][0]
    assert first["replayed"] == "worker-3" or first["kind"] in ("filtered", "scored")
    text = cli("replay")
    assert text.code == 1
    assert "hash chain: BROKEN at batch" in text.out and "DIFFERS" in text.out


def test_an_extender_call_that_differs_names_the_field_or_the_plugin_and_node(
    cli: Callable[..., Done], db_url: str, store: EventStore
) -> None:
    pod = pod_manifest("web")
    nodes = [node_manifest("node-a"), node_manifest("node-b", cpu="8")]
    with running_extender(store, profile_config(), nodes, [pod]) as ext:
        ext.client.prioritize(pod, ["node-a", "node-b"])
        ext.client.prioritize(pod, ["node-a", "node-b"])
    with editing_events(db_url) as conn:
        rows = conn.execute(
            sa.text("SELECT position, data FROM events WHERE kind = 'scored' ORDER BY position")
        ).all()
        first, second = (r.data if isinstance(r.data, dict) else json.loads(r.data) for r in rows)
        # The first call's summary, then a score of the second, as if recorded otherwise.
        mean = first["summary"]["mean"]
        first["summary"]["mean"] = mean + 1
        rewrite(conn, rows[0].position, first)
        fit = next(p for p in second["plugins"] if p["name"] == "NodeResourcesFit")
        node, raw = second["top"][0]["node"], fit["raw"][0]
        fit["raw"][0] = raw + 1
        rewrite(conn, rows[1].position, second)
    code, result = report(cli)
    assert code == 1
    by_summary, by_score = result["mismatches"]
    assert by_summary["kind"] == "scored" and by_summary["plugin"] == ""
    assert by_summary["detail"] == f"summary.mean: recorded {mean + 1}, replayed {mean}"
    assert by_score["kind"] == "scored" and by_score["plugin"] == "NodeResourcesFit"
    assert by_score["detail"] == f"node {node}: recorded {raw + 1} raw, replayed {raw}"
    text = cli("replay").out
    assert f"first difference at scored: summary.mean: recorded {mean + 1}, replayed" in text


def test_replay_writes_nothing(cli: Callable[..., Done], store: EventStore) -> None:
    assert cli("simulate", str(ROOT / "examples" / "cluster")).code == 0
    before = store.last_position()
    replay(store, full_registry(), Selection())
    assert store.last_position() == before


def test_explain_full_recomputes_every_nodes_scores(
    cli: Callable[..., Done], store: EventStore
) -> None:
    assert cli("simulate", "--nodes", "25", "--pods", "40", "--seed", "1").code == 0
    bound = next(iter(store.read(kinds=["bound"])))
    pod = f"{bound.namespace}/{bound.name}"
    kept = json.loads(cli("explain", pod, "--json").out)["attempts"][-1]
    full = json.loads(cli("explain", pod, "--json", "--full").out)["attempts"][-1]
    assert len(kept["top"]) == 10 and kept["recomputed"] == ""
    assert len(full["top"]) == full["scored_nodes"] > 10
    assert "recomputed by replay" in full["recomputed"]
    # The recomputed table agrees with what the log kept for the top 10.
    by_node = {n["node"]: n for n in full["top"]}
    for node in kept["top"]:
        assert by_node[node["node"]] == node
    text = cli("explain", pod, "--full").out
    assert (
        f"all {full['scored_nodes']} nodes recomputed by replay (the log keeps the top 10)" in text
    )


def test_counterfactual_with_the_same_configuration_changes_nothing(
    cli: Callable[..., Done], store: EventStore, tmp_path: Path
) -> None:
    assert cli("simulate", "--nodes", "25", "--pods", "60", "--seed", "2").code == 0
    same = tmp_path / "same.yaml"
    same.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )
    before = store.last_position()
    done = cli("replay", "--config", str(same), "--json")
    assert done.code == 0
    data = json.loads(done.out)
    assert data["moved"] == data["becameUnschedulable"] == data["becameSchedulable"] == []
    assert all(v["recorded"] == v["counterfactual"] for v in data["load"].values())
    assert store.last_position() == before


def test_counterfactual_bin_packing_moves_pods_onto_fewer_nodes(
    cli: Callable[..., Done], tmp_path: Path
) -> None:
    assert cli("simulate", "--nodes", "25", "--pods", "60", "--seed", "2").code == 0
    pack = tmp_path / "pack.yaml"
    pack.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n"
        "    args: {scoringStrategy: {type: MostAllocated}}\n"
    )
    data = json.loads(cli("replay", "--config", str(pack), "--json").out)
    assert data["moved"]
    used_before = sum(1 for v in data["load"].values() if v["recorded"])
    used_after = sum(1 for v in data["load"].values() if v["counterfactual"])
    assert used_after < used_before
    text = cli("replay", "--config", str(pack)).out
    assert f"{len(data['moved'])} would land elsewhere" in text


def test_counterfactual_without_the_profile_says_so(
    cli: Callable[..., Done], tmp_path: Path
) -> None:
    assert cli("simulate", str(ROOT / "examples" / "cluster")).code == 0
    other = tmp_path / "other.yaml"
    other.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: someone-else\n"
    )
    data = json.loads(cli("replay", "--config", str(other), "--json").out)
    assert data["skipped"]
    assert "no profile named 'eventsched'" in data["skipped"][0]["reason"]


def as_written_before_0004(kind: str, data: dict) -> dict:
    """A decision's data as eventsched wrote it before the compact shapes (migration 0004)."""
    if kind == "scored":
        weights = {p["name"]: p["weight"] for p in data["plugins"]}
        cells = [
            {
                "node": top["node"],
                "plugin": p["name"],
                "raw": p["raw"][i],
                "normalized": p["normalized"][i],
                "weighted": p["normalized"][i] * weights[p["name"]],
            }
            for i, top in enumerate(data["top"])
            for p in data["plugins"]
        ]
        plugins = [{"name": p["name"], "weight": p["weight"]} for p in data["plugins"]]
        return {**data, "plugins": plugins, "scores": cells}
    if kind == "selected":
        return {"ties": [], **data}
    if kind == "prefiltered":
        return {
            "nodeNames": None,
            "status": {"code": "Success", "reasons": []},
            **data,
        }
    return data


def test_a_log_written_before_the_compact_shapes_still_reproduces(
    cli: Callable[..., Done], db_url: str, store: EventStore
) -> None:
    assert cli("simulate", "--nodes", "30", "--pods", "60", "--seed", "5").code == 0
    with editing_events(db_url) as conn:
        rows = conn.execute(
            sa.text(
                "SELECT position, kind, data FROM events WHERE kind IN ('scored', 'prefiltered', 'selected')"
            )
        ).all()
        for row in rows:
            data = row.data if isinstance(row.data, dict) else json.loads(row.data)
            rewrite(conn, row.position, as_written_before_0004(row.kind, data))
        scored = conn.execute(
            sa.text("SELECT count(*) FROM plugin_scores WHERE weighted IS NOT NULL")
        ).scalar_one()
    assert rows and scored > 0
    code, result = report(cli)
    # The chain says the rows were edited (exit 1); every decision still compares equal.
    assert code == 1 and result["chain"]["ok"] is False
    assert result["mismatches"] == [] and result["reproduced"] == result["attempts"] == 60


def test_counterfactual_text_tells_pods_of_one_name_apart_and_aligns_its_rows(
    cli: Callable[..., Done], tmp_path: Path
) -> None:
    # Two runs of the same manifests: each pod name belongs to two pods (two uids).
    for _ in range(2):
        assert cli("simulate", str(ROOT / "examples" / "cluster")).code == 0
    tolerant = tmp_path / "tolerant.yaml"
    tolerant.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: eventsched\n  plugins:\n    filter:\n"
        "      disabled: [{name: TaintToleration}, {name: NodeResourcesFit}]\n"
    )
    text = cli("replay", "--config", str(tolerant)).out
    header, *rows = text.splitlines()
    assert "20 attempts, 20 pods (10 names: a name used again is another pod" in header
    labelled = [
        r for r in rows if r.split() and r.split()[0] in ("moved", "unschedulable", "schedulable")
    ]
    assert labelled and {r.split()[0] for r in labelled} >= {"moved", "schedulable"}
    # Every pod name starts in the same column, whatever the label.
    assert len({len(r) - len(r[2:].split(maxsplit=1)[1]) for r in labelled}) == 1
    assert all("(uid " in r for r in labelled)
