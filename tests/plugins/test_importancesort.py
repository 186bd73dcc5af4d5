"""ImportanceSort: queue order by the eventsched.io/importance annotation, then priority, arrival."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
import yaml

from eventsched.audit import explain_pod
from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.config.file import ConfigError, load_config, parse_config
from eventsched.events import EventStore
from eventsched.framework import (
    Handle,
    ListSink,
    PluginArgsError,
    PluginRef,
    PreEnqueuePlugin,
    Profile,
    QueuedPodInfo,
    QueueSortPlugin,
)
from eventsched.model import NodeTable, Pod
from eventsched.plugins import full_registry
from eventsched.plugins import importancesort as module
from eventsched.plugins.importancesort import ImportanceSort, parse_importance
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.cli.test_cli import ROOT, eventsched
from tests.plugins.conftest import make_node

ANNOTATION = "eventsched.io/importance"


def plugin(name: str, args: dict[str, Any] | None = None, table: NodeTable | None = None) -> Any:
    """Our own plugins are in the full registry (the in-tree one has upstream's only)."""
    return full_registry().factory(name)(args or {}, Handle(table))


def pod(
    name: str,
    importance: str | None = None,
    priority: int = 0,
    cpu: str = "100m",
    uid: str | None = None,
) -> Pod:
    annotations = {ANNOTATION: importance} if importance is not None else {}
    return Pod.from_manifest(
        {
            "metadata": {
                "name": name,
                "namespace": "default",
                "uid": uid or f"uid-{name}",
                "annotations": annotations,
            },
            "spec": {
                "schedulerName": "eventsched",
                "priority": priority,
                "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
            },
        }
    )


def queue_order(sorter: Any, infos: list[QueuedPodInfo]) -> list[str]:
    """Pod names in the order `less` puts them (a full sort, as the heap's pops would)."""

    def compare(a: QueuedPodInfo, b: QueuedPodInfo) -> int:
        return -1 if sorter.less(a, b) else (1 if sorter.less(b, a) else 0)

    return [i.pod.name for i in sorted(infos, key=functools.cmp_to_key(compare))]


def info(p: Pod, timestamp: float, sequence: int = 0) -> QueuedPodInfo:
    return QueuedPodInfo(p, timestamp, sequence)


# -- parsing --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("10", 10),
        ("0", 0),
        ("-3", -3),
        ("+7", 7),
        ("007", 7),
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
    ],
)
def test_integers_in_int64_range_are_read(text: str, value: int) -> None:
    assert parse_importance(text) == (value, None)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("high", "not an integer"),
        ("1.5", "not an integer"),
        ("", "not an integer"),
        (" 5", "not an integer"),
        ("5 ", "not an integer"),
        ("5\n", "not an integer"),
        ("1_000", "not an integer"),
        ("1e3", "not an integer"),
        ("\uff19", "not an integer"),  # a fullwidth 9: Python's int() would take it, Go's does not
        ("9223372036854775808", "out of the int64 range"),
        ("-9223372036854775809", "out of the int64 range"),
    ],
)
def test_malformed_values_count_as_zero(text: str, error: str) -> None:
    assert parse_importance(text) == (0, error)


# -- ordering -------------------------------------------------------------------


def test_higher_importance_first_even_over_priority_and_arrival() -> None:
    sorter = plugin("ImportanceSort")
    infos = [
        info(pod("old-urgent", priority=1000), 1.0),
        info(pod("negative", "-5", priority=2000), 0.5),
        info(pod("important", "10"), 3.0),
        info(pod("somewhat", "2"), 2.0),
    ]
    assert queue_order(sorter, infos) == ["important", "somewhat", "old-urgent", "negative"]


def test_equal_importance_falls_back_to_priority() -> None:
    sorter = plugin("ImportanceSort")
    infos = [
        info(pod("low", "5", priority=1), 1.0),
        info(pod("high", "5", priority=100), 2.0),
        info(pod("mid", "5", priority=50), 3.0),
    ]
    assert queue_order(sorter, infos) == ["high", "mid", "low"]


def test_equal_importance_and_priority_falls_back_to_arrival() -> None:
    sorter = plugin("ImportanceSort")
    infos = [
        info(pod("third", "5"), 3.0),
        info(pod("first", "5"), 1.0),
        info(pod("same-time-later", "5"), 2.0, sequence=9),
        info(pod("same-time-earlier", "5"), 2.0, sequence=4),
    ]
    assert queue_order(sorter, infos) == ["first", "same-time-earlier", "same-time-later", "third"]


def test_absent_and_malformed_both_mean_zero() -> None:
    sorter = plugin("ImportanceSort")
    infos = [
        info(pod("malformed-late", "high"), 4.0),
        info(pod("absent", None), 3.0),
        info(pod("explicit-zero", "0"), 2.0),
        info(pod("malformed-early", "1.5"), 1.0),
        info(pod("one", "1"), 5.0),
        info(pod("minus-one", "-1"), 0.0),
    ]
    assert queue_order(sorter, infos) == [
        "one",
        "malformed-early",
        "explicit-zero",
        "absent",
        "malformed-late",
        "minus-one",
    ]


def test_without_annotations_it_orders_as_priority_sort() -> None:
    ours, upstream = plugin("ImportanceSort"), plugin("PrioritySort")
    infos = [
        info(pod(f"p{i}", priority=(i * 7) % 3), float((i * 5) % 4), sequence=i) for i in range(12)
    ]
    assert queue_order(ours, infos) == queue_order(upstream, infos)


def test_less_parses_each_value_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = module.parse_importance

    def counting(text: str) -> tuple[int, str | None]:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(module, "parse_importance", counting)
    sorter = plugin("ImportanceSort")
    infos = [info(pod(f"p{i}", str(i % 3)), float(i)) for i in range(50)]
    infos.append(info(pod("bad", "high"), 99.0))
    for _ in range(20):
        queue_order(sorter, infos)
    assert sorted(calls) == ["0", "1", "2", "high"]


def test_changed_annotation_is_read_again() -> None:
    sorter = plugin("ImportanceSort")
    other = info(pod("other", "5"), 0.0)
    before = info(pod("p", "1"), 1.0)
    assert not sorter.less(before, other)
    after = info(pod("p", "9"), 1.0)  # same uid, the annotation was edited
    assert sorter.less(after, other)


def test_args_annotation_overrides_the_key() -> None:
    sorter = plugin("ImportanceSort", {"annotation": "example.com/rank"})
    ranked = Pod.from_manifest(
        {
            "metadata": {"name": "r", "uid": "u-r", "annotations": {"example.com/rank": "3"}},
            "spec": {"containers": [{"name": "c"}]},
        }
    )
    ignored = pod("ignored", "100")  # carries eventsched.io/importance, which is not our key now
    assert sorter.less(info(ranked, 2.0), info(ignored, 1.0))


@pytest.mark.parametrize(
    ("args", "field", "problem"),
    [
        ({"annotation": ""}, "annotation", "must be an annotation key"),
        ({"annotation": "has space"}, "annotation", "got 'has space'"),
        ({"annotation": 5}, "annotation", "must be an annotation key"),
        ({"annotation": "Bad_Prefix/x"}, "annotation", "must be an annotation key"),
        ({"annotation": "a/" + "x" * 64}, "annotation", "at most 63 characters"),
        ({"importance": 1}, "importance", "unknown field; ImportanceSort takes annotation"),
    ],
)
def test_bad_args_name_the_field(args: dict[str, Any], field: str, problem: str) -> None:
    with pytest.raises(PluginArgsError) as err:
        plugin("ImportanceSort", args)
    assert err.value.field == field
    assert problem in err.value.problem


def test_serves_queue_sort_and_pre_enqueue() -> None:
    sorter = plugin("ImportanceSort")
    assert isinstance(sorter, QueueSortPlugin)
    assert isinstance(sorter, PreEnqueuePlugin)


# -- PreEnqueue: reporting a malformed value --------------------------------------


class Recorder:
    """An emit_event that keeps what it was given."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str, str, str]] = []

    def __call__(self, p: Pod, event_type: str, reason: str, action: str, note: str) -> None:
        self.events.append((p.key, event_type, reason, action, note))


def reporting_plugin() -> tuple[ImportanceSort, ListSink, Recorder]:
    handle = Handle()
    sink, recorder = ListSink(), Recorder()
    handle.enqueue_sink = sink  # as Framework.run_pre_enqueue sets it
    handle.emit_event = recorder
    return ImportanceSort({}, handle), sink, recorder


def test_malformed_value_is_recorded_and_reported_but_admitted() -> None:
    sorter, sink, recorder = reporting_plugin()
    assert sorter.pre_enqueue(pod("web", "high")) is None
    (decision,) = sink.decisions
    assert decision.kind == "input_recorded" and decision.plugin == "ImportanceSort"
    assert decision.data == {
        "key": "importance",
        "value": {"annotation": ANNOTATION, "value": "high", "error": "not an integer", "used": 0},
    }
    ((key, event_type, reason, action, note),) = recorder.events
    assert (key, event_type, reason, action) == (
        "default/web",
        "Warning",
        "InvalidImportance",
        "Scheduling",
    )
    assert note.startswith(
        'annotation eventsched.io/importance="high" is not an integer, so importance 0 is used; '
    )
    assert "set it to a whole number between -9223372036854775808 and 9223372036854775807" in note
    assert "or remove it" in note


def test_out_of_range_value_is_reported_as_such() -> None:
    sorter, sink, recorder = reporting_plugin()
    assert sorter.pre_enqueue(pod("big", "99999999999999999999")) is None
    assert sink.decisions[0].data["value"]["error"] == "out of the int64 range"
    assert "is out of the int64 range" in recorder.events[0][4]


def test_reported_once_per_pod_and_value_not_on_every_requeue() -> None:
    sorter, sink, recorder = reporting_plugin()
    for _ in range(3):
        assert sorter.pre_enqueue(pod("web", "high")) is None
    assert len(sink.decisions) == len(recorder.events) == 1
    assert sorter.pre_enqueue(pod("web", "higher")) is None  # edited, still wrong: news
    assert sorter.pre_enqueue(pod("other", "high")) is None  # another pod
    assert sorter.pre_enqueue(pod("web", "high", uid="uid-web-recreated")) is None  # recreated
    assert [d.data["value"]["value"] for d in sink.decisions] == ["high", "higher", "high", "high"]
    assert [e[0] for e in recorder.events] == [
        "default/web",
        "default/web",
        "default/other",
        "default/web",
    ]


def test_valid_or_absent_values_report_nothing() -> None:
    sorter, sink, recorder = reporting_plugin()
    for p in (pod("a", "10"), pod("b", "-2"), pod("c", None)):
        assert sorter.pre_enqueue(p) is None
    assert sink.decisions == [] and recorder.events == []


def test_a_huge_value_is_shortened_in_the_log_and_the_event() -> None:
    sorter, sink, recorder = reporting_plugin()
    sorter.pre_enqueue(pod("huge", "x" * 10_000))
    shown = sink.decisions[0].data["value"]["value"]
    assert shown == "x" * 64 + "..."
    assert len(recorder.events[0][4]) < 400


def test_without_a_sink_pre_enqueue_still_admits() -> None:
    sorter = ImportanceSort({}, Handle())  # no sink, default (no-op) emit_event
    assert sorter.pre_enqueue(pod("web", "high")) is None


# -- end to end: the scheduler with ImportanceSort as its queue sort ---------------


def importance_profile() -> Profile:
    base = default_profile()
    plugins = dict(base.plugins)
    plugins["queueSort"] = (PluginRef("ImportanceSort"),)
    plugins["preEnqueue"] = (*plugins["preEnqueue"], PluginRef("ImportanceSort"))
    # Without preemption: these tests are about the queue's order, and the most
    # important pod would otherwise evict the one placed first.
    del plugins["postFilter"]
    return Profile(base.scheduler_name, plugins, {})


def test_important_pod_arriving_last_takes_the_only_room(store: EventStore) -> None:
    cluster = SimulatedCluster(
        [make_node("only", cpu="1")],
        [
            pod("urgent", priority=1000, cpu="1"),
            pod("sloppy", "high", cpu="1"),
            pod("important", "5", cpu="1"),
        ],
    )
    scheduler = Scheduler(
        store,
        cluster,
        [importance_profile()],
        full_registry(),
        SchedulerOptions(initial_backoff=0.05, max_backoff=0.1, group_commit_wait=0.0),
    )
    scheduler.start()
    scheduler.run(until_idle=True)
    scheduler.stop()

    assert {p.name: p.node_name for p in cluster.list_pods()} == {
        "urgent": "",
        "sloppy": "",
        "important": "only",
    }
    important = explain_pod(store, "default", "important")
    urgent = explain_pod(store, "default", "urgent")
    sloppy = explain_pod(store, "default", "sloppy")
    assert important.final_node == "only" and important.attempts[0].outcome == "bound"
    for loser in (urgent, sloppy):
        assert loser.final_node is None
        assert loser.attempts[0].message.startswith("0/1 nodes are available: 1 Insufficient cpu")
    # The queue popped them by importance, then priority: important, urgent, sloppy.
    firsts = [e.attempts[0].started_position for e in (important, urgent, sloppy)]
    assert firsts == sorted(firsts)

    warnings = [e for e in cluster.events if e.reason == "InvalidImportance"]
    assert [(e.pod_key, e.type) for e in warnings] == [("default/sloppy", "Warning")]
    recorded = [e for e in store.read(kinds=["input_recorded"]) if e.plugin == "ImportanceSort"]
    assert [(e.name, e.data["value"]["value"], e.data["value"]["used"]) for e in recorded] == [
        ("sloppy", "high", 0)
    ]
    # explain shows what a plugin recorded about the pod outside its attempts.
    (note,) = sloppy.notes
    assert (note["plugin"], note["key"], note["value"]["value"]) == (
        "ImportanceSort",
        "importance",
        "high",
    )
    assert important.notes == []


# -- end to end through the CLI: the example profile and cluster ---------------------


@pytest.mark.slow
def test_cli_simulate_with_the_example_profile_then_explain(db_url: str) -> None:
    config = str(ROOT / "examples" / "profiles" / "importancesort.yaml")
    cluster = str(ROOT / "examples" / "importancesort")
    run = eventsched("simulate", "--config", config, cluster, db=db_url)
    assert run.returncode == 0, run.stderr
    assert "1 of 3 pending pods bound, 2 unschedulable" in run.stdout
    assert "default/nightly-export: 0/1 nodes are available: 1 Insufficient cpu." in run.stdout
    assert "default/ingest-job: 0/1 nodes are available: 1 Insufficient cpu." in run.stdout
    assert "malformed importance annotation" in run.stderr and "default/ingest-job" in run.stderr

    text = eventsched("explain", "default/checkout-api", db=db_url)
    assert text.returncode == 0, text.stderr
    assert "1 scheduling attempt(s); bound to edge-1" in text.stdout
    explained = {
        name: json.loads(eventsched("explain", f"default/{name}", "--json", db=db_url).stdout)
        for name in ("checkout-api", "nightly-export", "ingest-job")
    }
    assert explained["checkout-api"]["final_node"] == "edge-1"
    for loser in ("nightly-export", "ingest-job"):
        (attempt,) = explained[loser]["attempts"]
        assert explained[loser]["final_node"] is None
        assert attempt["outcome"] == "unschedulable"
        assert attempt["rejections"][0]["reasons"] == ["Insufficient cpu"]
    # Popped by importance (10, then 0 and 0), then priority (1000 before 0), not by arrival.
    started = [
        explained[n]["attempts"][0]["started_position"]
        for n in ("checkout-api", "nightly-export", "ingest-job")
    ]
    assert started == sorted(started)

    with EventStore.connect(db_url) as store:
        recorded = [e for e in store.read(kinds=["input_recorded"]) if e.plugin == "ImportanceSort"]
    assert [(e.name, e.attempt, e.data["value"]) for e in recorded] == [
        (
            "ingest-job",
            None,
            {"annotation": ANNOTATION, "value": "high", "error": "not an integer", "used": 0},
        )
    ]


@pytest.mark.slow
def test_cli_without_the_profile_priority_wins(db_url: str) -> None:
    """The control for the test above: the default PrioritySort takes nightly-export."""
    run = eventsched("simulate", str(ROOT / "examples" / "importancesort"), db=db_url)
    assert run.returncode == 0, run.stderr
    assert "default/checkout-api: 0/1 nodes are available" in run.stdout
    assert "malformed importance annotation" not in run.stderr
    explained = json.loads(
        eventsched("explain", "default/nightly-export", "--json", db=db_url).stdout
    )
    assert explained["final_node"] == "edge-1"


# -- configuration: the example profile and bad args in a file ------------------------


def test_example_profile_runs_it_at_queue_sort_and_pre_enqueue() -> None:
    config = load_config(ROOT / "examples" / "profiles" / "importancesort.yaml", full_registry())
    (profile,) = config.profiles
    assert [r.name for r in profile.at("queueSort")] == ["ImportanceSort"]
    assert [r.name for r in profile.at("preEnqueue")] == ["SchedulingGates", "ImportanceSort"]
    assert profile.plugin_args["ImportanceSort"] == {"annotation": ANNOTATION}


def test_bad_args_in_a_file_name_the_path() -> None:
    doc = yaml.safe_load(
        """
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
          - schedulerName: eventsched
            plugins:
              multiPoint: {enabled: [{name: ImportanceSort}]}
              queueSort: {disabled: [{name: PrioritySort}]}
            pluginConfig:
              - name: ImportanceSort
                args: {annotation: "bad key"}
        """
    )
    with pytest.raises(ConfigError) as err:
        parse_config(doc, "x.yaml", full_registry())
    assert str(err.value).startswith(
        "x.yaml: profiles[0].pluginConfig[0].args.annotation: must be an annotation key"
    )
