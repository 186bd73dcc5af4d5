"""One scheduling decision over a snapshot: kube-scheduler's `schedulePod`.

Pure given (profile plugins, pod, NodeTable, start index, seed), so the
scheduler runs it live and `eventsched replay` runs it again on a rebuilt
snapshot and must get the same answer. Each stage records its decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.diagnosis import Diagnosis, FitError
from eventsched.framework.extenders.cycle import (
    add_extender_scores,
    has_extender_filters,
    has_extender_prioritizers,
    pass_extenders,
)
from eventsched.framework.nominatedpass import NominatedCount, nominated_node_first
from eventsched.framework.prefilterrecord import prefilter_skips
from eventsched.framework.runtime import Framework, Rejection, ScoreTable
from eventsched.framework.selection import rank, record_scores, select_host
from eventsched.framework.sink import DecisionSink
from eventsched.framework.status import Status
from eventsched.model import Indexes, NodeTable, Pod

MIN_FEASIBLE_NODES_TO_FIND = 100
#: What v1.34 and later put in UnschedulablePlugins when an extender rejected a node.
EXTENDER_NAME = "Extender"
#: `selected`'s tieBreak when v1.37's heap broke a tie (absent: the seed's draw did).
HEAP_TIE_BREAK = "heap"
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
#: Fewest nodes evaluated per filter pass before checking whether enough are feasible.
FILTER_CHUNK = 128


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """kube-scheduler's adaptive percentageOfNodesToScore (50% minus 1% per 125 nodes, at least 5%)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct <= 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    pct = min(pct, 100)
    num = num_all_nodes * pct // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


class SchedulingError(Exception):
    """A plugin or the runtime failed: the scheduler's fault, not the pod's."""

    def __init__(self, status: Status, next_start_index: int) -> None:
        self.status = status
        self.next_start_index = next_start_index
        super().__init__(status.message)


@dataclass(slots=True)
class ScheduleResult:
    node: str
    evaluated: int
    feasible: int
    next_start_index: int
    #: Every feasible node's scores (None: one node was feasible, nothing was scored).
    scores: ScoreTable | None = None
    #: The nodes Filter rejected, and why.
    diagnosis: Diagnosis | None = None


@dataclass(slots=True)
class _Feasible:
    rows: Indexes
    diagnosis: Diagnosis
    processed: int
    num_to_find: int


def schedule_pod(
    fw: Framework,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    start_index: int,
    sink: DecisionSink | None = None,
) -> ScheduleResult:
    """Filter, score and select a node, or raise FitError / SchedulingError.

    `start_index` is where the previous attempt stopped looking; the result,
    FitError and SchedulingError carry the next one (`next_start_index`), as
    `sched.nextStartNodeIndex` rotates upstream.
    """
    if sink is not None:
        state.sink = sink  # the attempt's decisions, and its plugins' inputs, go there
    num_all = len(table)
    if num_all == 0:
        raise SchedulingError(Status.as_error("no nodes available to schedule pods"), start_index)
    found = _find_nodes_that_fit(fw, state, pod, table, start_index % num_all)
    next_start = (start_index + found.processed) % num_all
    diagnosis = found.diagnosis
    feasible = found.rows
    evaluated = len(feasible) + diagnosis.rejected
    if len(feasible) == 0:
        raise FitError(pod, diagnosis, next_start)
    if len(feasible) == 1:
        row = int(feasible[0])
        # The reason ("only one feasible node") follows from the null score; the
        # seed is the attempt's (`attempt_started`): neither is written again.
        state.record("selected", {"score": None}, node=table.names[row])
        return ScheduleResult(table.names[row], evaluated, 1, next_start, None, diagnosis)
    status = fw.run_pre_score(state, pod, table, feasible)
    if not status.is_success:
        _raise_error(status, next_start)
    scores, status = fw.run_score(state, pod, table, feasible)
    if scores is None or not status.is_success:
        _raise_error(status, next_start)
    assert scores is not None
    if fw.extenders:
        scores = add_extender_scores(fw, state, pod, table, scores)
    ranking = rank(scores)
    record_scores(state, table, scores, fw.profile.score_breakdown_top_k, state.skip_score, ranking)
    by_heap = fw.profile.features.since("1.37")
    row = select_host(scores, ranking, state.seed, by_heap)
    selected: dict[str, Any] = {
        "score": ranking.best,
        # The tied nodes are the first tieCount of `scored`'s top (stable order): not
        # written twice.
        "tieCount": ranking.tied,
    }
    if by_heap and ranking.tied > 1:
        # v1.37 broke the tie by its heap's order, not by the seed (sortednodes.py).
        selected["tieBreak"] = HEAP_TIE_BREAK
    state.record("selected", selected, node=table.names[row])
    return ScheduleResult(table.names[row], evaluated, len(feasible), next_start, scores, diagnosis)


def _raise_error(status: Status, next_start: int) -> None:
    raise SchedulingError(status, next_start)


def _find_nodes_that_fit(
    fw: Framework, state: CycleState, pod: Pod, table: NodeTable, start: int
) -> _Feasible:
    num_all = len(table)
    features = fw.profile.features
    modern = features.since("1.34")
    diagnosis = Diagnosis(num_all_nodes=num_all, features=features)
    pre_result, status, plugins = fw.run_pre_filter(state, pod, table)
    diagnosis.unschedulable_plugins = _pre_filter_plugins(status, plugins, modern)
    if fw.plugins_at("preFilter"):
        data: dict[str, Any] = prefilter_skips(fw.plugins_at("preFilter"), state.skip_filter)
        if pre_result is not None and pre_result.node_names is not None:
            data["nodeNames"] = sorted(pre_result.node_names)
        if not status.is_success or status.reasons:
            data["status"] = status.to_record()
        state.record("prefiltered", data, plugin=status.plugin or None)
    if not status.is_success:
        if not status.is_rejected:
            _raise_error(status, start)
        diagnosis.pre_filter_msg = status.message
        diagnosis.absent_status = status
        diagnosis.absent_count = num_all
        _record_filtered(state, table, diagnosis, start, 0, 0, 0)
        return _Feasible(np.zeros(0, dtype=np.intp), diagnosis, 0, 0)

    first = nominated_node_first(fw, state, pod, table)
    if first is not None and first.status.is_success:
        # `evaluateNominatedNode` runs the extenders on that node too.
        kept = np.array([first.row], dtype=np.intp)
        if fw.extenders:
            kept = _pass_extenders(fw, state, pod, table, kept, Diagnosis(num_all), start)
        if len(kept):
            _record_filtered(state, table, diagnosis, start, 1, 0, 1, first.record())
            return _Feasible(kept, diagnosis, 0, 1)

    if pre_result is not None and pre_result.node_names is not None:
        unknown = sorted(n for n in pre_result.node_names if table.row_of(n) is None)
        if unknown and not modern:
            # kube-scheduler v1.28 looks each name up in its snapshot and fails the
            # attempt with the lookup's error (later versions skip the name).
            _raise_error(Status.as_error(f'nodeinfo not found for node name "{unknown[0]}"'), start)
        candidates = np.array(
            sorted(r for n in pre_result.node_names if (r := table.row_of(n)) is not None),
            dtype=np.intp,
        )
        diagnosis.absent_status = Status.unresolvable(
            f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]"
        )
        diagnosis.absent_count = num_all - len(candidates)
        diagnosis.absent_in_message = modern
        order_start = 0
    else:
        candidates = np.arange(num_all, dtype=np.intp)
        order_start = start
    n = len(candidates)
    num_to_find = num_feasible_nodes_to_find(fw.profile.percentage_of_nodes_to_score, n)
    if not (fw.has_score_plugins() or has_extender_filters(fw) or has_extender_prioritizers(fw)):
        num_to_find = 1
    # The candidates from `order_start` on, then those before it (np.roll, in one step).
    order = np.concatenate((candidates[order_start:], candidates[:order_start]))

    nominated = NominatedCount(fw, state, pod, table) if table.nominated else None
    feasible_parts: list[Indexes] = []
    found = 0
    processed = 0
    while processed < n and found < num_to_find:
        need = num_to_find - found
        # A quarter more than still needed: usually one pass finds enough.
        chunk = order[processed : processed + max(FILTER_CHUNK, need + need // 4)]
        if nominated is not None:
            passed, rejections, status = nominated.filter(chunk)
        else:
            passed, rejections, status = fw.run_filter(state, pod, table, chunk)
        if not status.is_success:
            _raise_error(status, start + processed)
        if len(passed) > need:
            # Stop exactly where the need-th feasible node sits, as upstream stops looking.
            last = int(passed[need - 1])
            cut = int(np.flatnonzero(chunk == last)[0]) + 1
            passed = passed[:need]
            chunk = chunk[:cut]
            if rejections:
                # Rows looked at before the cut: a mask over the table (np.isin sorts).
                looked = np.zeros(len(table), dtype=bool)
                looked[chunk] = True
                rejections = [r.keep(looked[r.rows]) for r in rejections]
        feasible_parts.append(passed)
        diagnosis.rejections.extend(rejections)
        found += len(passed)
        processed += len(chunk)
    if len(feasible_parts) == 1:
        feasible = feasible_parts[0]
    else:
        feasible = np.concatenate(feasible_parts) if feasible_parts else np.zeros(0, dtype=np.intp)
    if first is not None and not bool((order[:processed] == first.row).any()):
        # Upstream keeps the nominated node's status from its first evaluation in the
        # diagnosis, which the pass did not reach: it counts as processed.
        diagnosis.rejections.append(first.rejection())
        processed += 1
    for rejection in diagnosis.rejections:
        if len(rejection):
            diagnosis.unschedulable_plugins.add(rejection.plugin)
    if fw.extenders:
        # After the plugins' verdicts; v1.28 names no plugin for an extender's rejections,
        # later versions name "Extender" when one rejected a node (kubernetes#122019).
        before = len(feasible)
        feasible = _pass_extenders(fw, state, pod, table, feasible, diagnosis, start + processed)
        if modern and len(feasible) != before:
            diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
    if modern and diagnosis.absent_status is not None:
        # `NumAllNodes - NodeToStatus.Len()`: every node without a status of its own.
        diagnosis.absent_count = diagnosis.counted_absent
    _record_filtered(
        state,
        table,
        diagnosis,
        order_start,
        num_to_find,
        processed,
        len(feasible),
        first.record() if first is not None else None,
    )
    return _Feasible(feasible, diagnosis, processed, num_to_find)


def _pre_filter_plugins(status: Status, narrowing: set[str], modern: bool) -> set[str]:
    """The plugins PreFilter makes the pod unschedulable by. v1.28 (as eventsched decided):
    the rejecting one, or those whose node sets did not intersect. v1.34 and later: the
    plugins that narrowed the nodes, whatever the outcome, and the rejecting one
    (`Diagnosis.AddPluginStatus`)."""
    if not modern:
        return set(narrowing) if not status.is_success else set()
    plugins = set(narrowing)
    if status.is_rejected and status.plugin:
        plugins.add(status.plugin)
    return plugins


def _pass_extenders(
    fw: Framework,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    rows: Indexes,
    diagnosis: Diagnosis,
    next_start: int,
) -> Indexes:
    """`findNodesThatPassExtenders`; a non-ignorable extender's error fails the attempt."""
    kept, status = pass_extenders(fw, state, pod, table, rows, diagnosis.rejections.append)
    if not status.is_success:
        _raise_error(status, next_start % len(table))
    return kept


def _record_filtered(
    sink: DecisionSink,
    table: NodeTable,
    diagnosis: Diagnosis,
    start: int,
    num_to_find: int,
    processed: int,
    feasible: int,
    nominated: dict[str, Any] | None = None,
) -> None:
    # numAllNodes is attempt_started's `nodes` (the same table): not written again.
    data: dict[str, Any] = {
        "numNodesToFind": num_to_find,
        "startIndex": start,
        "evaluated": processed,
        "feasible": feasible,
        "rejections": grouped_rejections(table, diagnosis.rejections),
    }
    if diagnosis.absent_status is not None and diagnosis.absent_count:
        data["absent"] = {"count": diagnosis.absent_count, **diagnosis.absent_status.to_record()}
    if nominated is not None:
        data["nominatedNode"] = nominated
    sink.record("filtered", data)


def grouped_rejections(table: NodeTable, rejections: list[Rejection]) -> list[dict[str, Any]]:
    """One entry per distinct (plugin, status) with the nodes it rejected, in the order met.

    Nodes rejected for the same reason share an entry: at 5,000 nodes this
    keeps an unschedulable attempt's event a list of names, not of objects.
    """
    names = table.names
    out: list[dict[str, Any]] = []
    for rejection in rejections:
        for k, count in enumerate(rejection.counts()):
            if not count:
                continue
            status = rejection.statuses[k]
            rows = rejection.rows[rejection.slots == k]
            entry: dict[str, Any] = {
                "plugin": rejection.plugin,
                "code": status.code.label,
                "reasons": list(status.reasons),
                "nodes": [names[r] for r in rows.tolist()],
            }
            if status.detail:
                entry["detail"] = list(status.detail)
            out.append(entry)
    return out
