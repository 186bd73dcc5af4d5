"""PinnedHost: configured hosts and selectors, and the pod's preferred node, min-max normalized."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eventsched.config import default_profile
from eventsched.framework import (
    Code,
    CycleState,
    Framework,
    Handle,
    ListSink,
    PluginArgsError,
    PluginRef,
    Profile,
    schedule_pod,
    score_cells,
)
from eventsched.model import NodeTable, Pod
from eventsched.plugins import full_registry
from tests.cli.test_cli import eventsched
from tests.plugins.conftest import make_node, make_pod, plugin, run_score

PREFERRED = "eventsched.io/preferred-node"


def preferring(node: str) -> Pod:
    return dataclasses.replace(make_pod(), annotations={PREFERRED: node})


def table() -> NodeTable:
    return NodeTable(
        [
            make_node("n0", labels={"tier": "gold", "zone": "a"}),
            make_node("n1", labels={"tier": "gold", "zone": "b"}),
            make_node("n2", labels={"tier": "silver", "zone": "a"}),
            make_node("n3"),
        ]
    )


def test_hosts_by_name_min_max() -> None:
    args = {"hosts": [{"name": "n1", "score": 80}, {"name": "n2", "score": 40}]}
    raw, normalized = run_score("PinnedHost", make_pod(), table(), args)
    assert raw == [0, 80, 40, 0]
    assert normalized == [0, 100, 50, 0]


def test_raw_score_is_the_max_over_matching_rules() -> None:
    args = {
        "hosts": [{"name": "n0", "score": 30}],
        "selectors": [
            {"matchLabels": {"tier": "gold"}, "score": 60},
            {"matchLabels": {"tier": "gold", "zone": "b"}, "score": 90},
            {"matchLabels": {"zone": "a"}, "score": 20},
        ],
    }
    raw, normalized = run_score("PinnedHost", make_pod(), table(), args)
    assert raw == [60, 90, 20, 0]
    assert normalized == [66, 100, 22, 0]


def test_selector_needs_every_label() -> None:
    args = {"selectors": [{"matchLabels": {"tier": "gold", "zone": "a"}, "score": 50}]}
    raw, _ = run_score("PinnedHost", make_pod(), table(), args)
    assert raw == [50, 0, 0, 0]


def test_default_rule_score_is_the_maximum() -> None:
    raw, _ = run_score("PinnedHost", make_pod(), table(), {"hosts": [{"name": "n3"}]})
    assert raw == [0, 0, 0, 100]


def test_all_equal_means_all_zero() -> None:
    args = {"selectors": [{"matchLabels": {"kubernetes.io/os": "linux"}, "score": 70}]}
    nodes = NodeTable([make_node(f"n{i}", labels={"kubernetes.io/os": "linux"}) for i in range(3)])
    raw, normalized = run_score("PinnedHost", make_pod(), nodes, args)
    assert raw == [70, 70, 70]
    assert normalized == [0, 0, 0]


def test_preferred_node_annotation_gets_the_maximum() -> None:
    args = {"hosts": [{"name": "n1", "score": 100}, {"name": "n0", "score": 50}]}
    raw, normalized = run_score("PinnedHost", preferring("n2"), table(), args)
    assert raw == [50, 100, 100, 0]
    assert normalized == [50, 100, 100, 0]
    raw, normalized = run_score("PinnedHost", preferring("n3"), table())
    assert raw == [0, 0, 0, 100]
    assert normalized == [0, 0, 0, 100]


def test_nothing_configured_and_no_annotation_skips() -> None:
    p = plugin("PinnedHost")
    status = p.pre_score(CycleState(), make_pod(), table(), np.arange(4))
    assert status is not None and status.code == Code.SKIP
    # Score enabled without PreScore still works: all zero.
    assert p.score_batch(CycleState(), make_pod(), table(), np.arange(4)).tolist() == [0] * 4


def scored_with_sink(pod: Pod, nodes: NodeTable, rows: list[int]) -> tuple[list[int], ListSink]:
    p = plugin("PinnedHost", {}, nodes)
    sink = ListSink()
    state = CycleState(sink=sink)
    idx = np.array(rows, dtype=np.intp)
    assert p.pre_score(state, pod, nodes, idx) is None
    return p.score_batch(state, pod, nodes, idx).tolist(), sink


def test_preferred_node_that_does_not_exist_is_recorded_not_fatal() -> None:
    raw, sink = scored_with_sink(preferring("n9"), table(), [0, 1, 2, 3])
    assert raw == [0, 0, 0, 0]
    [event] = sink.decisions
    assert (event.kind, event.plugin) == ("input_recorded", "PinnedHost")
    assert event.data["key"] == "preferredNode"
    assert event.data["value"] == {
        "annotation": PREFERRED,
        "node": "n9",
        "found": False,
        "scored": False,
        "reason": "no node named n9 in the cluster; no node gets the pod's preference",
    }


def test_preferred_node_that_is_not_feasible_is_recorded() -> None:
    raw, sink = scored_with_sink(preferring("n3"), table(), [0, 1])
    assert raw == [0, 0]
    [event] = sink.decisions
    assert event.data["value"]["found"] is True
    assert event.data["value"]["reason"].startswith("node n3 is not among the 2 feasible node(s)")


def test_preferred_node_scored_records_nothing() -> None:
    raw, sink = scored_with_sink(preferring("n1"), table(), [0, 1, 2])
    assert raw == [0, 100, 0]
    assert sink.decisions == []


def test_steers_the_pod_through_the_framework() -> None:
    nodes = table()
    base = default_profile()
    plugins = dict(base.plugins)
    plugins["preScore"] = (*plugins["preScore"], PluginRef("PinnedHost"))
    plugins["score"] = (*plugins["score"], PluginRef("PinnedHost", 10))
    profile = Profile(
        base.scheduler_name, plugins, {"PinnedHost": {"hosts": [{"name": "n2", "score": 50}]}}
    )
    fw = Framework(profile, full_registry(), Handle(nodes))
    assert schedule_pod(fw, CycleState(), make_pod(), nodes, 0, ListSink()).node == "n2"
    sink = ListSink()
    assert schedule_pod(fw, CycleState(), preferring("n0"), nodes, 0, sink).node == "n0"
    scored = {
        node: cell.normalized
        for (plugin, node), cell in score_cells(sink.of("scored")[0].data).items()
        if plugin == "PinnedHost"
    }
    assert scored == {"n0": 100, "n2": 50, "n1": 0, "n3": 0}


@pytest.mark.parametrize(
    ("args", "field", "fragment"),
    [
        ({"hosts": {"name": "n1"}}, "hosts", "must be a list of {name: NODE, score: 0..100}"),
        ({"hosts": ["n1"]}, "hosts[0]", 'must be a mapping {name: NODE, score: 0..100} (got "n1")'),
        (
            {"hosts": [{"name": "n1"}, {"name": "n2", "score": "x"}]},
            "hosts[1].score",
            'must be an integer 0..100 (got "x")',
        ),
        (
            {"hosts": [{"name": "n1", "score": 101}]},
            "hosts[0].score",
            "must be an integer 0..100 (got 101)",
        ),
        (
            {"hosts": [{"name": "n1", "score": -1}]},
            "hosts[0].score",
            "must be an integer 0..100 (got -1)",
        ),
        (
            {"hosts": [{"name": "n1", "score": True}]},
            "hosts[0].score",
            "must be an integer 0..100 (got True)",
        ),
        (
            {"hosts": [{"name": "n1", "score": 1.5}]},
            "hosts[0].score",
            "must be an integer 0..100 (got 1.5)",
        ),
        ({"hosts": [{"score": 5}]}, "hosts[0].name", "must be a node name (got None)"),
        ({"hosts": [{"name": "Node_1"}]}, "hosts[0].name", "lowercase DNS subdomain"),
        (
            {"hosts": [{"name": "n1"}, {"name": "n1", "score": 3}]},
            "hosts[1].name",
            "already listed as hosts[0]",
        ),
        (
            {"hosts": [{"name": "n1", "weight": 3}]},
            "hosts[0].weight",
            "unknown field; an entry takes name, score",
        ),
        ({"selectors": [{"score": 5}]}, "selectors[0].matchLabels", "must be a non-empty mapping"),
        (
            {"selectors": [{"matchLabels": {"bad key": "x"}}]},
            "selectors[0].matchLabels.bad key",
            'invalid label key "bad key"',
        ),
        (
            {"selectors": [{"matchLabels": {"tier": "a b"}}]},
            "selectors[0].matchLabels.tier",
            'invalid label value "a b"',
        ),
        (
            {"selectors": [{"matchLabels": {"tier": True}}]},
            "selectors[0].matchLabels.tier",
            "quote it in YAML",
        ),
        (
            {"selectors": [{"matchLabels": {"tier": "gold"}, "score": "high"}]},
            "selectors[0].score",
            'must be an integer 0..100 (got "high")',
        ),
        (
            {"selectors": [{"matchExpressions": []}]},
            "selectors[0].matchExpressions",
            "unknown field; an entry takes matchLabels, score",
        ),
        ({"nodes": []}, "nodes", "unknown field; PinnedHost takes hosts, selectors"),
    ],
)
def test_bad_args_name_the_field(args: dict[str, Any], field: str, fragment: str) -> None:
    with pytest.raises(PluginArgsError) as err:
        plugin("PinnedHost", args)
    assert err.value.field == field
    assert fragment in err.value.problem


def test_numeric_label_values_from_yaml_are_matched_as_strings() -> None:
    nodes = NodeTable(
        [make_node("n0", labels={"rack": "7"}), make_node("n1", labels={"rack": "8"})]
    )
    raw, _ = run_score(
        "PinnedHost", make_pod(), nodes, {"selectors": [{"matchLabels": {"rack": 7}, "score": 10}]}
    )
    assert raw == [10, 0]


# -- end to end through the CLI: the example profile and cluster ---------------------

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_cli_simulate_with_the_example_profile_then_explain(db_url: str) -> None:
    config = str(ROOT / "examples" / "profiles" / "pinnedhost.yaml")
    run = eventsched(
        "simulate", "--config", config, str(ROOT / "examples" / "pinnedhost"), db=db_url
    )
    assert run.returncode == 0, run.stderr
    assert "3 of 3 pending pods bound, 0 unschedulable, on 4 nodes" in run.stdout

    def explained(name: str) -> dict[str, Any]:
        result = eventsched("explain", f"default/{name}", "--json", db=db_url)
        assert result.returncode == 0, result.stderr
        return dict(json.loads(result.stdout))

    api = explained("api")
    assert api["final_node"] == "worker-2"  # the configured host
    (attempt,) = api["attempts"]
    pinned = {n["node"]: n["plugins"]["PinnedHost"] for n in attempt["top"]}
    assert {n: (s["raw"], s["normalized"]) for n, s in pinned.items()} == {
        "worker-2": (80, 100),
        "worker-3": (40, 50),
        "worker-4": (40, 50),
        "worker-1": (0, 0),
    }

    batch = explained("batch")
    assert batch["final_node"] == "worker-4"  # its eventsched.io/preferred-node
    (attempt,) = batch["attempts"]
    pinned = {n["node"]: n["plugins"]["PinnedHost"] for n in attempt["top"]}
    assert pinned["worker-4"]["raw"] == 100 and pinned["worker-4"]["weighted"] == 500

    typo = explained("typo")
    assert typo["final_node"] == "worker-2"
    (attempt,) = typo["attempts"]
    [note] = [s for s in attempt["steps"] if s["kind"] == "input_recorded"]
    assert note["plugin"] == "PinnedHost" and note["key"] == "preferredNode"
    assert note["value"]["found"] is False
    assert note["value"]["reason"] == (
        "no node named worker-9 in the cluster; no node gets the pod's preference"
    )

    text = eventsched("explain", "default/batch", db=db_url).stdout
    assert "PinnedHost x5" in text and "Selected worker-4" in text


def test_cli_config_check_names_the_bad_arg(tmp_path: Path) -> None:
    good = eventsched("config", "check", str(ROOT / "examples" / "profiles" / "pinnedhost.yaml"))
    assert good.returncode == 0, good.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "  - schedulerName: eventsched\n"
        "    plugins:\n"
        "      multiPoint:\n"
        "        enabled: [{name: PinnedHost}]\n"
        "    pluginConfig:\n"
        "      - name: PinnedHost\n"
        "        args:\n"
        "          hosts: [{name: worker-1}, {name: worker-2, score: x}]\n"
    )
    result = eventsched("config", "check", str(bad))
    assert result.returncode == 2
    assert (
        'profiles[0].pluginConfig[0].args.hosts[1].score: must be an integer 0..100 (got "x")'
        in result.stderr
    )
