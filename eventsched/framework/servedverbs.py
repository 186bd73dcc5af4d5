"""The decisions eventsched serves as kube-scheduler's extender: filter and prioritize a given
set of nodes with one profile.

kube-scheduler has chosen the candidates already (its own filters, its own node count
to find), so every candidate is judged; nothing here picks a node. Like
`schedule_pod`, both are pure given (profile, pod, NodeTable, candidates, seed) and record
their decisions (`prefiltered`, `filtered`, `scored`) through the attempt's state, so
`eventsched replay` runs them again on the rebuilt view and must get the same answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eventsched.framework.algorithm import grouped_rejections
from eventsched.framework.cycle_state import CycleState
from eventsched.framework.nominatedpass import NominatedCount
from eventsched.framework.runtime import Framework, Rejection
from eventsched.framework.selection import record_scores
from eventsched.framework.status import Code, Status
from eventsched.model import NodeTable, Pod

#: `MaxExtenderPriority` of k8s.io/kube-scheduler/extender/v1.
MAX_EXTENDER_PRIORITY = 10
#: Why a candidate eventsched's view does not hold fails (kube-scheduler named a node
#: eventsched has not observed yet, or no longer has).
UNKNOWN_NODE = "node(s) not in eventsched's view of the cluster"


@dataclass(slots=True)
class FilterAnswer:
    """ExtenderFilterResult's content: the candidates that passed, in the order given, and
    why each other one failed (one message per node)."""

    passed: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    unresolvable: dict[str, str] = field(default_factory=dict)
    #: A scheduling error (a plugin failed): kube-scheduler fails the attempt with it.
    error: str = ""


@dataclass(frozen=True, slots=True)
class HostPriority:
    host: str
    score: int


def candidates_record(table: NodeTable, names: Sequence[str]) -> dict[str, Any]:
    """The candidate set as `attempt_started` keeps it: the shorter of the names, or every
    node of the view but some (kube-scheduler usually sends most nodes); names the view does
    not hold are listed apart."""
    known = [n for n in names if table.row_of(n) is not None]
    unknown = sorted(n for n in names if table.row_of(n) is None)
    record: dict[str, Any] = {"count": len(names)}
    given = set(known)
    if len(known) > len(table) // 2 and len(given) == len(known):
        record["allBut"] = sorted(n for n in table.names if n not in given)
    else:
        record["names"] = list(known)
    if unknown:
        record["unknown"] = unknown
    return record


def candidates_from_record(table: NodeTable, record: Mapping[str, Any]) -> list[str]:
    """The names `candidates_record` kept, against the same view (table order for `allBut`)."""
    if "allBut" in record:
        left_out = set(record["allBut"])
        names = [n for n in table.names if n not in left_out]
    else:
        names = list(record.get("names", []))
    return names + list(record.get("unknown", []))


def serve_filter(
    fw: Framework, state: CycleState, pod: Pod, table: NodeTable, names: Sequence[str]
) -> FilterAnswer:
    """PreFilter, then every Filter plugin on every candidate (nominated pods counted)."""
    answer = FilterAnswer()
    for name in names:
        if table.row_of(name) is None:
            answer.failed[name] = UNKNOWN_NODE
    rows = np.array([r for n in names if (r := table.row_of(n)) is not None], dtype=np.intp)
    pre_result, status, plugins = fw.run_pre_filter(state, pod, table)
    _record_prefiltered(fw, state, status, pre_result.node_names if pre_result else None)
    if not status.is_success:
        if not status.is_rejected:
            answer.error = status.message
            return answer
        _record_filtered(state, table, rows[:0], 0, [], status, len(rows))
        _fail_all(answer, table, rows, status)
        return answer
    absent: Status | None = None
    if pre_result is not None and pre_result.node_names is not None:
        inside = np.array([table.names[r] in pre_result.node_names for r in rows], dtype=bool)
        absent = Status.unresolvable(
            f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]"
        )
        _fail_all(answer, table, rows[~inside], absent)
        absent_count = int((~inside).sum())
        rows = rows[inside]
    nominated = NominatedCount(fw, state, pod, table) if table.nominated else None
    if nominated is not None:
        passed, rejections, status = nominated.filter(rows)
    else:
        passed, rejections, status = fw.run_filter(state, pod, table, rows)
    if not status.is_success:
        answer.error = status.message
        return answer
    if absent is not None:
        _record_filtered(state, table, rows, len(passed), rejections, absent, absent_count)
    else:
        _record_filtered(state, table, rows, len(passed), rejections)
    keep = set(passed.tolist())
    answer.passed = [table.names[r] for r in rows.tolist() if r in keep]
    for rejection in rejections:
        for row, rejected in rejection.status_of():
            _fail(answer, table.names[row], rejected)
    return answer


def serve_prioritize(
    fw: Framework, state: CycleState, pod: Pod, table: NodeTable, names: Sequence[str]
) -> list[HostPriority]:
    """PreScore and Score over the candidates; each total mapped onto 0..10 (`extender_scores`).

    PreFilter runs first, as in a scheduling cycle, for the plugins whose Score reads
    what their PreFilter wrote; its verdict is the filter call's business, not this one's.
    """
    known = [n for n in names if table.row_of(n) is not None]
    rows = np.array([table.row_of(n) for n in known], dtype=np.intp)
    if len(rows) == 0:
        return [HostPriority(n, 0) for n in names]
    fw.run_pre_filter(state, pod, table)
    status = fw.run_pre_score(state, pod, table, rows)
    scores = None
    if status.is_success:
        scores, status = fw.run_score(state, pod, table, rows)
    if scores is None or not status.is_success:
        raise ServeError(status.message)
    record_scores(state, table, scores, fw.profile.score_breakdown_top_k, state.skip_score)
    mapped = extender_scores(scores.totals)
    by_name = dict(zip(known, mapped, strict=True))
    return [HostPriority(n, by_name.get(n, 0)) for n in names]


class ServeError(Exception):
    """A plugin failed while prioritizing: kube-scheduler ignores a failed prioritize."""


def extender_scores(totals: np.ndarray) -> list[int]:
    """Totals onto 0..MaxExtenderPriority: floor(total * 10 / highest), 0 when all are 0.

    Only the nodes with the highest total get 10, so the nodes kube-scheduler then chooses
    among (with a large enough weight, or its own scores off) are exactly the ones
    eventsched would have chosen among.
    """
    highest = int(totals.max()) if len(totals) else 0
    if highest <= 0:
        return [0] * len(totals)
    return [int(t) * MAX_EXTENDER_PRIORITY // highest for t in totals.tolist()]


def _fail(answer: FilterAnswer, name: str, status: Status) -> None:
    message = ", ".join(status.reasons) or status.message
    if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        answer.unresolvable[name] = message
    else:
        answer.failed[name] = message


def _fail_all(answer: FilterAnswer, table: NodeTable, rows: np.ndarray, status: Status) -> None:
    for row in rows.tolist():
        _fail(answer, table.names[row], status)


def _record_prefiltered(fw: Framework, state: CycleState, status: Status, node_names: Any) -> None:
    if not fw.plugins_at("preFilter"):
        return
    data: dict[str, Any] = {"skipped": sorted(state.skip_filter)}
    if node_names is not None:
        data["nodeNames"] = sorted(node_names)
    if not status.is_success or status.reasons:
        data["status"] = status.to_record()
    state.record("prefiltered", data, plugin=status.plugin or None)


def _record_filtered(
    state: CycleState,
    table: NodeTable,
    rows: np.ndarray,
    feasible: int,
    rejections: list[Rejection],
    absent: Status | None = None,
    absent_count: int = 0,
) -> None:
    data: dict[str, Any] = {
        "numAllNodes": len(table),
        "numNodesToFind": len(rows) + absent_count,
        "startIndex": 0,
        "evaluated": len(rows) + absent_count,
        "feasible": feasible,
        "rejections": grouped_rejections(table, rejections),
    }
    if absent is not None and absent_count:
        data["absent"] = {"count": absent_count, **absent.to_record()}
    state.record("filtered", data)
