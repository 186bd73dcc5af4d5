"""PreFilter and the failed attempt as each version runs them (`schedule_pod`, runtime/prefilter.py).

Ported from v1.37.2 pkg/scheduler/schedule_one_test.go `TestSchedulerSchedulePod` (the
PreFilter and Filter cases; v1.34.4 has the same) and framework/runtime/framework_test.go
`TestRunPreFilterPlugins`, each also run at v1.28, whose expectations are eventsched's
as before versions (v1.28.0's table where it has the case).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from eventsched.framework import (
    Code,
    CycleState,
    Features,
    FitError,
    ListSink,
    SchedulingError,
    run_post_filter,
    schedule_pod,
)
from tests.framework.fakes import ERR_REASON_FAKE, FakePostFilter, framework, nodes, pod

V128, V134, V137 = Features(), Features(version="1.34"), Features(version="1.37")
ALL = (V128, V134, V137)
MODERN = (V134, V137)


def attempt(
    plugins: dict[str, tuple[str, dict[str, Any]]],
    points: dict[str, tuple[str, ...]],
    names: tuple[str, ...],
    pod_name: str,
    features: Features,
) -> tuple[Any, ListSink]:
    """`sched.SchedulePod` over nodes `names`: the result, or the FitError/SchedulingError."""
    table = nodes(*names)
    fw = framework(table, plugins, points, features)
    sink = ListSink()
    try:
        return schedule_pod(fw, CycleState("a", 1), pod(pod_name), table, 0, sink), sink
    except (FitError, SchedulingError) as err:
        return err, sink


def fit_error(outcome: Any) -> FitError:
    assert isinstance(outcome, FitError), outcome
    return outcome


# -- TestSchedulerSchedulePod ---------------------------------------------------------


@pytest.mark.parametrize("features", ALL, ids=lambda f: f.version)
def test_filter_failures_are_counted_alike(features: Features) -> None:
    # from schedule_one_test.go TestSchedulerSchedulePod: "test 1"
    err = fit_error(
        attempt(
            {"FalseFilter": ("FalseFilter", {})},
            {"filter": ("FalseFilter",)},
            ("node1", "node2"),
            "2",
            features,
        )[0]
    )
    assert str(err) == f"0/2 nodes are available: 2 {ERR_REASON_FAKE}."
    assert err.diagnosis.unschedulable_plugins == {"FalseFilter"}


@pytest.mark.parametrize("features", ALL, ids=lambda f: f.version)
def test_prefilter_unresolvable_status(features: Features) -> None:
    # from TestSchedulerSchedulePod: "test prefilter plugin returning Unschedulable status"
    # (the status is UnschedulableAndUnresolvable)
    plugins = {
        "FakePreFilter": (
            "FakePreFilter",
            {"code": "UnschedulableAndUnresolvable", "message": "injected unschedulable status"},
        )
    }
    err = fit_error(
        attempt(plugins, {"preFilter": ("FakePreFilter",)}, ("1", "2"), "p", features)[0]
    )
    assert str(err) == "0/2 nodes are available: injected unschedulable status."
    assert err.diagnosis.unschedulable_plugins == {"FakePreFilter"}
    assert err.diagnosis.absent_status is not None
    assert err.diagnosis.absent_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@pytest.mark.parametrize("features", ALL, ids=lambda f: f.version)
def test_prefilter_error_status(features: Features) -> None:
    # from TestSchedulerSchedulePod: "test prefilter plugin returning error status"
    plugins = {
        "FakePreFilter": ("FakePreFilter", {"code": "Error", "message": "injected error status"})
    }
    err = attempt(plugins, {"preFilter": ("FakePreFilter",)}, ("1", "2"), "p", features)[0]
    assert isinstance(err, SchedulingError)
    assert err.status.message == 'running PreFilter plugin "FakePreFilter": injected error status'


PREFILTER_123 = {
    "FakePreFilter1": ("FakePreFilter", {}),
    "FakePreFilter2": ("FakePreFilter", {"nodes": ["node2"]}),
    "FakePreFilter3": ("FakePreFilter", {"nodes": ["node1", "node2"]}),
}
THREE = ("node1", "node2", "node3")


@pytest.mark.parametrize("features", ALL, ids=lambda f: f.version)
def test_prefilter_returning_node(features: Features) -> None:
    # from TestSchedulerSchedulePod: "test prefilter plugin returning node"
    points = {"preFilter": ("FakePreFilter1", "FakePreFilter2", "FakePreFilter3")}
    result, _ = attempt(PREFILTER_123, points, THREE, "test-prefilter", features)
    assert result.node == "node2" and result.evaluated == 1


@pytest.mark.parametrize("features", ALL, ids=lambda f: f.version)
def test_prefilter_non_intersecting_nodes(features: Features) -> None:
    # from TestSchedulerSchedulePod: "test prefilter plugin returning non-intersecting nodes"
    plugins = {**PREFILTER_123, "FakePreFilter3": ("FakePreFilter", {"nodes": ["node1"]})}
    points = {"preFilter": ("FakePreFilter1", "FakePreFilter2", "FakePreFilter3")}
    err = fit_error(attempt(plugins, points, THREE, "test-prefilter", features)[0])
    message = "node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously"
    assert str(err) == f"0/3 nodes are available: {message}."
    assert err.diagnosis.unschedulable_plugins == {"FakePreFilter2", "FakePreFilter3"}
    status = err.diagnosis.absent_status
    assert status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    # v1.34+ names no plugin for the intersection (v1.28 eventsched: the last narrowing one).
    assert status.plugin == ("FakePreFilter3" if features is V128 else "")


@pytest.mark.parametrize("features", ALL, ids=lambda f: f.version)
def test_prefilter_returning_empty_node_set(features: Features) -> None:
    # from TestSchedulerSchedulePod: "test prefilter plugin returning empty node set"
    plugins = {
        "FakePreFilter1": ("FakePreFilter", {}),
        "FakePreFilter2": ("FakePreFilter", {"nodes": []}),
    }
    points = {"preFilter": ("FakePreFilter1", "FakePreFilter2")}
    err = fit_error(attempt(plugins, points, ("node1",), "test-prefilter", features)[0])
    assert str(err) == "0/1 nodes are available: node(s) didn't satisfy plugin FakePreFilter2."


@pytest.mark.parametrize("features", ALL, ids=lambda f: f.version)
def test_prefilter_result_and_filter_both_reject(features: Features) -> None:
    # from TestSchedulerSchedulePod: "test some nodes are filtered out by prefilter plugin
    # and other are filtered out by filter plugin" (v1.34+; v1.28 leaves node1 out)
    plugins = {
        "FakePreFilter": ("FakePreFilter", {"nodes": ["node2"]}),
        "FakeFilter": ("FakeFilter", {"codes": {"node2": "Unschedulable"}}),
    }
    points = {"preFilter": ("FakePreFilter",), "filter": ("FakeFilter",)}
    err = fit_error(attempt(plugins, points, ("node1", "node2"), "test-prefilter", features)[0])
    failure = "1 injecting failure for pod test-prefilter"
    if features is V128:
        assert str(err) == f"0/2 nodes are available: {failure}."
        assert err.diagnosis.unschedulable_plugins == {"FakeFilter"}
    else:
        assert str(err) == (
            f"0/2 nodes are available: {failure}, 1 node(s) didn't satisfy plugin(s) [FakePreFilter]."
        )
        assert err.diagnosis.unschedulable_plugins == {"FakePreFilter", "FakeFilter"}


@pytest.mark.parametrize("features", ALL, ids=lambda f: f.version)
def test_prefilter_returning_skip(features: Features) -> None:
    # from TestSchedulerSchedulePod: "test prefilter plugin returning skip"
    plugins = {
        "FakePreFilter1": ("FakePreFilter", {}),
        "FakeFilter1": ("FakeFilter", {"codes": {"node1": "Unschedulable"}}),
        "FakeFilter2": ("SkippedFilter", {}),
        "EqualPrioritizerPlugin": ("EqualPrioritizer", {}),
    }
    points = {
        "preFilter": ("FakePreFilter1", "FakeFilter2"),
        "filter": ("FakeFilter1", "FakeFilter2"),
        "score": ("EqualPrioritizerPlugin",),
    }
    result, _ = attempt(plugins, points, THREE, "test-prefilter", features)
    assert result.node in {"node2", "node3"} and result.evaluated == 3


@pytest.mark.parametrize("features", ALL, ids=lambda f: f.version)
def test_prefilter_returned_an_invalid_node(features: Features) -> None:
    # from TestSchedulerSchedulePod: "test prefilter plugin returned an invalid node"
    # (v1.34+ skips the unknown name; v1.28 fails on it)
    plugins = {
        "FakePreFilter": ("FakePreFilter", {"nodes": ["invalid-node"]}),
        "TrueFilter": ("TrueFilter", {}),
    }
    points = {"preFilter": ("FakePreFilter",), "filter": ("TrueFilter",)}
    outcome, _ = attempt(plugins, points, ("1", "2"), "test-prefilter", features)
    if features is V128:
        assert isinstance(outcome, SchedulingError)
        assert outcome.status.message == 'nodeinfo not found for node name "invalid-node"'
        return
    err = fit_error(outcome)
    assert str(err) == (
        "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [FakePreFilter]."
    )
    assert err.diagnosis.unschedulable_plugins == {"FakePreFilter"}


@pytest.mark.parametrize("features", ALL, ids=lambda f: f.version)
def test_filter_unresolvable_status(features: Features) -> None:
    # from TestSchedulerSchedulePod: "test with filter plugin returning
    # UnschedulableAndUnresolvable status"
    plugins = {
        "FakeFilter": ("FakeFilter", {"codes": {"3": "UnschedulableAndUnresolvable"}}),
        "NumericMap": ("NumericMap", {}),
    }
    points = {"filter": ("FakeFilter",), "score": ("NumericMap",)}
    err = fit_error(attempt(plugins, points, ("3",), "test-filter", features)[0])
    assert str(err) == "0/1 nodes are available: 1 injecting failure for pod test-filter."


# -- TestRunPreFilterPlugins (framework_test.go) ----------------------------------------


def run_pre_filter(
    features: Features, chain: list[tuple[str, dict[str, Any]]]
) -> tuple[Code, set[str]]:
    """PreFilter of plugins named as upstream's TestPlugins; the status code and the
    plugins whose Filter is to be skipped."""
    plugins = {name: ("FakePreFilter", args) for name, args in chain}
    table = nodes("node1")
    fw = framework(table, plugins, {"preFilter": tuple(plugins)}, features)
    state = CycleState("a", 1)
    _, status, _ = fw.run_pre_filter(state, pod("p"), table)
    return status.code, set(state.skip_filter)


SKIP = {"code": "Skip"}


@pytest.mark.parametrize(
    ("case", "chain", "want_128", "want_134"),
    [
        (
            "one PreFilter plugin returned skip, but another PreFilter plugin returned non-success",
            [("skip", SKIP), ("error", {"code": "Error"})],
            (Code.ERROR, {"skip"}),
            (Code.ERROR, {"skip"}),
        ),
        (
            "one PreFilter plugin returned Unschedulable, but another PreFilter plugin should be "
            "executed",
            [("unschedulable", {"code": "Unschedulable"}), ("skip", SKIP)],
            (Code.UNSCHEDULABLE, set()),
            (Code.UNSCHEDULABLE, {"skip"}),
        ),
        (
            "one PreFilter plugin returned UnschedulableAndUnresolvable, and all other plugins "
            "aren't executed",
            [("unresolvable", {"code": "UnschedulableAndUnresolvable"}), ("skip", SKIP)],
            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, set()),
            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, set()),
        ),
        (
            "all nodes are filtered out by prefilter result, but other plugins aren't executed",
            [("reject-all-nodes", {"nodes": []}), ("skip", SKIP)],
            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, set()),
            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, set()),
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_run_pre_filter_plugins(
    case: str,
    chain: list[tuple[str, dict[str, Any]]],
    want_128: tuple[Code, set[str]],
    want_134: tuple[Code, set[str]],
) -> None:
    # from framework/runtime/framework_test.go: TestRunPreFilterPlugins
    assert run_pre_filter(V128, chain) == want_128
    for features in MODERN:
        assert run_pre_filter(features, chain) == want_134


def test_the_last_unschedulable_prefilter_speaks_from_v134() -> None:
    """v1.34+ runs every PreFilter past an Unschedulable one and reports the last
    (`returnStatus`); v1.28 stops at the first. The pod is unschedulable by that plugin
    (`AddPluginStatus`), and every node has its status for preemption."""
    plugins = {
        "First": ("FakePreFilter", {"code": "Unschedulable", "message": "first says no"}),
        "Second": ("FakePreFilter", {"code": "Unschedulable", "message": "second says no"}),
        "Post": ("FakePostFilter", {"code": "Unschedulable", "message": "post says no"}),
    }
    points = {"preFilter": ("First", "Second"), "postFilter": ("Post",)}
    for features, who in ((V128, "first"), (V134, "second"), (V137, "second")):
        table = nodes("node1", "node2")
        fw = framework(table, plugins, points, features)
        state = CycleState("a", 1)
        with pytest.raises(FitError) as raised:
            schedule_pod(fw, state, pod("p"), table, 0, ListSink())
        diagnosis = raised.value.diagnosis
        assert diagnosis.unschedulable_plugins == {who.capitalize()}
        run_post_filter(fw, state, pod("p"), table, diagnosis)
        dot = "." if features is V128 else ""
        assert diagnosis.message() == f"0/2 nodes are available: {who} says no. post says no{dot}"
        post: FakePostFilter = fw.instances["Post"]  # type: ignore[assignment]
        assert {n: s.message for n, s in post.seen[0].items()} == {
            "node1": f"{who} says no",
            "node2": f"{who} says no",
        }


def test_postfilter_reads_the_absent_status_from_v134() -> None:
    """`NodeToStatusReader.Get`: v1.34+ gives nodes a PreFilter result left out the status
    "node(s) didn't satisfy plugin(s) [X]" (UnschedulableAndUnresolvable); v1.28 gives them
    none (preemption then tries them)."""
    plugins = {
        "Narrow": ("FakePreFilter", {"nodes": ["node2"]}),
        "Reject": ("FakeFilter", {"codes": {"node2": "Unschedulable"}}),
        "Post": ("FakePostFilter", {"code": "Unschedulable", "message": "no"}),
    }
    points = {"preFilter": ("Narrow",), "filter": ("Reject",), "postFilter": ("Post",)}
    for features in ALL:
        table = nodes("node1", "node2")
        fw = framework(table, plugins, points, features)
        state = CycleState("a", 1)
        with pytest.raises(FitError) as raised:
            schedule_pod(fw, state, pod("p"), table, 0, ListSink())
        run_post_filter(fw, state, pod("p"), table, raised.value.diagnosis)
        post: FakePostFilter = fw.instances["Post"]  # type: ignore[assignment]
        seen = {n: (s.code, s.message) for n, s in post.seen[0].items()}
        rejected = (Code.UNSCHEDULABLE, "injecting failure for pod p")
        if features is V128:
            assert seen == {"node2": rejected}
        else:
            left_out = "node(s) didn't satisfy plugin(s) [Narrow]"
            assert seen == {
                "node1": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, left_out),
                "node2": rejected,
            }


def test_next_start_index_wraps_over_every_node() -> None:
    """The next attempt starts after the nodes this one processed, modulo every node of the
    snapshot (v1.34+; eventsched has always done so, where v1.28.0 took the modulo over the
    nodes a PreFilter result kept)."""
    plugins = {
        "Narrow": ("FakePreFilter", {"nodes": ["node1", "node2", "node3"]}),
        "EqualPrioritizerPlugin": ("EqualPrioritizer", {}),
    }
    points = {"preFilter": ("Narrow",), "score": ("EqualPrioritizerPlugin",)}
    for features in MODERN:
        table = nodes(*(f"node{i}" for i in range(5)))
        fw = framework(table, plugins, points, features)
        result = schedule_pod(fw, CycleState("a", 1), pod("p"), table, 4, ListSink())
        assert result.next_start_index == (4 + 3) % 5
        assert result.scores is not None and np.array_equal(result.scores.rows, [1, 2, 3])
