"""Tainted rows grouped by their taint set: a taint check judges each distinct set once.

Nodes share a few taint sets (a pool's nodes carry the same taints), so TaintToleration
and PodTopologySpread's `nodeTaintsPolicy: Honor` answer per set and spread the answers
over the rows with numpy instead of a Python step per tainted node.
"""

from __future__ import annotations

import numpy as np

from eventsched.model.nodetable import Indexes, NodeTable
from eventsched.model.taints import Taint
from eventsched.model.valueclass import value_class


@value_class
class TaintGroups:
    """The tainted rows among some rows, by taint set."""

    #: Positions (in the rows given) of the rows whose node has taints.
    positions: Indexes
    #: The distinct taint sets among them, in the order the rows first show each.
    sets: list[tuple[Taint, ...]]
    #: For each position, the index of its set in `sets`.
    which: Indexes

    def spread(self, answers: list[int] | list[bool], out: np.ndarray) -> None:
        """`out[position] = answers[its set]` for every tainted position."""
        if len(self.positions):
            out[self.positions] = np.asarray(answers, dtype=out.dtype)[self.which]


def group_by_taint_set(table: NodeTable, rows: Indexes | None = None) -> TaintGroups:
    """The tainted rows among `rows` (every row when None) grouped by taint set."""
    codes = table.taint_sets if rows is None else table.taint_sets[rows]
    positions = np.flatnonzero(codes >= 0)
    if len(positions) == 0:
        return TaintGroups(positions, [], positions)
    distinct, first, which = np.unique(codes[positions], return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty(len(order), dtype=np.intp)
    rank[order] = np.arange(len(order))
    sets = [table.taints_of(int(code)) for code in distinct[order].tolist()]
    return TaintGroups(positions, sets, rank[which])
