"""Choosing the node to preempt on (v1.28 `Evaluator.SelectCandidate`, `pickOneNodeForPreemption`).

Each criterion scores every remaining candidate and keeps those with the best
score; the first criterion that leaves one candidate decides:

1. fewest PDB violations;
2. lowest priority of the first victim (upstream's `Victims.Pods[0]`, taken as
   the highest-priority victim);
3. smallest sum of victim priorities, each shifted by MaxInt32 + 1 so that
   negative priorities still add up;
4. fewest victims;
5. latest start among the highest-priority victims (`util.GetEarliestPodStartTime`;
   a victim without a start time counts as starting now).

Still tied: the first candidate in the list. Upstream takes the first of a Go map's
keys, i.e. a random one; here the dry run's order decides, which replay reproduces.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from eventsched.framework.preemption.candidates import Candidate
from eventsched.framework.preemption.victims import start_time_ns

_PRIORITY_SHIFT = 2**31  # math.MaxInt32 + 1

Score = Callable[[Candidate], int]


def _fewest_pdb_violations(c: Candidate) -> int:
    return -c.num_pdb_violations


def _lowest_highest_priority(c: Candidate) -> int:
    return -c.victims[0].priority


def _smallest_priority_sum(c: Candidate) -> int:
    return -sum(v.priority + _PRIORITY_SHIFT for v in c.victims)


def _fewest_victims(c: Candidate) -> int:
    return -len(c.victims)


def earliest_start_of_highest_priority(c: Candidate) -> int:
    """`util.GetEarliestPodStartTime`: the earliest start among the victims of the highest priority."""
    top = max(v.priority for v in c.victims)
    return min(start_time_ns(v) for v in c.victims if v.priority == top)


ORDERED_SCORES: tuple[Score, ...] = (
    _fewest_pdb_violations,
    _lowest_highest_priority,
    _smallest_priority_sum,
    _fewest_victims,
    earliest_start_of_highest_priority,
)
#: How `explain` and the `preempted` event name each criterion, in ORDERED_SCORES' order.
CRITERIA = (
    "fewest PDB violations",
    "lowest highest-victim priority",
    "smallest sum of victim priorities",
    "fewest victims",
    "latest start of the highest-priority victims",
)
ONLY_CANDIDATE = "only candidate"
FIRST_OF_TIED = "first of tied"


@dataclass(frozen=True, slots=True)
class Choice:
    """The candidate chosen and the criterion that left it alone (`CRITERIA`, or
    ONLY_CANDIDATE, or FIRST_OF_TIED when every criterion tied)."""

    candidate: Candidate
    chosen_by: str
    #: The nodes of the candidates as good on every criterion (FIRST_OF_TIED), chosen's first.
    tied: tuple[str, ...] = ()


def choose(candidates: Sequence[Candidate]) -> Choice | None:
    """`SelectCandidate`, saying which criterion decided."""
    if not candidates:
        return None
    if len(candidates) == 1:
        return Choice(candidates[0], ONLY_CANDIDATE)
    remaining = list(candidates)
    for score, criterion in zip(ORDERED_SCORES, CRITERIA, strict=True):
        scores = [score(c) for c in remaining]
        best = max(scores)
        remaining = [c for c, s in zip(remaining, scores, strict=True) if s == best]
        if len(remaining) == 1:
            return Choice(remaining[0], criterion)
    return Choice(remaining[0], FIRST_OF_TIED, tuple(c.node for c in remaining))


def select_candidate(candidates: Sequence[Candidate]) -> Candidate | None:
    """`SelectCandidate`: None without candidates, the only one, or the best by ORDERED_SCORES."""
    choice = choose(candidates)
    return None if choice is None else choice.candidate
