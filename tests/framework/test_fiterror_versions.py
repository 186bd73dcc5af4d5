"""`FitError.Error()` as each version words it (eventsched/framework/diagnosis.py).

From pkg/scheduler/framework/types_test.go `TestFitError_Error`, the v1.28.0 table and the
v1.37.2 one (v1.34.4's is v1.37's): the same diagnoses, the expected message per version.
The v1.37 table gives a PreFilter failure a status on every node; eventsched keeps it as
the absent status (every node's), which is what the message reads.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from eventsched.framework import Diagnosis, Features, Status
from eventsched.framework.runtime import Rejection
from eventsched.model import Node, NodeTable

V128, V134, V137 = Features(), Features(version="1.34"), Features(version="1.37")
FILTER_1 = "Node(s) failed Filter plugin FalseFilter-1"
FILTER_2 = "Node(s) failed Filter plugin FalseFilter-2"
PREFILTER = "Node(s) failed PreFilter plugin FalsePreFilter"
POSTFILTER = "Error running PostFilter plugin FailedPostFilter"


def diagnosis(
    features: Features,
    statuses: Mapping[str, Status],
    num_all: int = 3,
    pre_filter_msg: str = "",
    post_filter_msg: str = "",
    absent: Status | None = None,
    left_out: bool = False,
) -> Diagnosis:
    """A Diagnosis over nodes node1..node<num_all>, `statuses` the rejected ones';
    `absent` the others' (`left_out`: by a PreFilter result, as schedule_pod marks it)."""
    table = NodeTable([Node(f"node{i}", {"cpu": 1000}) for i in range(1, num_all + 1)])
    distinct = list(dict.fromkeys(statuses.values()))
    rows = np.array([table.row_of(n) for n in statuses], dtype=np.intp)
    slots = np.array([distinct.index(s) for s in statuses.values()], dtype=np.intp)
    rejections = [Rejection("FalseFilter", rows, slots, distinct)] if statuses else []
    return Diagnosis(
        num_all_nodes=num_all,
        rejections=rejections,
        absent_status=absent,
        absent_count=num_all - len(statuses) if absent is not None else 0,
        pre_filter_msg=pre_filter_msg,
        post_filter_msg=post_filter_msg,
        features=features,
        absent_in_message=not left_out or features.since("1.34"),
    )


ONE_FILTER = {n: Status.unschedulable(FILTER_1) for n in ("node1", "node2", "node3")}
TWO_FILTERS = {**ONE_FILTER, "node3": Status.unschedulable(FILTER_2)}

# (upstream case name, statuses, num_all, PreFilter msg, PostFilter msg, v1.28, v1.34+)
CASES = [
    (
        "nodes failed Prefilter plugin",
        {},
        3,
        PREFILTER,
        "",
        f"0/3 nodes are available: {PREFILTER}.",
        f"0/3 nodes are available: {PREFILTER}.",
    ),
    (
        "nodes failed Prefilter plugin and the preemption also failed",
        {},
        3,
        PREFILTER,
        POSTFILTER,
        f"0/3 nodes are available: {PREFILTER}. {POSTFILTER}.",
        f"0/3 nodes are available: {PREFILTER}. {POSTFILTER}",
    ),
    (
        "nodes failed one Filter plugin with an empty PostFilterMsg",
        ONE_FILTER,
        3,
        "",
        "",
        f"0/3 nodes are available: 3 {FILTER_1}.",
        f"0/3 nodes are available: 3 {FILTER_1}.",
    ),
    (
        "nodes failed one Filter plugin with a non-empty PostFilterMsg",
        ONE_FILTER,
        3,
        "",
        POSTFILTER,
        f"0/3 nodes are available: 3 {FILTER_1}. {POSTFILTER}.",
        f"0/3 nodes are available: 3 {FILTER_1}. {POSTFILTER}",
    ),
    (
        "nodes failed two Filter plugins with an empty PostFilterMsg",
        TWO_FILTERS,
        3,
        "",
        "",
        f"0/3 nodes are available: 1 {FILTER_2}, 2 {FILTER_1}.",
        f"0/3 nodes are available: 1 {FILTER_2}, 2 {FILTER_1}.",
    ),
    (
        "nodes failed two Filter plugins with a non-empty PostFilterMsg",
        TWO_FILTERS,
        3,
        "",
        POSTFILTER,
        f"0/3 nodes are available: 1 {FILTER_2}, 2 {FILTER_1}. {POSTFILTER}.",
        f"0/3 nodes are available: 1 {FILTER_2}, 2 {FILTER_1}. {POSTFILTER}",
    ),
    (
        "failed to Permit on node",
        {"node1": Status.unschedulable("Node failed Permit plugin Permit-1")},
        1,
        "",
        "",
        "0/1 nodes are available: 1 Node failed Permit plugin Permit-1.",
        "0/1 nodes are available: 1 Node failed Permit plugin Permit-1.",
    ),
]


@pytest.mark.parametrize(
    ("case", "statuses", "num_all", "pre", "post", "want_128", "want_134"),
    CASES,
    ids=[c[0] for c in CASES],
)
def test_fit_error_error(
    case: str,
    statuses: dict[str, Status],
    num_all: int,
    pre: str,
    post: str,
    want_128: str,
    want_134: str,
) -> None:
    # from pkg/scheduler/framework/types_test.go: TestFitError_Error
    absent = Status.unschedulable(pre) if pre else None
    for features, want in ((V128, want_128), (V134, want_134), (V137, want_134)):
        got = diagnosis(features, statuses, num_all, pre, post, absent).message()
        assert got == want, features.version


def test_nodes_a_prefilter_result_left_out_count_from_v134() -> None:
    # from pkg/scheduler/schedule_one_test.go TestSchedulerSchedulePod: "test some nodes
    # are filtered out by prefilter plugin and other are filtered out by filter plugin"
    # (v1.28: those nodes are not mentioned).
    absent = Status.unresolvable("node(s) didn't satisfy plugin(s) [FakePreFilter]")
    statuses = {"node2": Status.unschedulable("injecting failure for pod test-prefilter")}
    got = {
        f.version: diagnosis(f, statuses, 2, absent=absent, left_out=True).message()
        for f in (V128, V134, V137)
    }
    assert got["1.28"] == "0/2 nodes are available: 1 injecting failure for pod test-prefilter."
    want = (
        "0/2 nodes are available: 1 injecting failure for pod test-prefilter, "
        "1 node(s) didn't satisfy plugin(s) [FakePreFilter]."
    )
    assert got["1.34"] == got["1.37"] == want


def test_a_prefilter_message_replaces_the_histogram_and_no_dot_follows_preemption() -> None:
    """v1.34+: "0/N nodes are available: <PreFilter msg>." and, after a preemption that
    failed with its own FitError, a single "." where v1.28 wrote "..": the example of
    /work/notes/v137-diff.md §9.2, with the histogram of v1.37's messages."""
    statuses = {
        "node1": Status.unschedulable("Insufficient cpu"),
        "node2": Status.unschedulable("node(s) had untolerated taint(s)"),
        "node3": Status.unschedulable("node(s) had untolerated taint(s)"),
    }
    post = (
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling."
    )
    head = "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s)."
    assert diagnosis(V137, statuses, post_filter_msg=post).message() == f"{head} {post}"
    assert diagnosis(V128, statuses, post_filter_msg=post).message() == f"{head} {post}."
