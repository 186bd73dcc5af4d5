"""TaintToleration judges each distinct taint set of the rows once (`NodeTable.taint_sets`).

What it answers must be what judging every node on its own gives (upstream's Filter and
Score run per node), in the same order of statuses as a loop over the rows, while nodes
are added, re-tainted and removed, and for any subset of rows in any order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from eventsched.framework import CycleState
from eventsched.model import NodeTable, Pod
from eventsched.model.taints import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, find_untolerated
from tests.plugins.conftest import make_node, make_pod, plugin

taint = st.fixed_dictionaries(
    {
        "key": st.sampled_from(["gpu", "zone", "spot"]),
        "value": st.sampled_from(["", "a", "b"]),
        "effect": st.sampled_from([NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE]),
    }
)
taint_lists = st.lists(taint, max_size=3)
toleration = st.fixed_dictionaries(
    {
        "key": st.sampled_from(["", "gpu", "zone"]),
        "operator": st.sampled_from(["Equal", "Exists"]),
        "value": st.sampled_from(["", "a"]),
        "effect": st.sampled_from(["", NO_SCHEDULE, PREFER_NO_SCHEDULE]),
    }
)
# (node index, its taints, remove it instead)
changes = st.lists(st.tuples(st.integers(0, 7), taint_lists, st.booleans()), max_size=30)


def table_after(steps: list[tuple[int, list[dict[str, Any]], bool]]) -> NodeTable:
    table = NodeTable([make_node(f"n{i}") for i in range(4)])
    for i, taints, remove in steps:
        if remove:
            table.remove_node(f"n{i}")
        else:
            table.upsert_node(make_node(f"n{i}", taints=taints))
    return table


def expected_filter(pod: Pod, table: NodeTable, rows: list[int]) -> list[str | None]:
    """Upstream's Filter, node by node: the first untolerated NoSchedule/NoExecute taint."""
    reasons: list[str | None] = []
    for row in rows:
        found = find_untolerated(
            table.nodes[row].taints, pod.tolerations, (NO_SCHEDULE, NO_EXECUTE)
        )
        reasons.append(
            None
            if found is None
            else f"node(s) had untolerated taint {{{found.key}: {found.value}}}"
        )
    return reasons


def expected_score(pod: Pod, table: NodeTable, rows: list[int]) -> list[int]:
    """Upstream's Score, node by node: PreferNoSchedule taints the pod does not tolerate."""
    prefer = [t for t in pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE)]
    return [
        sum(
            1
            for taint in table.nodes[row].taints
            if taint.effect == PREFER_NO_SCHEDULE and not any(t.tolerates(taint) for t in prefer)
        )
        for row in rows
    ]


@settings(max_examples=300, deadline=None)
@given(changes, st.lists(toleration, max_size=2), st.randoms(use_true_random=False))
def test_the_verdicts_and_scores_are_those_of_each_node_judged_alone(
    steps: list[tuple[int, list[dict[str, Any]], bool]],
    tolerations: list[dict[str, Any]],
    shuffle: Any,
) -> None:
    table = table_after(steps)
    rows = list(range(len(table)))
    shuffle.shuffle(rows)
    rows = rows[: max(1, len(rows) - 1)] if rows else rows
    pod = make_pod(tolerations=tolerations)
    taints = plugin("TaintToleration", table=table)
    indexes = np.array(rows, dtype=np.intp)

    result = taints.filter_batch(CycleState(), pod, table, indexes)
    got = [None if v < 0 else result.statuses[v].reasons[0] for v in result.verdict.tolist()]
    assert got == expected_filter(pod, table, rows)
    # Statuses in the order their reasons first appear along the rows, each once.
    reasons = [r for r in expected_filter(pod, table, rows) if r is not None]
    assert [s.reasons[0] for s in result.statuses] == list(dict.fromkeys(reasons))
    assert result.all_passed == (not reasons)

    state = CycleState()
    taints.pre_score(state, pod, table, indexes)
    scores = taints.score_batch(state, pod, table, indexes)
    assert scores.tolist() == expected_score(pod, table, rows)
