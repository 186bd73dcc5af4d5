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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from eventsched.framework import (
    Code,
    CycleState,
    FilterRunner,
    Status,
    requested_with_nominated,
)
from eventsched.model import IntArray, NodeTable, Pod
from eventsched.model.disruption import PodDisruptionBudget
from eventsched.plugins.defaultpreemption.candidates import (
    DryRun,
    DryRunResult,
)
from eventsched.plugins.defaultpreemption.victims import (
    NO_VICTIMS,
    VictimSelection,
    filter_pods_with_pdb_violation,
    importance_order,
)


@dataclass(slots=True)
class _Node:
    """One node's reprieve order and where its selection stands."""

    name: str
    row: int
    order: list[Pod]
    violating: int
    victims: list[Pod] = field(default_factory=list)
    num_violating: int = 0
    status: Status | None = None


def batch_dry_run(
    runner: FilterRunner,
    state: CycleState,
    preemptor: Pod,
    table: NodeTable,
    nodes: Sequence[str],
    pdbs: Sequence[PodDisruptionBudget],
    offset: int,
    wanted: int,
) -> DryRunResult:
    """`dry_run_preemption`'s result, judging `wanted` nodes per batch."""
    base = requested_with_nominated(table, preemptor)
    found = DryRun(wanted)
    ordered = [nodes[(offset + i) % len(nodes)] for i in range(len(nodes))]
    chunk_size = max(wanted, 64)
    for start in range(0, len(ordered), chunk_size):
        chunk = ordered[start : start + chunk_size]
        selections = _select_chunk(runner, state, preemptor, table, chunk, pdbs, base)
        for name, selection in zip(chunk, selections, strict=True):
            if found.visit(name, selection):
                return found.result()
    return found.result()


def _select_chunk(
    runner: FilterRunner,
    state: CycleState,
    preemptor: Pod,
    table: NodeTable,
    chunk: Sequence[str],
    pdbs: Sequence[PodDisruptionBudget],
    base: IntArray,
) -> list[VictimSelection]:
    out: dict[str, VictimSelection] = {}
    batched: list[_Node] = []
    for name in chunk:
        row = table.index[name]
        potential = [p for p in table.pods[row].values() if p.priority < preemptor.priority]
        if not potential:
            out[name] = VictimSelection(
                (), 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS,))
            )
        else:
            bad, good = filter_pods_with_pdb_violation(importance_order(potential), pdbs)
            batched.append(_Node(name, row, bad + good, len(bad)))
    if batched:
        _judge(runner, state, preemptor, table, batched, base.copy())
    for node in batched:
        out[node.name] = (
            VictimSelection((), 0, node.status)
            if node.status is not None
            else VictimSelection(tuple(node.victims), node.num_violating, Status())
        )
    return [out[name] for name in chunk]


def _judge(
    runner: FilterRunner,
    state: CycleState,
    preemptor: Pod,
    table: NodeTable,
    nodes: list[_Node],
    requested: IntArray,
) -> None:
    """Every node's victims, in rounds of one batch Filter pass each (`requested` is changed)."""
    taken = [(node.row, pod) for node in nodes for pod in node.order]
    np.subtract.at(
        requested,
        np.array([row for row, _ in taken], dtype=np.intp),
        np.stack([table.request_vector(pod) for _, pod in taken]),
    )
    rows = np.array([n.row for n in nodes], dtype=np.intp)
    failed = _filter(runner, state, preemptor, table, requested, rows)
    active: list[_Node] = []
    for node in nodes:
        node.status = failed.get(node.row)
        if node.status is None:
            active.append(node)
    depth = max((len(n.order) for n in active), default=0)
    for k in range(depth):
        step = [n for n in active if k < len(n.order)]
        rows = np.array([n.row for n in step], dtype=np.intp)
        back = np.stack([table.request_vector(n.order[k]) for n in step])
        requested[rows] += back  # one row per node: no repeats within a round
        failed = _filter(runner, state, preemptor, table, requested, rows)
        if not failed:
            continue
        kept = np.array([n.row in failed for n in step])
        requested[rows[kept]] -= back[kept]
        for node in (n for n, k_ in zip(step, kept, strict=True) if k_):
            node.victims.append(node.order[k])
            node.num_violating += k < node.violating


def _filter(
    runner: FilterRunner,
    state: CycleState,
    preemptor: Pod,
    table: NodeTable,
    requested: IntArray,
    rows: np.ndarray,
) -> dict[int, Status]:
    """The rows that fail with `requested`, each with its first failing plugin's status."""
    with table.requested_as(requested):
        _, rejections, status = runner.run_filter(state, preemptor, table, rows)
    if not status.is_success:
        return {int(r): status for r in rows}
    return {row: s for r in rejections for row, s in r.status_of()}
