"""RandomScore: a uniform 0..100 score per node from (attempt seed, node name)."""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
import pytest
import yaml

from eventsched.audit import explain_pod
from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.config.file import ConfigError, load_config, parse_config
from eventsched.events import EventStore
from eventsched.framework import CycleState, Handle, PluginArgsError, PluginRef, Profile
from eventsched.model import NodeTable
from eventsched.plugins import full_registry
from eventsched.plugins.randomscore import name_hash, scores_for
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.cli.test_cli import ROOT, eventsched
from tests.plugins.conftest import make_node, make_pod


def plugin(name: str, args: dict[str, Any] | None = None, table: NodeTable | None = None) -> Any:
    """Our own plugins are in the full registry (the in-tree one has upstream's only)."""
    return full_registry().factory(name)(args or {}, Handle(table))


def table_of(names: list[str]) -> NodeTable:
    return NodeTable([make_node(n) for n in names])


def scores(names: list[str], seed: int, rows: list[int] | None = None) -> dict[str, int]:
    """Node name -> score, running the plugin over `rows` (default: all) of a fresh table."""
    table = table_of(names)
    p = plugin("RandomScore", table=table)
    picked = np.arange(len(table)) if rows is None else np.array(rows, dtype=np.intp)
    out = p.score_batch(CycleState("a", seed), make_pod(), table, picked)
    assert out.dtype == np.int64 and len(out) == len(picked)
    return {table.names[r]: int(s) for r, s in zip(picked, out, strict=True)}


NAMES = [f"node-{i}" for i in range(200)]


def test_same_seed_same_scores_across_instances_and_tables() -> None:
    assert scores(NAMES, 42) == scores(NAMES, 42)


def test_different_seeds_give_different_scores() -> None:
    a, b = scores(NAMES, 1), scores(NAMES, 2)
    differing = sum(a[n] != b[n] for n in NAMES)
    assert differing > 180  # with 101 values, about 1 in 101 nodes may match by chance


def test_a_nodes_score_does_not_depend_on_row_order_or_on_the_other_nodes() -> None:
    seed = 123456789
    forward = scores(NAMES, seed)
    backward = scores(list(reversed(NAMES)), seed)
    subset = scores(NAMES, seed, rows=[150, 3, 77])
    assert forward == backward
    assert subset == {n: forward[n] for n in ("node-150", "node-3", "node-77")}


def test_scores_cover_0_to_100_roughly_uniformly() -> None:
    names = [f"n{i}" for i in range(20_000)]
    values = np.array(list(scores(names, 7).values()))
    assert values.min() == 0 and values.max() == 100
    counts = np.bincount(values, minlength=101)
    assert len(counts) == 101
    expected = len(values) / 101  # ~198 per value
    assert counts.min() > expected * 0.6 and counts.max() < expected * 1.4


def test_large_and_negative_seeds_are_accepted() -> None:
    for seed in (0, 2**63 - 1, -1, 2**70):
        values = list(scores(NAMES[:20], seed).values())
        assert all(0 <= v <= 100 for v in values)


def test_score_is_a_pure_function_of_seed_and_name() -> None:
    hashes = np.array([name_hash("worker-1"), name_hash("worker-2")], dtype=np.uint64)
    assert scores(["worker-1", "worker-2"], 99) == {
        "worker-1": int(scores_for(99, hashes)[0]),
        "worker-2": int(scores_for(99, hashes)[1]),
    }


def test_pinned_values_so_old_logs_replay_the_same() -> None:
    """A change to the hash or the mixing would silently change every replayed decision."""
    assert name_hash("worker-1") == 13498462946985055320
    assert scores(["worker-1", "worker-2", "worker-3"], 12345) == {
        "worker-1": 44,
        "worker-2": 38,
        "worker-3": 51,
    }


def test_follows_node_changes_in_the_same_table() -> None:
    table = table_of(["x", "y"])
    p = plugin("RandomScore", table=table)
    state = CycleState("a", 5)
    before = p.score_batch(state, make_pod(), table, np.arange(2))
    table.remove_node("x")
    table.upsert_node(make_node("z"))
    after = p.score_batch(state, make_pod(), table, np.arange(2))
    assert int(after[0]) == int(before[1])  # y kept its score at its new row
    assert int(after[1]) == scores(["z"], 5)["z"]


def test_fast_at_5000_nodes() -> None:
    names = [f"node-{i:05d}" for i in range(5000)]
    table = table_of(names)
    p = plugin("RandomScore", table=table)
    rows = np.arange(len(table))
    p.score_batch(CycleState("a", 0), make_pod(), table, rows)  # hashes names once
    started = time.perf_counter()
    for seed in range(100):
        p.score_batch(CycleState("a", seed), make_pod(), table, rows)
    per_attempt = (time.perf_counter() - started) / 100
    assert per_attempt < 0.002, f"{per_attempt * 1000:.2f} ms per attempt at 5000 nodes"


@pytest.mark.parametrize("args", [{"seed": 1}, {"max": 10}])
def test_takes_no_args(args: dict[str, Any]) -> None:
    with pytest.raises(PluginArgsError) as err:
        plugin("RandomScore", args)
    assert err.value.field == next(iter(args))
    assert err.value.problem == "unknown field; RandomScore takes no args"


# -- end to end: the scheduler with RandomScore as the only scorer -------------------


def random_profile() -> Profile:
    base = default_profile()
    plugins = dict(base.plugins)
    plugins["preScore"] = ()
    plugins["score"] = (PluginRef("RandomScore", 1),)
    return Profile(base.scheduler_name, plugins, {})


def test_explain_shows_random_scores_reproducible_from_the_recorded_seed(
    store: EventStore,
) -> None:
    nodes = [make_node(f"worker-{i}") for i in range(5)]
    pods = [make_pod(f"web-{i}", {"cpu": "100m"}, schedulerName="eventsched") for i in range(4)]
    cluster = SimulatedCluster(nodes, pods)
    scheduler = Scheduler(
        store,
        cluster,
        [random_profile()],
        full_registry(),
        SchedulerOptions(initial_backoff=0.05, max_backoff=0.1, group_commit_wait=0.0),
    )
    scheduler.start()
    scheduler.run(until_idle=True)
    scheduler.stop()

    names = [n.name for n in nodes]
    hashes = np.array([name_hash(n) for n in names], dtype=np.uint64)
    seeds = {e.attempt: e.data["seed"] for e in store.read(kinds=["attempt_started"])}
    for p in pods:
        explained = explain_pod(store, "default", p.name)
        (attempt,) = explained.attempts
        assert [s["name"] for s in attempt.score_plugins] == ["RandomScore"]
        drawn = scores_for(seeds[attempt.attempt], hashes)
        expected = {name: int(s) for name, s in zip(names, drawn, strict=True)}
        shown = {n.node: n.plugins["RandomScore"] for n in attempt.top}
        assert len(shown) == 5
        for node, s in shown.items():
            assert s["raw"] == s["normalized"] == s["weighted"] == expected[node]
        best = max(expected.values())
        assert attempt.selected in {n for n, v in expected.items() if v == best}
        assert explained.final_node == attempt.selected


# -- end to end through the CLI: the example profile and cluster ---------------------


@pytest.mark.slow
def test_cli_simulate_with_the_example_profile_then_explain(db_url: str) -> None:
    config = str(ROOT / "examples" / "profiles" / "randomscore.yaml")
    run = eventsched(
        "simulate", "--config", config, str(ROOT / "examples" / "randomscore"), db=db_url
    )
    assert run.returncode == 0, run.stderr
    assert "4 of 4 pending pods bound, 0 unschedulable, on 5 nodes" in run.stdout

    text = eventsched("explain", "default/web-0", db=db_url)
    assert text.returncode == 0, text.stderr
    assert "5 feasible nodes scored (RandomScore x1); top 5:" in text.stdout

    with EventStore.connect(db_url) as store:
        seeds = {e.attempt: e.data["seed"] for e in store.read(kinds=["attempt_started"])}
    names = [f"worker-{i}" for i in range(1, 6)]
    hashes = np.array([name_hash(n) for n in names], dtype=np.uint64)
    for i in range(4):
        explained = json.loads(
            eventsched("explain", f"default/web-{i}", "--json", db=db_url).stdout
        )
        (attempt,) = explained["attempts"]
        drawn = scores_for(seeds[attempt["attempt"]], hashes)
        expected = {name: int(s) for name, s in zip(names, drawn, strict=True)}
        shown = {n["node"]: n["plugins"]["RandomScore"] for n in attempt["top"]}
        assert {n: s["raw"] for n, s in shown.items()} == expected
        assert all(s["raw"] == s["normalized"] == s["weighted"] for s in shown.values())
        assert attempt["selected"] in {
            n for n, v in expected.items() if v == max(expected.values())
        }
        assert explained["final_node"] == attempt["selected"]


# -- configuration: the example profile and args in a file -----------------------------


def test_example_profile_makes_it_the_only_scorer() -> None:
    config = load_config(ROOT / "examples" / "profiles" / "randomscore.yaml", full_registry())
    (profile,) = config.profiles
    assert profile.at("score") == (PluginRef("RandomScore", 1),)
    assert profile.at("preScore") == ()


def test_args_in_a_file_are_refused_with_the_path() -> None:
    doc = yaml.safe_load(
        """
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
          - schedulerName: eventsched
            plugins:
              score: {enabled: [{name: RandomScore, weight: 1}]}
            pluginConfig:
              - name: RandomScore
                args: {seed: 3}
        """
    )
    with pytest.raises(ConfigError) as err:
        parse_config(doc, "x.yaml", full_registry())
    assert str(err.value) == (
        "x.yaml: profiles[0].pluginConfig[0].args.seed: unknown field; RandomScore takes no args"
    )
