"""What every preemption PostFilter shares (v1.28 `preemption.Evaluator`): the pods on each
node as the dry run reads them, the error a dry run of only errors returns, and the
`preempted` decision the scheduler acts on."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from eventsched.framework.preemption.candidates import (
    Candidate,
    DryRunResult,
    PotentialNodes,
    fit_error_message,
)
from eventsched.framework.preemption.pick import choose
from eventsched.framework.status import Status
from eventsched.framework.types import PostFilterResult
from eventsched.model import NodeTable, Pod


class NodePods(Mapping[str, Sequence[Pod]]):
    """The pods on each node of the table, read when asked (the dry run visits few nodes)."""

    def __init__(self, table: NodeTable) -> None:
        self._table = table

    def __getitem__(self, name: str) -> Sequence[Pod]:
        row = self._table.row_of(name)
        if row is None:
            raise KeyError(name)
        return list(self._table.pods[row].values())

    def __iter__(self) -> Iterator[str]:
        return iter(self._table.names)

    def __len__(self) -> int:
        return len(self._table)


def aggregate(errors: Sequence[Status]) -> str:
    """`utilerrors.NewAggregate(errs).Error()`: one message alone, several in brackets."""
    messages = [e.message for e in errors]
    return messages[0] if len(messages) == 1 else f"[{', '.join(messages)}]"


NO_CANDIDATE = "no candidate node for preemption"


@dataclass(slots=True)
class Narrowed:
    """What the extenders left of the candidates (framework/extenders/preemption.py), or
    the Error that ended the preemption, and what each extender called did."""

    candidates: tuple[Candidate, ...] = ()
    status: Status = field(default_factory=Status)
    calls: list[dict[str, Any]] = field(default_factory=list)


#: `callExtenders`: the dry run's candidates in, what is left of them out.
Narrow = Callable[[Sequence[Candidate]], Narrowed]


#: The `preempted` event keeps the chosen candidate and at most this many others (a dry
#: run over every node, as CapacityScheduling's, may find thousands); `candidateCount`
#: then says how many there were.
MAX_RECORDED_CANDIDATES = 20


def preempted_record(
    best: Candidate,
    chosen_by: str,
    dry: DryRunResult,
    offset: int,
    wanted: int,
    potential: int,
    lower: Sequence[Pod],
    narrowed: Narrowed | None = None,
) -> dict[str, Any]:
    """`preempted`'s data (events/vocabulary.py); `candidates` are those the choice was
    among (what the extenders left of the dry run's, when they were called)."""
    candidates = narrowed.candidates if narrowed is not None else dry.candidates
    kept = [c for c in candidates if c is best or c.node == best.node][:1]
    kept += [c for c in candidates if c not in kept][:MAX_RECORDED_CANDIDATES]
    kept.sort(key=candidates.index)
    record = {
        "nominatedNodeName": best.node,
        "victims": [
            {
                "uid": v.uid,
                "namespace": v.namespace,
                "name": v.name,
                "priority": v.priority,
                "pdbViolation": i < best.num_pdb_violations,
            }
            for i, v in enumerate(best.victims)
        ],
        "candidates": [
            {
                "node": c.node,
                "victims": [v.uid for v in c.victims],
                "pdbViolations": c.num_pdb_violations,
            }
            for c in kept
        ],
        "chosenBy": chosen_by,
        "offset": offset,
        "numCandidates": wanted,
        "evaluated": len(dry.visited),
        "potentialNodes": potential,
        "lowerNominated": [{"uid": p.uid, "namespace": p.namespace, "name": p.name} for p in lower],
    }
    if len(kept) < len(candidates):
        record["candidateCount"] = len(candidates)
    if narrowed is not None:
        record["extenders"] = narrowed.calls
        record["dryRunCandidates"] = len(dry.candidates)
    return record


def conclude(
    pod: Pod,
    table: NodeTable,
    dry: DryRunResult,
    potential: PotentialNodes,
    offset: int,
    wanted: int,
    narrow: Narrow | None = None,
) -> tuple[PostFilterResult | None, Status]:
    """The end of `Evaluator.Preempt` once the dry run is done: an error when it found only
    errors, the FitError over every node when it found no candidate (the pod's nomination
    cleared); then the extenders narrow the candidates (`narrow`: an Error, or none left,
    keeps the nomination); else the best candidate, its victims, the lower-priority pods
    nominated there and the `preempted` decision."""
    if dry.errors and not dry.candidates:
        return None, Status.as_error(aggregate(dry.errors))
    if not dry.candidates:
        every = {**dry.statuses, **potential.statuses}
        return PostFilterResult(""), Status.unschedulable(fit_error_message(every))
    narrowed = narrow(dry.candidates) if narrow is not None else None
    if narrowed is not None and not narrowed.status.is_success:
        return None, narrowed.status
    choice = choose(narrowed.candidates if narrowed is not None else dry.candidates)
    if choice is None:
        return None, Status.unschedulable(NO_CANDIDATE)
    best = choice.candidate
    lower = tuple(p for p in table.nominated.pods_on(best.node) if p.priority < pod.priority)
    record = preempted_record(
        best, choice.chosen_by, dry, offset, wanted, len(potential.nodes), lower, narrowed
    )
    return PostFilterResult(best.node, best.victims, lower, record, choice.tied), Status()
