"""Adapt plugins written per node to the batch form the runtime runs."""

from __future__ import annotations

import numpy as np

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.interface import MAX_NODE_SCORE, FilterPlugin, ScorePlugin
from eventsched.framework.status import Code, Status
from eventsched.framework.types import BatchFilterResult, NodeInfo
from eventsched.model import Indexes, IntArray, NodeTable, Pod


def filter_rows(
    plugin: FilterPlugin, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
) -> BatchFilterResult:
    """Call `plugin.filter` on each row; identical statuses share one slot."""
    verdict = np.full(len(rows), -1, dtype=np.int64)
    statuses: list[Status] = []
    slots: dict[tuple[Code, tuple[str, ...], tuple[str, ...]], int] = {}
    for i, row in enumerate(rows):
        status = plugin.filter(state, pod, NodeInfo(table, int(row)))
        if status is None or status.is_success:
            continue
        key = (status.code, status.reasons, status.detail)
        slot = slots.get(key)
        if slot is None:
            slot = slots[key] = len(statuses)
            statuses.append(status)
        verdict[i] = slot
    return BatchFilterResult(verdict, statuses)


def score_rows(
    plugin: ScorePlugin, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
) -> IntArray:
    return np.fromiter(
        (plugin.score(state, pod, NodeInfo(table, int(row))) for row in rows),
        dtype=np.int64,
        count=len(rows),
    )


def default_normalize_score(max_priority: int, reverse: bool, scores: IntArray) -> IntArray:
    """`helper.DefaultNormalizeScore`: scale so the highest becomes max_priority; reverse flips."""
    if len(scores) == 0:
        return scores
    highest = int(scores.max())
    if highest == 0:
        if reverse:
            scores[:] = max_priority
        return scores
    scores[:] = scores * max_priority // highest
    if reverse:
        scores[:] = max_priority - scores
    return scores


def min_max_normalize(scores: IntArray, reverse: bool = False, when_equal: int = 0) -> IntArray:
    """Lowest raw score 0, highest 100 (reverse: the other way round), in place.

    `when_equal` is what every node gets when all raw scores are the same:
    0 when equal means "no preference", 100 when it means "all equally good".
    """
    if len(scores) == 0:
        return scores
    low, high = int(scores.min()), int(scores.max())
    if high == low:
        scores[:] = when_equal
        return scores
    distance = high - scores if reverse else scores - low
    scores[:] = distance * MAX_NODE_SCORE // (high - low)
    return scores
