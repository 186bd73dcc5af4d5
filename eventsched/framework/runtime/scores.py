"""A Score plugin's scores, raw and normalized, and the Error for one out of range."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE
from eventsched.framework.runtime.plugins import ScoreEntry
from eventsched.framework.status import Status
from eventsched.model import Indexes, IntArray, NodeTable, Pod


def invalid_score(entries: Sequence[ScoreEntry], normalized: IntArray) -> Status:
    """The Error for the first plugin (in order) with a score outside 0..100, naming its first."""
    for entry, normal in zip(entries, normalized, strict=True):
        bad = normal[(normal < MIN_NODE_SCORE) | (normal > MAX_NODE_SCORE)]
        if len(bad):
            return Status.as_error(
                f"plugin {entry.name!r} returns an invalid score {int(bad[0])}, it should in the "
                f"range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                entry.name,
            )
    raise AssertionError("a score out of range was found, then not found")


def scored(
    entry: ScoreEntry, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
) -> tuple[IntArray, IntArray | None]:
    """One Score plugin's raw scores and, after its NormalizeScore, the normalized ones
    (None when it has no NormalizeScore: they are the raw scores)."""
    raw = np.asarray(entry.run(state, pod, table, rows), dtype=np.int64)
    if entry.normalize is None:
        return raw, None
    return raw, np.asarray(entry.normalize(state, pod, raw.copy(), rows), dtype=np.int64)
