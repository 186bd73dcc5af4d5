"""Selection: the scored nodes ranked, the `scored` record, and the host chosen among the best.

kube-scheduler's `selectHost` (v1.28, v1.34) keeps the highest total and breaks ties by
reservoir sampling; here the tie is broken by the attempt's recorded seed (`tiebreak.draw`:
what numpy's default generator draws from it), so replay chooses the same node. v1.37 takes
the top of a heap instead (sortednodes.py): without extenders no randomness is involved,
and the `Randomizer` of a node an extender scored is drawn from the same recorded seed, so
replay chooses the same node there too. The ranking (a stable sort of the totals) is made
once and read by both the record and the choice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from eventsched.framework.runtime import ScoreTable
from eventsched.framework.scoredrecord import scored_data
from eventsched.framework.sink import DecisionSink
from eventsched.framework.sortednodes import randomizer, select_by_heap
from eventsched.framework.tiebreak import draw
from eventsched.model import Indexes, NodeTable


@dataclass(frozen=True, slots=True)
class Ranking:
    """The scored nodes by total, best first; among equal totals in row order (stable)."""

    #: Positions in the ScoreTable's rows, best first.
    order: Indexes
    best: int
    #: How many share the best total: the first `tied` of `order`.
    tied: int


def rank(scores: ScoreTable) -> Ranking:
    totals = scores.totals
    order = np.argsort(-totals, kind="stable")
    best = int(totals[order[0]])
    return Ranking(order, best, int(np.count_nonzero(totals == best)))


def record_scores(
    sink: DecisionSink,
    table: NodeTable,
    scores: ScoreTable,
    top_k: int,
    skipped: set[str],
    ranking: Ranking | None = None,
) -> None:
    ranking = ranking if ranking is not None else rank(scores)
    order = ranking.order
    top = order[:top_k]
    totals = scores.totals
    names = table.names
    sink.record(
        "scored",
        {
            "nodes": len(scores.rows),
            **scored_data(
                scores.plugins,
                scores.weights,
                [names[r] for r in scores.rows[top].tolist()],
                totals[top].tolist(),
                scores.raw[:, top],
                scores.normalized[:, top],
            ),
            # Score plugins whose PreScore returned Skip this cycle (e.g. NetworkTraffic
            # while Prometheus is down): why a column is missing from this attempt.
            "skipped": sorted(skipped),
            "summary": {
                "max": ranking.best,
                "min": int(totals[order[-1]]),
                # The integers' sum is exact in a float64, as numpy's mean sums them.
                "mean": round(int(totals.sum()) / len(totals), 3),
            },
        },
    )


def select_host(scores: ScoreTable, ranking: Ranking, seed: int, by_heap: bool = False) -> int:
    """Highest total wins. A tie is broken, up to v1.34, by the attempt's recorded seed
    (upstream: reservoir sampling), drawing among the tied rows in row order; from v1.37
    (`by_heap`) as `NewSortedScoredNodes(...).Pop()` breaks it (sortednodes.py)."""
    if ranking.tied == 1:
        return int(scores.rows[ranking.order[0]])
    if by_heap:
        return int(scores.rows[heap_choice(scores, seed)])
    tied = scores.rows[ranking.order[: ranking.tied]]
    return int(tied[draw(seed, ranking.tied)])


def heap_choice(scores: ScoreTable, seed: int) -> int:
    """The position in `scores` v1.37's heap puts on top: the nodes in scoring order, each
    an extender scored with a `Randomizer` drawn from the seed, the others with 0."""
    totals = scores.totals.tolist()
    marked = scores.extender_scored
    if marked is None:
        return select_by_heap(totals)
    randomizers = [randomizer(seed, i) if m else 0 for i, m in enumerate(marked.tolist())]
    return select_by_heap(totals, randomizers)
