"""Each node's reprieve order, kept from one preemption to the next.

`SelectVictimsOnNode` takes every pod of lower priority than the preemptor off a
node, then puts them back one at a time: PodDisruptionBudget-violating pods first,
each group most important first (victims.py). That order depends only on the pods
on the node, the preemptor's priority and the budgets, and preemptors come in
bursts of one priority while most nodes keep their pods between two of them. So
the order is kept per node, with each pod's request vector and their sum (what the
batch dry run takes off the node's row), and made again only when one of the
three has changed (`NodeTable.pods_version` tells for the pods).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from eventsched.framework.preemption.victims import (
    filter_pods_with_pdb_violation,
    importance_order,
)
from eventsched.model import IntArray, NodeTable, Pod
from eventsched.model.disruption import PodDisruptionBudget


@dataclass(frozen=True, slots=True)
class ReprieveOrder:
    """One node's pods of lower priority than `priority`, in the order they are put back."""

    #: `NodeTable.pods_version` of the node's row when this was made.
    version: int
    priority: int
    pdbs: tuple[PodDisruptionBudget, ...]
    pods: tuple[Pod, ...]
    #: How many of `pods`, from the first, a budget does not allow to disrupt.
    violating: int
    #: `NodeTable.request_vector` of each pod, one row per pod (0 rows when none).
    vectors: IntArray
    #: The sum of `vectors`: what taking every one of `pods` off takes off the row.
    total: IntArray

    def current(
        self, version: int, priority: int, pdbs: tuple[PodDisruptionBudget, ...], columns: int
    ) -> bool:
        return (
            self.version == version
            and self.priority == priority
            and self.vectors.shape[1] == columns
            and self.pdbs == pdbs
        )


class ReprieveOrders:
    """`ReprieveOrder`s by node name, made when missing or out of date."""

    def __init__(self) -> None:
        self._by_node: dict[str, ReprieveOrder] = {}

    def of(
        self,
        table: NodeTable,
        row: int,
        priority: int,
        pdbs: tuple[PodDisruptionBudget, ...],
    ) -> ReprieveOrder:
        name = table.names[row]
        version = table.pods_version(row)
        columns = len(table.resource_names)
        kept = self._by_node.get(name)
        if kept is not None and kept.current(version, priority, pdbs, columns):
            return kept
        if len(self._by_node) > 2 * len(table) + 64:
            self._by_node.clear()  # nodes gone since: start again rather than keep them
        order = reprieve_order(table, row, version, priority, pdbs)
        self._by_node[name] = order
        return order


def reprieve_order(
    table: NodeTable,
    row: int,
    version: int,
    priority: int,
    pdbs: tuple[PodDisruptionBudget, ...],
) -> ReprieveOrder:
    """The reprieve order of `row`'s pods below `priority`, made now."""
    potential = [p for p in table.pods[row].values() if p.priority < priority]
    violating, non_violating = filter_pods_with_pdb_violation(importance_order(potential), pdbs)
    pods = (*violating, *non_violating)
    columns = len(table.resource_names)
    if pods:
        vectors = np.array([table.request_vector(p) for p in pods])
    else:
        vectors = np.zeros((0, columns), dtype=np.int64)
    vectors.flags.writeable = False
    total = vectors.sum(axis=0)
    total.flags.writeable = False
    return ReprieveOrder(version, priority, pdbs, pods, len(violating), vectors, total)
