"""The runtime's semantics, with small plugins written for the test."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from eventsched.audit.explain import selection_reason
from eventsched.framework import (
    BatchFilterResult,
    Code,
    CycleState,
    FitError,
    Framework,
    Handle,
    ListSink,
    NodeInfo,
    PluginRef,
    Profile,
    ProfileError,
    QueuedPodInfo,
    Registry,
    SchedulingError,
    ScoreCell,
    Status,
    default_normalize_score,
    min_max_normalize,
    num_feasible_nodes_to_find,
    schedule_pod,
    score_cells,
)
from eventsched.model import Node, NodeTable, Pod


def node(name: str, cpu: int = 4000) -> Node:
    return Node(name, {"cpu": cpu, "memory": 8 << 30, "pods": 110})


def pod(name: str = "p", uid: str = "u1") -> Pod:
    return Pod(uid=uid, namespace="default", name=name, scheduler_name="test")


class Sort:
    name = "Sort"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return a.timestamp < b.timestamp


class RejectNamed:
    """Filter per node: rejects nodes listed in args, with a configurable code."""

    name = "RejectNamed"

    def __init__(self, args: Mapping[str, Any], handle: Handle, features: object = None) -> None:
        self.nodes = set(args.get("nodes", []))
        self.code = Code.from_label(args.get("code", "Unschedulable"))

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        if node.name in self.nodes:
            return Status(self.code, (f"node(s) named {node.name}",))
        return None


class ScoreByIndex:
    """Score: the row number times 10, so later nodes score higher; normalizes reversed on demand."""

    name = "ScoreByIndex"

    def __init__(self, args: Mapping[str, Any], handle: Handle, features: object = None) -> None:
        self.reverse = bool(args.get("reverse", False))
        self.out_of_range = bool(args.get("outOfRange", False))

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray
    ) -> np.ndarray:
        return rows.astype(np.int64) * 10

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: np.ndarray, rows: np.ndarray
    ) -> np.ndarray:
        if self.out_of_range:
            return scores + 1000
        return default_normalize_score(100, self.reverse, scores)


class Constant:
    name = "Constant"

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        return 50


class Recorder:
    """Reserve, Permit, PreBind and Bind in one plugin, recording calls and sharing CycleState."""

    name = "Recorder"

    def __init__(self, args: Mapping[str, Any], handle: Handle, features: object = None) -> None:
        self.calls: list[str] = []
        self.handle = handle
        self.permit_status = args.get("permit", "Success")
        self.timeout = float(args.get("timeout", 5))
        self.fail_prebind = bool(args.get("failPreBind", False))
        self.fail_bind = bool(args.get("failBind", False))
        self.raise_in_filter = bool(args.get("raiseInFilter", False))

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        state.write("Recorder/reserved", node_name)
        self.calls.append(f"reserve:{node_name}")
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.calls.append(f"unreserve:{node_name}")

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        self.calls.append("permit")
        return Status(Code.from_label(self.permit_status), ("permit says so",)), self.timeout

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(f"prebind saw reserve of {state.read('Recorder/reserved')}")
        return Status.as_error("volume not ready") if self.fail_prebind else None

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(f"bind:{node_name}")
        return Status.as_error("conflict") if self.fail_bind else None


class Exploding:
    name = "Exploding"

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        raise RuntimeError("boom")


def registry() -> Registry:
    return Registry(
        {
            "Sort": lambda args, h, f: Sort(),
            "RejectNamed": RejectNamed,
            "ScoreByIndex": ScoreByIndex,
            "Constant": lambda args, h, f: Constant(),
            "Recorder": Recorder,
            "Exploding": lambda args, h, f: Exploding(),
        }
    )


def framework(
    table: NodeTable,
    filters: tuple[str, ...] = ("RejectNamed",),
    scores: tuple[tuple[str, int], ...] = (("ScoreByIndex", 1),),
    args: dict[str, dict[str, Any]] | None = None,
    percentage: int | None = None,
) -> Framework:
    profile = Profile(
        scheduler_name="test",
        plugins={
            "queueSort": (PluginRef("Sort"),),
            "filter": tuple(PluginRef(f) for f in filters),
            "score": tuple(PluginRef(n, w) for n, w in scores),
            "reserve": (PluginRef("Recorder"),),
            "permit": (PluginRef("Recorder"),),
            "preBind": (PluginRef("Recorder"),),
            "bind": (PluginRef("Recorder"),),
        },
        plugin_args=args or {},
        percentage_of_nodes_to_score=percentage,
    )
    return Framework(profile, registry(), Handle(table))


def table_of(count: int) -> NodeTable:
    return NodeTable([node(f"n{i}") for i in range(count)])


def test_highest_weighted_total_wins_and_breakdown_is_recorded() -> None:
    table = table_of(4)
    fw = framework(table, scores=(("ScoreByIndex", 2), ("Constant", 1)))
    sink = ListSink()
    result = schedule_pod(fw, CycleState("a", 7), pod(), table, 0, sink)
    assert result.node == "n3"
    scored = sink.of("scored")[0].data
    top = scored["top"][0]
    # raw 30 normalized to 100, weight 2 -> 200, plus Constant 50 x 1 -> 250
    assert top == {"node": "n3", "total": 250}
    assert score_cells(scored)[("ScoreByIndex", "n3")] == ScoreCell(
        raw=30, normalized=100, weighted=200
    )
    by_index = next(p for p in scored["plugins"] if p["name"] == "ScoreByIndex")
    assert by_index["weight"] == 2 and by_index["normalized"][0] == 100
    assert sink.kinds() == ["filtered", "scored", "selected"]


def test_normalize_reverse_flips_the_winner() -> None:
    table = table_of(4)
    fw = framework(table, args={"ScoreByIndex": {"reverse": True}})
    assert schedule_pod(fw, CycleState("a", 1), pod(), table, 0, ListSink()).node == "n0"


def test_score_outside_range_after_normalize_is_an_error() -> None:
    table = table_of(3)
    fw = framework(table, args={"ScoreByIndex": {"outOfRange": True}})
    with pytest.raises(SchedulingError) as err:
        schedule_pod(fw, CycleState("a", 1), pod(), table, 0, ListSink())
    assert "should in the range of [0, 100] after normalizing" in str(err.value)
    assert err.value.status.code == Code.ERROR


def test_ties_are_broken_by_the_recorded_seed_reproducibly() -> None:
    table = table_of(6)
    fw = framework(table, scores=(("Constant", 1),))
    picks = {
        schedule_pod(fw, CycleState("a", seed), pod(), table, 0, ListSink()).node
        for seed in range(40)
    }
    assert len(picks) > 1, "different seeds should pick different tied nodes"
    for seed in (3, 11):
        sink = ListSink()
        first = schedule_pod(fw, CycleState("a", seed), pod(), table, 0, sink).node
        assert schedule_pod(fw, CycleState("a", seed), pod(), table, 0, ListSink()).node == first
        selected = sink.of("selected")[0].data
        # The seed is the attempt's (attempt_started), not written again here.
        assert set(selected) == {"score", "tieCount"} and selected["tieCount"] == 6


def test_one_feasible_node_skips_scoring() -> None:
    table = table_of(3)
    fw = framework(table, args={"RejectNamed": {"nodes": ["n0", "n1"]}})
    sink = ListSink()
    assert schedule_pod(fw, CycleState("a", 1), pod(), table, 0, sink).node == "n2"
    assert "scored" not in sink.kinds()
    assert sink.of("selected")[0].data == {"score": None}  # the reason follows from it
    assert selection_reason(sink.of("selected")[0].data) == "only one feasible node"


def test_fit_error_message_matches_kube_scheduler() -> None:
    table = table_of(3)
    fw = framework(table, args={"RejectNamed": {"nodes": ["n0", "n1", "n2"]}})
    sink = ListSink()
    with pytest.raises(FitError) as err:
        schedule_pod(fw, CycleState("a", 1), pod(), table, 0, sink)
    assert str(err.value) == (
        "0/3 nodes are available: 1 node(s) named n0, 1 node(s) named n1, 1 node(s) named n2."
    )
    rejections = sink.of("filtered")[0].data["rejections"]
    assert [r["nodes"] for r in rejections] == [["n0"], ["n1"], ["n2"]]
    assert all(r["plugin"] == "RejectNamed" and r["code"] == "Unschedulable" for r in rejections)


def test_a_plugin_that_raises_becomes_an_error_status_naming_it() -> None:
    table = table_of(2)
    fw = framework(table, filters=("Exploding",))
    with pytest.raises(SchedulingError) as err:
        schedule_pod(fw, CycleState("a", 1), pod(), table, 0, ListSink())
    assert err.value.status.plugin == "Exploding"
    assert "boom" in err.value.status.message


def test_percentage_of_nodes_to_score_and_rotating_start_index() -> None:
    assert num_feasible_nodes_to_find(None, 50) == 50
    assert num_feasible_nodes_to_find(None, 1000) == 420  # 50 - 1000/125 = 42%
    assert num_feasible_nodes_to_find(None, 5000) == 500  # 10%
    assert num_feasible_nodes_to_find(None, 100_000) == 5000  # floor of 5%
    assert num_feasible_nodes_to_find(1, 1000) == 100  # never below 100 nodes
    table = table_of(1000)
    fw = framework(table)
    sink = ListSink()
    result = schedule_pod(fw, CycleState("a", 1), pod(), table, 990, sink)
    filtered = sink.of("filtered")[0].data
    assert filtered["evaluated"] == 420 and filtered["feasible"] == 420
    assert result.next_start_index == (990 + 420) % 1000
    # Scoring only saw the 420 nodes from index 990 onwards, wrapping around.
    assert result.node == "n999"


def test_stopping_early_keeps_only_rejections_before_the_last_needed_node() -> None:
    table = table_of(1000)
    fw = framework(table, args={"RejectNamed": {"nodes": ["n1", "n999"]}})
    sink = ListSink()
    schedule_pod(fw, CycleState("a", 1), pod(), table, 0, sink)
    filtered = sink.of("filtered")[0].data
    assert [r["nodes"] for r in filtered["rejections"]] == [["n1"]]
    assert filtered["evaluated"] == 421


def test_reserve_state_is_seen_by_prebind_and_bind_succeeds() -> None:
    table = table_of(1)
    fw = framework(table)
    recorder: Recorder = fw.instances["Recorder"]  # type: ignore[assignment]
    state = CycleState("a", 1)
    assert fw.run_reserve(state, pod(), "n0").is_success
    assert fw.run_pre_bind(state, pod(), "n0").is_success
    assert fw.run_bind(state, pod(), "n0").is_success
    assert recorder.calls == ["reserve:n0", "prebind saw reserve of n0", "bind:n0"]


class FailingPreBind:
    """PreBind that answers with the status its args name (an error or a rejection)."""

    name = "FailingPreBind"

    def __init__(self, args: Mapping[str, Any], handle: Handle, features: object = None) -> None:
        self.code = Code[args["code"]]

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return Status(self.code, ("binding volumes: timed out waiting for the condition",))


@pytest.mark.parametrize(
    ("code", "message"),
    [
        # frameworkImpl.RunPreBindPlugins: an error is wrapped, naming the plugin (%q)...
        (
            "ERROR",
            'running PreBind plugin "FailingPreBind": '
            "binding volumes: timed out waiting for the condition",
        ),
        # ...a rejection is returned as the plugin gave it.
        ("UNSCHEDULABLE", "binding volumes: timed out waiting for the condition"),
    ],
)
def test_prebind_failure_is_reported_as_kube_scheduler_reports_it(code: str, message: str) -> None:
    reg = registry()
    reg.register("FailingPreBind", FailingPreBind)
    profile = Profile(
        scheduler_name="test",
        plugins={"queueSort": (PluginRef("Sort"),), "preBind": (PluginRef("FailingPreBind"),)},
        plugin_args={"FailingPreBind": {"code": code}},
    )
    fw = Framework(profile, reg, Handle(table_of(1)))
    status = fw.run_pre_bind(CycleState("a", 1), pod(), "n0")
    assert status.code == Code[code]
    assert status.message == message
    assert status.plugin == "FailingPreBind"


@pytest.mark.parametrize(
    ("code", "expected"), [("Unschedulable", Code.UNSCHEDULABLE), ("Error", Code.ERROR)]
)
def test_permit_deny(code: str, expected: Code) -> None:
    fw = framework(table_of(1), args={"Recorder": {"permit": code}})
    status, waits = fw.run_permit(CycleState(), pod(), "n0")
    assert status.code == expected and not waits
    assert status.plugin == "Recorder"


def test_permit_wait_then_allow_from_another_thread() -> None:
    fw = framework(table_of(1), args={"Recorder": {"permit": "Wait", "timeout": 10}})
    status, waits = fw.run_permit(CycleState(), pod(), "n0")
    assert status.code == Code.WAIT and waits == {"Recorder": 10.0}
    waiting = fw.handle.waiting_pods.get("u1")
    assert waiting is not None and waiting.pending_plugins == ["Recorder"]
    threading.Timer(0.05, waiting.allow, args=("Recorder",)).start()
    assert fw.wait_on_permit(pod()).is_success
    assert fw.handle.waiting_pods.get("u1") is None


def test_permit_wait_then_reject() -> None:
    fw = framework(table_of(1), args={"Recorder": {"permit": "Wait", "timeout": 10}})
    fw.run_permit(CycleState(), pod(), "n0")
    waiting = fw.handle.waiting_pods.get("u1")
    assert waiting is not None
    waiting.reject("Recorder", "gang member failed")
    status = fw.wait_on_permit(pod())
    assert status.code == Code.UNSCHEDULABLE and status.reasons == ("gang member failed",)


def test_permit_wait_times_out_with_upstreams_message() -> None:
    fw = framework(table_of(1), args={"Recorder": {"permit": "Wait", "timeout": 0.1}})
    fw.run_permit(CycleState(), pod(), "n0")
    started = time.monotonic()
    status = fw.wait_on_permit(pod())
    assert time.monotonic() - started >= 0.09
    assert status.code == Code.UNSCHEDULABLE
    assert status.message == "rejected due to timeout after waiting 0.1s at plugin Recorder"


def test_profile_needs_exactly_one_queue_sort_and_matching_points() -> None:
    with pytest.raises(ProfileError, match="exactly one queueSort"):
        Framework(Profile("x", {"filter": (PluginRef("RejectNamed"),)}), registry(), Handle())
    with pytest.raises(ProfileError, match="does not implement the filter extension point"):
        Framework(
            Profile("x", {"queueSort": (PluginRef("Sort"),), "filter": (PluginRef("Constant"),)}),
            registry(),
            Handle(),
        )


def test_batch_filter_result_helpers() -> None:
    result = BatchFilterResult.from_mask(np.array([True, False, True]), Status.unschedulable("no"))
    assert list(result.passed) == [True, False, True]
    assert BatchFilterResult.passing(2).passed.all()


def test_min_max_normalize() -> None:
    assert min_max_normalize(np.array([10, 20, 30])).tolist() == [0, 50, 100]
    assert min_max_normalize(np.array([10, 20, 30]), reverse=True).tolist() == [100, 50, 0]
    assert min_max_normalize(np.array([7, 7])).tolist() == [0, 0]
    assert min_max_normalize(np.array([7, 7]), when_equal=100).tolist() == [100, 100]
    assert min_max_normalize(np.array([], dtype=np.int64)).tolist() == []


class PluginMetricsSeen:
    """The runtime's PluginMetrics as the scheduler's metrics take them, kept in lists."""

    def __init__(self) -> None:
        self.evaluated: list[tuple[str, str, str, int]] = []
        self.executed: list[tuple[str, str, str]] = []

    def plugin_evaluated(self, plugin: str, point: str, profile: str, count: int) -> None:
        self.evaluated.append((plugin, point, profile, count))

    def plugin_executed(self, plugin: str, point: str, status: str, seconds: float) -> None:
        assert seconds >= 0
        self.executed.append((plugin, point, status))


@pytest.mark.parametrize("sampled", [True, False])
def test_plugins_count_the_nodes_they_judge_and_sampled_cycles_time_them(sampled: bool) -> None:
    """As kube-scheduler's instrumented plugins: a Filter counts the nodes it is given (the
    ones earlier Filters passed), a Score the feasible nodes; every plugin call of a
    sampled cycle is timed with its status, none of an unsampled one."""
    table = table_of(4)
    fw = framework(table, args={"RejectNamed": {"nodes": ["n0"]}})
    seen = PluginMetricsSeen()
    fw.plugin_metrics = seen
    state = CycleState("a", 7)
    state.record_plugin_metrics = sampled
    result = schedule_pod(fw, state, pod(), table, 0, ListSink())
    assert fw.run_reserve(state, pod(), result.node).is_success
    assert seen.evaluated == [
        ("RejectNamed", "Filter", "test", 4),
        ("ScoreByIndex", "Score", "test", 3),
    ]
    timed = [
        ("RejectNamed", "Filter", "Success"),
        ("ScoreByIndex", "Score", "Success"),
        ("Recorder", "Reserve", "Success"),
    ]
    assert seen.executed == (timed if sampled else [])
