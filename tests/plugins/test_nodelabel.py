"""NodeLabel: required labels (args and the pod's annotation) filter, a numeric label scores."""

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
    FitError,
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
from tests.plugins.conftest import make_node, make_pod, plugin, run_filter, run_score

REQUIRES = "eventsched.io/requires"
PRIO = "priority.lixueduan.com"


def requiring(value: str, name: str = "p") -> Pod:
    return dataclasses.replace(make_pod(name), annotations={REQUIRES: value})


def gpu_table() -> NodeTable:
    return NodeTable(
        [
            make_node("a100", labels={"accelerator": "nvidia-a100", "disk": "ssd"}),
            make_node("t4", labels={"accelerator": "nvidia-t4", "disk": "ssd"}),
            make_node("plain", labels={"disk": "hdd"}),
        ]
    )


def reasons(statuses: list[Any]) -> list[str | None]:
    return [None if s is None else s.message for s in statuses]


# -- Filter -------------------------------------------------------------------------


def test_annotation_keeps_only_nodes_with_the_labels() -> None:
    statuses = run_filter("NodeLabel", requiring("accelerator=nvidia-a100,disk=ssd"), gpu_table())
    assert reasons(statuses) == [
        None,
        "node(s) had label accelerator with a value other than nvidia-a100",
        "node(s) didn't have label accelerator",
    ]
    assert all(
        s is not None and s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE for s in statuses[1:]
    )


def test_bare_key_asks_only_that_the_label_exists() -> None:
    assert reasons(run_filter("NodeLabel", requiring("accelerator"), gpu_table())) == [
        None,
        None,
        "node(s) didn't have label accelerator",
    ]


def test_first_failing_requirement_names_the_reason() -> None:
    # plain fails disk=ssd first (hdd), and would also fail accelerator: only the first is reported.
    statuses = run_filter("NodeLabel", requiring("disk=ssd, accelerator"), gpu_table())
    assert reasons(statuses) == [
        None,
        None,
        "node(s) had label disk with a value other than ssd",
    ]


def test_args_and_annotation_both_apply() -> None:
    table = gpu_table()
    args = {"requiredLabels": ["disk=ssd"]}
    assert reasons(run_filter("NodeLabel", make_pod(), table, args)) == [
        None,
        None,
        "node(s) had label disk with a value other than ssd",
    ]
    assert reasons(run_filter("NodeLabel", requiring("accelerator=nvidia-t4"), table, args)) == [
        "node(s) had label accelerator with a value other than nvidia-t4",
        None,
        "node(s) had label disk with a value other than ssd",
    ]


def test_no_requirement_skips_filter() -> None:
    p = plugin("NodeLabel")
    _, status = p.pre_filter(CycleState(), make_pod(), gpu_table())
    assert status is not None and status.code == Code.SKIP
    # An empty annotation (or only commas) asks for nothing, too.
    _, status = p.pre_filter(CycleState(), requiring(" , "), gpu_table())
    assert status is not None and status.code == Code.SKIP


def test_filter_without_prefilter_parses_the_annotation_itself() -> None:
    table = gpu_table()
    p = plugin("NodeLabel", table=table)
    result = p.filter_batch(CycleState(), requiring("accelerator"), table, np.arange(len(table)))
    assert result.passed.tolist() == [True, True, False]


def test_filter_only_the_rows_given() -> None:
    table = gpu_table()
    p = plugin("NodeLabel", table=table)
    state = CycleState()
    pod = requiring("accelerator=nvidia-t4")
    p.pre_filter(state, pod, table)
    result = p.filter_batch(state, pod, table, np.array([1, 2]))
    assert result.passed.tolist() == [True, False]
    assert [s.message for s in result.statuses] == ["node(s) didn't have label accelerator"]


@pytest.mark.parametrize(
    ("annotation", "fragment"),
    [
        ("=x", 'entry "=x": empty label key'),
        ("a==b", "entry \"a==b\": '==' is not an operator here; write a=b"),
        ("a=b c", 'invalid label value "b c"'),
        ("accelerator=", "empty value for label accelerator; write just accelerator"),
        ("bad key=x", 'invalid label key "bad key"'),
        ("-gpu", 'invalid label key "-gpu"'),
        ("Example.com/gpu", 'the prefix "Example.com" must be a lowercase DNS subdomain'),
        ("/gpu", "the prefix before '/' is empty"),
        ("x" * 64, "the name must be at most 63"),
        ("gpu=" + "v" * 64, "invalid label value"),
    ],
)
def test_malformed_annotation_refuses_the_pod_in_prefilter(annotation: str, fragment: str) -> None:
    p = plugin("NodeLabel")
    result, status = p.pre_filter(CycleState(), requiring(annotation), gpu_table())
    assert result is None
    assert status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message.startswith(f"annotation {REQUIRES}: ")
    assert fragment in status.message
    assert status.message.endswith(
        "write comma-separated KEY or KEY=VALUE entries, e.g. accelerator=nvidia-a100,disk=ssd"
    )


def test_contradicting_values_refuse_the_pod_once() -> None:
    p = plugin("NodeLabel", {"requiredLabels": ["disk=ssd"]})
    _, status = p.pre_filter(CycleState(), requiring("disk=hdd"), gpu_table())
    assert status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message == (
        "label disk is required to be both ssd (requiredLabels) and hdd "
        f"(annotation {REQUIRES}); no node can match both, keep one"
    )
    # The same requirement twice is no contradiction.
    _, status = p.pre_filter(CycleState(), requiring("disk=ssd,disk"), gpu_table())
    assert status is None


def test_label_with_empty_value_counts_as_present() -> None:
    table = NodeTable([make_node("cp", labels={"node-role.kubernetes.io/control-plane": ""})])
    assert reasons(
        run_filter("NodeLabel", requiring("node-role.kubernetes.io/control-plane"), table)
    ) == [None]


def framework(args: dict[str, Any], table: NodeTable, handle: Handle | None = None) -> Framework:
    base = default_profile()
    plugins = dict(base.plugins)
    for point in ("preFilter", "filter", "preScore"):
        plugins[point] = (*plugins[point], PluginRef("NodeLabel"))
    plugins["score"] = (*plugins["score"], PluginRef("NodeLabel", 5))
    profile = Profile(base.scheduler_name, plugins, {"NodeLabel": args})
    return Framework(profile, full_registry(), handle or Handle(table))


def test_fit_error_message_when_no_node_has_the_labels() -> None:
    table = gpu_table()
    fw = framework({}, table)
    with pytest.raises(FitError) as err:
        schedule_pod(fw, CycleState(), requiring("accelerator=nvidia-h100"), table, 0, ListSink())
    assert str(err.value) == (
        "0/3 nodes are available: 1 node(s) didn't have label accelerator, "
        "2 node(s) had label accelerator with a value other than nvidia-h100."
    )


def test_fit_error_message_for_a_malformed_annotation() -> None:
    table = gpu_table()
    sink = ListSink()
    with pytest.raises(FitError) as err:
        schedule_pod(framework({}, table), CycleState(), requiring("a==b"), table, 0, sink)
    assert str(err.value).startswith(
        f'0/3 nodes are available: annotation {REQUIRES}: entry "a==b"'
    )
    prefiltered = sink.of("prefiltered")[0]
    assert prefiltered.plugin == "NodeLabel"
    assert prefiltered.data["status"]["code"] == "UnschedulableAndUnresolvable"


def test_pod_lands_on_the_only_matching_node() -> None:
    table = gpu_table()
    result = schedule_pod(
        framework({}, table), CycleState(), requiring("accelerator=nvidia-t4"), table, 0, ListSink()
    )
    assert result.node == "t4"


# -- Score --------------------------------------------------------------------------


def prio_table(*values: str | None) -> NodeTable:
    return NodeTable(
        [make_node(f"n{i}", labels={} if v is None else {PRIO: v}) for i, v in enumerate(values)]
    )


def scores(table: NodeTable, **args: Any) -> tuple[list[int], list[int]]:
    return run_score("NodeLabel", make_pod(), table, {"scoreLabel": PRIO, **args})


def test_min_max_ascending() -> None:
    raw, normalized = scores(prio_table("1", "3", "5", "2"))
    assert raw == [1, 3, 5, 2]
    assert normalized == [0, 50, 100, 25]


def test_descending_flips() -> None:
    _, normalized = scores(prio_table("1", "3", "5"), order="descending")
    assert normalized == [100, 50, 0]


def test_decimals_and_negative_values() -> None:
    raw, normalized = scores(prio_table("0.5", "1.5", "-1"))
    assert raw == [0, 1, -1]  # raw is the value truncated, shown in explain
    assert normalized == [60, 100, 0]


def test_all_equal_values_get_the_maximum() -> None:
    _, normalized = scores(prio_table("7", "7", None))
    assert normalized == [100, 100, 0]


def test_missing_and_non_numeric_values_score_zero_and_are_recorded_once() -> None:
    table = prio_table("10", "high", None, "20", "1e3", "nan")
    p = plugin("NodeLabel", {"scoreLabel": PRIO}, table)
    sink = ListSink()
    state = CycleState(sink=sink)
    rows = np.arange(len(table))
    assert p.pre_score(state, make_pod(), table, rows) is None
    raw = p.score_batch(state, make_pod(), table, rows)
    normalized = p.normalize_score(state, make_pod(), raw.copy(), rows)
    assert raw.tolist() == [10, 0, 0, 20, 0, 0]
    assert normalized.tolist() == [0, 0, 0, 100, 0, 0]
    [event] = sink.decisions
    assert (event.kind, event.plugin) == ("input_recorded", "NodeLabel")
    assert event.data["key"] == "unscoredNodes"
    value = event.data["value"]
    assert value["missing"] == 1 and value["notNumeric"] == 3
    assert value["message"] == (
        f"4 of 6 node(s) scored 0: 1 without label {PRIO}, 3 with a value that is not a number"
    )
    assert value["nodes"] == [
        {"node": "n1", "reason": f'label {PRIO}="high" is not a number; scored 0'},
        {"node": "n2", "reason": f"no label {PRIO}; scored 0"},
        {"node": "n4", "reason": f'label {PRIO}="1e3" is not a number; scored 0'},
        {"node": "n5", "reason": f'label {PRIO}="nan" is not a number; scored 0'},
    ]


def test_nothing_recorded_when_every_node_has_a_number() -> None:
    table = prio_table("1", "2")
    p = plugin("NodeLabel", {"scoreLabel": PRIO}, table)
    sink = ListSink()
    p.score_batch(CycleState(sink=sink), make_pod(), table, np.arange(2))
    assert sink.decisions == []


def test_recorded_node_list_is_bounded() -> None:
    table = prio_table(*([None] * 50), "3")
    p = plugin("NodeLabel", {"scoreLabel": PRIO}, table)
    sink = ListSink()
    p.score_batch(CycleState(sink=sink), make_pod(), table, np.arange(len(table)))
    [event] = sink.decisions
    assert event.data["value"]["missing"] == 50
    assert len(event.data["value"]["nodes"]) == 20


def test_scores_follow_node_changes() -> None:
    table = prio_table("1", "2")
    p = plugin("NodeLabel", {"scoreLabel": PRIO}, table)
    rows = np.arange(2)
    assert p.score_batch(CycleState(), make_pod(), table, rows).tolist() == [1, 2]
    table.upsert_node(make_node("n0", labels={PRIO: "9"}))
    assert p.score_batch(CycleState(), make_pod(), table, rows).tolist() == [9, 2]


def test_no_score_label_skips_prescore_and_scores_zero() -> None:
    table = prio_table("1", "2")
    p = plugin("NodeLabel", {}, table)
    status = p.pre_score(CycleState(), make_pod(), table, np.arange(2))
    assert status is not None and status.code == Code.SKIP
    assert p.score_batch(CycleState(), make_pod(), table, np.arange(2)).tolist() == [0, 0]


def test_score_steers_the_pod_through_the_framework() -> None:
    table = NodeTable(
        [
            make_node("low", labels={PRIO: "1"}),
            make_node("high", labels={PRIO: "10"}),
            make_node("none"),
        ]
    )
    sink = ListSink()
    result = schedule_pod(
        framework({"scoreLabel": PRIO}, table), CycleState(), make_pod(), table, 0, sink
    )
    assert result.node == "high"
    scored = sink.of("scored")[0].data
    by_node = {node: c for (p, node), c in score_cells(scored).items() if p == "NodeLabel"}
    assert by_node["high"].normalized == 100 and by_node["high"].weighted == 500
    assert by_node["low"].normalized == 0 and by_node["none"].normalized == 0


# -- Args ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "field", "fragment"),
    [
        (
            {"requiredLabels": "disk=ssd"},
            "requiredLabels",
            "must be a list of KEY or KEY=VALUE strings",
        ),
        (
            {"requiredLabels": ["disk", 3]},
            "requiredLabels[1]",
            "must be a KEY or KEY=VALUE string (got 3)",
        ),
        (
            {"requiredLabels": ["disk", "=ssd"]},
            "requiredLabels[1]",
            'empty label key; write KEY or KEY=VALUE (got "=ssd")',
        ),
        ({"requiredLabels": ["a=b/c"]}, "requiredLabels[0]", 'invalid label value "b/c"'),
        ({"requiredLabels": ["a==b"]}, "requiredLabels[0]", "'==' is not an operator here"),
        (
            {"requiredLabels": ["disk=ssd", "disk=hdd"]},
            "requiredLabels[1]",
            "already required to be ssd by requiredLabels[0]",
        ),
        ({"scoreLabel": "bad key"}, "scoreLabel", 'invalid label key "bad key"'),
        ({"scoreLabel": 5}, "scoreLabel", "must be a label key string (got 5)"),
        ({"order": "up"}, "order", 'must be one of ascending, descending (got "up")'),
        (
            {"weight": 2},
            "weight",
            "unknown field; NodeLabel takes requiredLabels, scoreLabel, order",
        ),
    ],
)
def test_bad_args_name_the_field(args: dict[str, Any], field: str, fragment: str) -> None:
    with pytest.raises(PluginArgsError) as err:
        plugin("NodeLabel", args)
    assert err.value.field == field
    assert fragment in err.value.problem


def test_good_args() -> None:
    p = plugin(
        "NodeLabel",
        {
            "requiredLabels": ["disk=ssd", "example.com/zone"],
            "scoreLabel": PRIO,
            "order": "descending",
        },
    )
    assert [str(r) for r in p.required] == ["disk=ssd", "example.com/zone"]
    assert p.descending and p.score_label == PRIO


# -- end to end through the CLI: the example profile and cluster ---------------------

ROOT = Path(__file__).resolve().parents[2]
H100 = (
    "0/6 nodes are available: 1 node(s) didn't have label disk, "
    "2 node(s) had label accelerator with a value other than nvidia-h100, "
    "3 node(s) didn't have label accelerator."
)


@pytest.mark.slow
def test_cli_simulate_with_the_example_profile_then_explain(db_url: str) -> None:
    config = str(ROOT / "examples" / "profiles" / "nodelabel.yaml")
    run = eventsched(
        "simulate", "--config", config, str(ROOT / "examples" / "nodelabel"), db=db_url
    )
    assert run.returncode == 0, run.stderr
    assert "2 of 4 pending pods bound, 2 unschedulable, on 6 nodes" in run.stdout
    assert f"default/train-h100: {H100}" in run.stdout
    assert (
        f'default/typo: 0/6 nodes are available: annotation {REQUIRES}: entry "a==b": '
        "'==' is not an operator here; write a=b; write comma-separated KEY or KEY=VALUE "
        "entries, e.g. accelerator=nvidia-a100,disk=ssd." in run.stdout
    )

    a100 = eventsched("explain", "default/train-a100", db=db_url)
    assert a100.returncode == 0, a100.stderr
    assert "bound to gpu-a100-1" in a100.stdout
    assert (
        "NodeLabel rejected 3 node(s) (node(s) didn't have label accelerator): cpu-1, cpu-2, cpu-3"
        in a100.stdout
    )
    assert (
        "NodeLabel rejected 1 node(s) (node(s) had label accelerator with a value other than "
        "nvidia-a100): gpu-t4-1" in a100.stdout
    )
    assert "NodeLabel rejected 1 node(s) (node(s) didn't have label disk): edge-1" in a100.stdout

    h100 = eventsched("explain", "default/train-h100", db=db_url)
    assert "not bound" in h100.stdout and H100 in h100.stdout

    typo = json.loads(eventsched("explain", "default/typo", "--json", db=db_url).stdout)
    (attempt,) = typo["attempts"]
    assert attempt["outcome"] == "unschedulable"
    assert attempt["prefilter"]["status"]["plugin"] == "NodeLabel"
    assert attempt["prefilter"]["status"]["code"] == "UnschedulableAndUnresolvable"

    web = json.loads(eventsched("explain", "default/web", "--json", db=db_url).stdout)
    assert web["final_node"] == "gpu-a100-1"  # highest priority.lixueduan.com among feasible
    (attempt,) = web["attempts"]
    label_scores = {n["node"]: n["plugins"]["NodeLabel"] for n in attempt["top"]}
    assert {n: s["raw"] for n, s in label_scores.items()} == {
        "gpu-a100-1": 10,
        "gpu-t4-1": 5,
        "cpu-1": 1,
        "cpu-2": 0,
        "cpu-3": 0,
    }
    assert label_scores["gpu-a100-1"]["normalized"] == 100
    assert label_scores["gpu-t4-1"]["normalized"] == 44  # (5 - 1) * 100 // (10 - 1)
    assert label_scores["cpu-1"]["normalized"] == 0
    [note] = [s for s in attempt["steps"] if s["kind"] == "input_recorded"]
    assert note["plugin"] == "NodeLabel" and note["key"] == "unscoredNodes"
    assert note["value"]["nodes"] == [
        {"node": "cpu-2", "reason": f'label {PRIO}="high" is not a number; scored 0'},
        {"node": "cpu-3", "reason": f"no label {PRIO}; scored 0"},
    ]


def test_cli_config_check_names_the_bad_arg(tmp_path: Path) -> None:
    good = eventsched("config", "check", str(ROOT / "examples" / "profiles" / "nodelabel.yaml"))
    assert good.returncode == 0, good.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "  - schedulerName: eventsched\n"
        "    plugins:\n"
        "      multiPoint:\n"
        "        enabled: [{name: NodeLabel}]\n"
        "    pluginConfig:\n"
        "      - name: NodeLabel\n"
        "        args:\n"
        "          requiredLabels: [disk, '=ssd']\n"
    )
    result = eventsched("config", "check", str(bad))
    assert result.returncode == 2
    assert (
        "profiles[0].pluginConfig[0].args.requiredLabels[1]: empty label key; "
        'write KEY or KEY=VALUE (got "=ssd")' in result.stderr
    )
