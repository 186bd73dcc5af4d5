"""Per-topology-domain sums over the NodeTable, shared by InterPodAffinity's Filter and Score.

Upstream keeps maps of (topology key, value) -> count (filtering) or score
(scoring). Here each key has its nodes' domain codes (`table.label_codes`)
and one array with a slot per domain plus a last slot that stays 0 for nodes
without the key, so a node's value is `values[column[row]]`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from eventsched.model import BoolArray, Indexes, IntArray, NodeTable


@dataclass(frozen=True, slots=True)
class DomainValues:
    """Values per domain of one topology key; `values[-1]` is a 0 for nodes without the key."""

    key: str
    column: IntArray
    values: IntArray

    @property
    def any(self) -> bool:
        return bool(self.values.any())

    def at(self, rows: Indexes) -> tuple[BoolArray, IntArray]:
        """Whether each row's node has the key, and the value of its domain (0 without)."""
        codes = self.column[rows]
        return codes >= 0, self.values[codes]


class DomainTally:
    """Per-key domain sums, filled term by term; `touched` once anything landed in a domain.

    A key gets its (zero) entry as soon as it is named, whether or not a node
    of its domains was added: Filter's affinity check needs every key's column.
    """

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self.entries: dict[str, tuple[IntArray, IntArray]] = {}
        self.touched = False

    def add_pods(self, key: str, pod_rows: BoolArray, weight: int = 1) -> None:
        """Add `weight` per placed pod in `pod_rows` (a mask over the PodTable) to its domain."""
        self.add_nodes(key, self.table.placed.node_rows[pod_rows], weight)

    def add_nodes(self, key: str, node_rows: IntArray, weight: int = 1) -> None:
        """Add `weight` to the domain of each node in `node_rows` (once per entry)."""
        column, values = self._entry(key)
        codes = column[node_rows]
        codes = codes[codes >= 0]
        if len(codes):
            self.touched = True
            values[:-1] += weight * np.bincount(codes, minlength=len(values) - 1)

    def frozen(self) -> tuple[DomainValues, ...]:
        return tuple(
            DomainValues(k, column, values) for k, (column, values) in self.entries.items()
        )

    def _entry(self, key: str) -> tuple[IntArray, IntArray]:
        entry = self.entries.get(key)
        if entry is None:
            codes, column = self.table.label_codes(key)
            entry = self.entries[key] = (column, np.zeros(len(codes) + 1, dtype=np.int64))
        return entry
