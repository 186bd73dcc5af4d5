"""Every pod placed on a node of the NodeTable as one row, labels dictionary-encoded.

Topology spread and inter-pod affinity ask, for each pod being scheduled,
"how many placed pods on each node match this selector (in these
namespaces)?". A Python loop over 10,000 pods per cycle costs milliseconds;
here a label column is an integer array (one code per distinct value, -1
where the pod lacks the key), a selector is a few array comparisons, and the
per-node count is one `bincount` over the pods' node rows.

Rows are kept dense: removing a pod moves the last row into its place. A
label column is built on first use and kept up to date from then on.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import count

import numpy as np
import numpy.typing as npt

from eventsched.model.pod import Pod
from eventsched.model.selectors import DOES_NOT_EXIST, EXISTS, IN, LabelSelector

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

ABSENT = -1
#: The code of a value no pod has: compares unequal to every row.
UNSEEN = -2

#: `PodTable.affinity_version` values, unique across every PodTable of the process.
_VERSIONS = count(1)


class _Codes:
    """One dictionary: value -> code, and back."""

    __slots__ = ("code", "values")

    def __init__(self) -> None:
        self.code: dict[str, int] = {}
        self.values: list[str] = []

    def encode(self, value: str | None) -> int:
        if value is None:
            return ABSENT
        code = self.code.get(value)
        if code is None:
            code = self.code[value] = len(self.values)
            self.values.append(value)
        return code

    def lookup(self, value: str) -> int:
        return self.code.get(value, UNSEEN)


class PodTable:
    def __init__(self) -> None:
        self.pods: list[Pod] = []
        self._row: dict[str, int] = {}
        self._capacity = 0
        self._node_rows = np.zeros(0, dtype=np.int64)
        self._namespaces = _Codes()
        self._namespace_col = np.zeros(0, dtype=np.int64)
        self._deleting = np.zeros(0, dtype=np.bool_)
        self._with_affinity = np.zeros(0, dtype=np.bool_)
        self._labels: dict[str, tuple[_Codes, IntArray]] = {}
        #: Changes whenever the pods with affinity, or the node rows they are on, may have
        #: changed (never for a pod without affinity placed or removed): what inter-pod
        #: affinity derives from those pods alone holds while it is the same.
        self.affinity_version = next(_VERSIONS)

    def __len__(self) -> int:
        return len(self.pods)

    def __iter__(self) -> Iterator[Pod]:
        return iter(self.pods)

    @property
    def deleting(self) -> BoolArray:
        """Rows of pods being deleted (deletionTimestamp set): topology spreading skips them."""
        return self._deleting[: len(self.pods)]

    @property
    def with_affinity(self) -> BoolArray:
        """Rows of pods with podAffinity or podAntiAffinity (kube-scheduler's PodsWithAffinity):
        inter-pod affinity visits only these, so a cluster without any pays nothing per pod."""
        return self._with_affinity[: len(self.pods)]

    @property
    def node_rows(self) -> IntArray:
        """The NodeTable row of each pod's node."""
        return self._node_rows[: len(self.pods)]

    # -- changes (NodeTable calls these) ----------------------------------------------

    def add(self, pod: Pod, node_row: int) -> None:
        row = self._row.get(pod.uid)
        if row is None:
            row = len(self.pods)
            if row == self._capacity:
                self._grow(max(64, self._capacity * 2))
            self.pods.append(pod)
            self._row[pod.uid] = row
        else:
            self.pods[row] = pod
            if self._with_affinity[row]:
                self.affinity_version = next(_VERSIONS)
        self._node_rows[row] = node_row
        self._namespace_col[row] = self._namespaces.encode(pod.namespace)
        self._deleting[row] = pod.deleting
        has_affinity = _has_pod_affinity(pod)
        self._with_affinity[row] = has_affinity
        if has_affinity:
            self.affinity_version = next(_VERSIONS)
        for key, (codes, column) in self._labels.items():
            column[row] = codes.encode(pod.labels.get(key))

    def add_many(self, pods: Sequence[Pod], node_rows: Sequence[int]) -> None:
        """`add` for pods not in the table, each once, column by column (a start places
        every listed pod at once)."""
        first = len(self.pods)
        end = first + len(pods)
        if end > self._capacity:
            capacity = max(64, self._capacity * 2)
            while capacity < end:
                capacity *= 2
            self._grow(capacity)
        for row, pod in enumerate(pods, first):
            self._row[pod.uid] = row
        self.pods.extend(pods)
        self._node_rows[first:end] = node_rows
        self._namespace_col[first:end] = [self._namespaces.encode(p.namespace) for p in pods]
        self._deleting[first:end] = [p.deleting for p in pods]
        with_affinity = [_has_pod_affinity(p) for p in pods]
        self._with_affinity[first:end] = with_affinity
        if any(with_affinity):
            self.affinity_version = next(_VERSIONS)
        for key, (codes, column) in self._labels.items():
            column[first:end] = [codes.encode(p.labels.get(key)) for p in pods]

    def remove(self, uid: str) -> None:
        row = self._row.pop(uid, None)
        if row is None:
            return
        if self._with_affinity[row]:
            self.affinity_version = next(_VERSIONS)
        last = len(self.pods) - 1
        if row != last:
            moved = self.pods[last]
            self.pods[row] = moved
            self._row[moved.uid] = row
            self._node_rows[row] = self._node_rows[last]
            self._namespace_col[row] = self._namespace_col[last]
            self._deleting[row] = self._deleting[last]
            self._with_affinity[row] = self._with_affinity[last]
            for _, column in self._labels.values():
                column[row] = column[last]
        self.pods.pop()

    def node_removed(self, node_row: int) -> None:
        """A node's row left the NodeTable: its pods go, later node rows shift up by one."""
        rows = self.node_rows
        for uid in [self.pods[i].uid for i in np.flatnonzero(rows == node_row).tolist()]:
            self.remove(uid)
        rows = self.node_rows
        rows[rows > node_row] -= 1
        self.affinity_version = next(_VERSIONS)

    def _grow(self, capacity: int) -> None:
        n = len(self.pods)

        def grown(arr: IntArray) -> IntArray:
            new = np.zeros(capacity, dtype=np.int64)
            new[:n] = arr[:n]
            return new

        self._node_rows = grown(self._node_rows)
        self._namespace_col = grown(self._namespace_col)
        deleting = np.zeros(capacity, dtype=np.bool_)
        deleting[:n] = self._deleting[:n]
        self._deleting = deleting
        with_affinity = np.zeros(capacity, dtype=np.bool_)
        with_affinity[:n] = self._with_affinity[:n]
        self._with_affinity = with_affinity
        self._labels = {k: (codes, grown(col)) for k, (codes, col) in self._labels.items()}
        self._capacity = capacity

    # -- columns ----------------------------------------------------------------------

    def label_codes(self, key: str) -> tuple[_Codes, IntArray]:
        entry = self._labels.get(key)
        if entry is None:
            codes = _Codes()
            column = np.full(self._capacity, ABSENT, dtype=np.int64)
            for row, pod in enumerate(self.pods):
                column[row] = codes.encode(pod.labels.get(key))
            entry = self._labels[key] = (codes, column)
        codes, column = entry
        return codes, column[: len(self.pods)]

    def in_namespaces(self, namespaces: frozenset[str] | None) -> BoolArray:
        """Rows of pods in one of `namespaces` (None: every namespace)."""
        n = len(self.pods)
        if namespaces is None:
            return np.ones(n, dtype=np.bool_)
        wanted = [self._namespaces.lookup(ns) for ns in namespaces]
        column = self._namespace_col[:n]
        # The usual case is the pod's own namespace: one comparison, not np.isin's sort.
        return column == wanted[0] if len(wanted) == 1 else np.isin(column, wanted)

    def matching(
        self, selector: LabelSelector, namespaces: frozenset[str] | None = None
    ) -> BoolArray:
        """Rows of pods `selector` selects, restricted to `namespaces` (None: all)."""
        mask = self.in_namespaces(namespaces)
        if selector.nothing:
            mask[:] = False
            return mask
        for req in selector.requirements:
            if not mask.any():
                break
            codes, column = self.label_codes(req.key)
            if req.operator == EXISTS:
                mask &= column != ABSENT
            elif req.operator == DOES_NOT_EXIST:
                mask &= column == ABSENT
            else:
                wanted = [codes.lookup(v) for v in req.values]
                hit = column == wanted[0] if len(wanted) == 1 else np.isin(column, wanted)
                mask &= hit if req.operator == IN else ~hit
        return mask

    def count_per_node(self, mask: BoolArray, num_nodes: int) -> IntArray:
        """How many of the rows in `mask` each node row holds."""
        return np.bincount(self.node_rows[mask], minlength=num_nodes).astype(np.int64)


def _has_pod_affinity(pod: Pod) -> bool:
    affinity = pod.affinity
    return bool(affinity) and bool(affinity.get("podAffinity") or affinity.get("podAntiAffinity"))
