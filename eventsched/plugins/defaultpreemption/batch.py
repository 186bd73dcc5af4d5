"""`DryRunPreemption` over many nodes at once, when only requested-only Filters judge the pod.

`SelectVictimsOnNode` asks, node after node, "does the preemptor fit with these pods
taken off?" (victims.py). When every Filter that runs for the preemptor reads only the
node and the requested/allocatable columns (`RequestedOnlyFilter`: no host ports, no
volumes, no spread or affinity constraints to count), a node's answer depends only on
its own row of `requested`. Then the question can be asked of a whole chunk of nodes
in one batch Filter pass, over a copy of `requested` with the candidate victims'
requests taken off their rows:

1. every lower-priority pod off each node: nodes that still fail are not candidates,
   with that Filter status;
2. then round k puts back each node's k-th pod in reprieve order (PDB-violating first,
   each group most important first): where the preemptor no longer fits, the pod is
   a victim and its requests come off again.

Per node this is the sequential algorithm step for step, so the result is the same.
Pods nominated to a node with the preemptor's priority or higher are in its row from
the start: with requested-only Filters the first of `RunFilterPluginsWithNominatedPods`'
two passes (nominated pods added) decides, as fewer pods never make a node fail.
Chunks follow the dry run's order from the offset, and the stopping rule is applied to
the results in that order, so the candidates, statuses and visited nodes are those
`dry_run_preemption` gives.

Each node's reprieve order comes from `ReprieveOrders` (reprieve.py), kept between
preemptions; the rounds are array operations over the whole chunk (the pods' request
vectors laid out node by round), so no Python runs per node and round.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from eventsched.framework import (
    CycleState,
    FilterRunner,
    Status,
    requested_with_nominated,
)
from eventsched.framework.preemption.candidates import (
    DryRun,
    DryRunResult,
)
from eventsched.framework.preemption.victims import NO_LOWER_PRIORITY_PODS, VictimSelection
from eventsched.model import Indexes, IntArray, NodeTable, Pod
from eventsched.model.disruption import PodDisruptionBudget
from eventsched.plugins.defaultpreemption.reprieve import ReprieveOrder, ReprieveOrders


@dataclass(frozen=True, slots=True)
class _FilterPass:
    """The preemptor's batch Filter pass over rows of the table, with `requested` swapped in."""

    runner: FilterRunner
    state: CycleState
    preemptor: Pod
    table: NodeTable

    def failing_statuses(self, requested: IntArray, rows: Indexes) -> dict[int, Status]:
        """By position in `rows`, the status of each row that fails (its first failing
        plugin's)."""
        with self.table.requested_as(requested):
            _, rejections, status = self.runner.run_filter(
                self.state, self.preemptor, self.table, rows
            )
        if not status.is_success:
            return dict.fromkeys(range(len(rows)), status)
        if not rejections:
            return {}
        position = {int(row): at for at, row in enumerate(rows.tolist())}
        return {position[row]: s for r in rejections for row, s in r.status_of()}

    def fails(self, requested: IntArray, rows: Indexes) -> np.ndarray:
        """For each of `rows`, whether the preemptor fails there."""
        with self.table.requested_as(requested):
            passed, _, status = self.runner.run_filter(self.state, self.preemptor, self.table, rows)
        if not status.is_success:
            return np.ones(len(rows), dtype=np.bool_)
        return ~np.isin(rows, passed)


@dataclass(frozen=True, slots=True)
class _Verdicts:
    """What the rounds found for the judged nodes of a chunk, by position among them."""

    #: The status of each node where the preemptor fails even with every pod off it.
    failed: dict[int, Status]
    #: victim[i, k]: the k-th pod of node i's reprieve order is a victim.
    victim: np.ndarray


def batch_dry_run(
    runner: FilterRunner,
    state: CycleState,
    preemptor: Pod,
    table: NodeTable,
    nodes: Sequence[str],
    pdbs: Sequence[PodDisruptionBudget],
    offset: int,
    wanted: int,
    orders: ReprieveOrders | None = None,
) -> DryRunResult:
    """`dry_run_preemption`'s result, judging `wanted` nodes per batch (`orders` kept
    by the caller between runs, or made for this run alone)."""
    base = requested_with_nominated(table, preemptor)
    orders = orders if orders is not None else ReprieveOrders()
    budgets = tuple(pdbs)
    found = DryRun(wanted)
    ordered = [nodes[(offset + i) % len(nodes)] for i in range(len(nodes))]
    chunk_size = max(wanted, 64)
    check = _FilterPass(runner, state, preemptor, table)
    for start in range(0, len(ordered), chunk_size):
        chunk = ordered[start : start + chunk_size]
        kept = [orders.of(table, table.index[name], preemptor.priority, budgets) for name in chunk]
        selections = _select_chunk(check, chunk, kept, base)
        for name, selection in zip(chunk, selections, strict=True):
            if found.visit(name, selection):
                return found.result()
    return found.result()


def _select_chunk(
    check: _FilterPass,
    chunk: Sequence[str],
    orders: Sequence[ReprieveOrder],
    base: IntArray,
) -> list[VictimSelection]:
    judged = [i for i, order in enumerate(orders) if order.pods]
    out = [NO_LOWER_PRIORITY_PODS] * len(chunk)
    if not judged:
        return out
    rows = np.array([check.table.index[chunk[i]] for i in judged], dtype=np.intp)
    verdicts = _judge(check, [orders[i] for i in judged], rows, base.copy())
    for at, (i, victims) in enumerate(zip(judged, verdicts.victim.tolist(), strict=True)):
        status = verdicts.failed.get(at)
        if status is not None:
            out[i] = VictimSelection((), 0, status)
            continue
        order = orders[i]
        chosen = [k for k, is_victim in enumerate(victims) if is_victim]
        out[i] = VictimSelection(
            tuple(order.pods[k] for k in chosen),
            sum(1 for k in chosen if k < order.violating),
            Status(),
        )
    return out


def _judge(
    check: _FilterPass,
    orders: Sequence[ReprieveOrder],
    rows: Indexes,
    requested: IntArray,
) -> _Verdicts:
    """Every node's victims, in rounds of one batch Filter pass each (`requested` is changed)."""
    counts = np.fromiter((len(o.pods) for o in orders), dtype=np.intp, count=len(orders))
    requested[rows] -= np.array([o.total for o in orders])  # one row per node: no repeats
    failed = check.failing_statuses(requested, rows)
    active = np.ones(len(orders), dtype=np.bool_)
    if failed:
        active[list(failed)] = False
    back = _by_round(orders, counts, requested.shape[1])
    victim = np.zeros(back.shape[:2], dtype=np.bool_)
    for k in range(back.shape[1]):
        step = np.flatnonzero(active & (counts > k))
        if not step.size:
            continue
        step_rows = rows[step]
        requested[step_rows] += back[step, k]
        fails = check.fails(requested, step_rows)
        if fails.any():
            kept = step[fails]
            requested[rows[kept]] -= back[kept, k]
            victim[kept, k] = True
    return _Verdicts(failed, victim)


def _by_round(orders: Sequence[ReprieveOrder], counts: Indexes, columns: int) -> IntArray:
    """back[i, k]: the request vector of the k-th pod in node i's reprieve order (zeros past
    its last pod)."""
    back = np.zeros((len(orders), int(counts.max()), columns), dtype=np.int64)
    node = np.repeat(np.arange(len(orders)), counts)
    first = np.cumsum(counts) - counts
    k = np.arange(int(counts.sum())) - np.repeat(first, counts)
    back[node, k] = np.concatenate([o.vectors for o in orders])
    return back
