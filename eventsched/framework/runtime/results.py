"""What the runtime hands back from Filter and Score: arrays over the feasible rows."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from eventsched.framework.status import Status
from eventsched.model import Indexes, IntArray


@dataclass(slots=True)
class Rejection:
    """Rows one Filter plugin rejected: row `rows[i]` failed with `statuses[slots[i]]`.

    Arrays, not an object per node: an unschedulable pod in a 5,000-node
    cluster is 5,000 rejections, and the hot path must not build them one by one.
    """

    plugin: str
    rows: Indexes
    slots: IntArray
    statuses: list[Status]

    def __len__(self) -> int:
        return len(self.rows)

    def keep(self, mask: np.ndarray) -> Rejection:
        return Rejection(self.plugin, self.rows[mask], self.slots[mask], self.statuses)

    def counts(self) -> IntArray:
        return np.bincount(self.slots, minlength=len(self.statuses))

    def status_of(self) -> list[tuple[int, Status]]:
        return [(int(r), self.statuses[int(k)]) for r, k in zip(self.rows, self.slots, strict=True)]


@dataclass(slots=True)
class ScoreTable:
    """Scores of the feasible rows: one line per score plugin, totals weighted and summed."""

    rows: Indexes
    plugins: list[str]
    weights: list[int]
    raw: IntArray  # plugins x rows
    normalized: IntArray  # plugins x rows
    totals: IntArray  # rows: the weights times the normalized scores
    #: The rows an interested extender gave a score (a non-prioritizing one gives every
    #: row 0): v1.37 draws their `Randomizer`. None: no extender scored any row.
    extender_scored: np.ndarray | None = None
