"""kube-scheduler v1.37's host choice: `framework.NewSortedScoredNodes(priorityList).Pop()`.

v1.37 (`framework/sorted_nodes.go`) puts the scored nodes in a Go
`container/heap` max-heap ordered by total score, then by `Randomizer`, and takes the
top. `Randomizer` is `rand.Int()` for the nodes an extender scored and 0 for every
other node, so without extenders a tie is broken by where the heap's construction
leaves the tied nodes: deterministic, a function of the order the nodes were scored
in (the Filter pass's order, from `nextStartNodeIndex`), not "the first" and not random.
E.g. totals [1, 0, 2, 1, 0, 2, 1, 2, 0] give index 7, not 2.

This is Go's `heap.Init` / `heap.Pop` step for step (`down` with its strict `Less`), so
the same list gives the same node; tests/framework/test_sortednodes.py checks it against
upstream's tables and against lists Go's own heap ordered. Keys are one int per node:
total * 2**63 + randomizer (totals are never negative, randomizers are below 2**63).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

#: `Randomizer` values are Go's `rand.Int()`: non-negative 63-bit integers.
RANDOMIZER_BITS = 63


def node_key(total: int, randomizer: int = 0) -> int:
    """One int ordering nodes as `nodeScoreHeap.Less` does (greater is better)."""
    return (total << RANDOMIZER_BITS) | randomizer


class SortedScoredNodes:
    """`NewSortedScoredNodes` over `keys` (`node_key` of each node, in scoring order):
    `pop()` gives the position in `keys` of the best node left, as Go's heap pops it."""

    __slots__ = ("_heap", "_keys")

    def __init__(self, keys: Sequence[int]) -> None:
        self._keys = keys
        self._heap = list(range(len(keys)))
        n = len(self._heap)
        for i in range(n // 2 - 1, -1, -1):
            self._down(i, n)

    def __len__(self) -> int:
        return len(self._heap)

    def top(self) -> int:
        """What `pop()` would give, without taking it."""
        return self._heap[0]

    def pop(self) -> int:
        """`heap.Pop`: swap the root with the last element, sift down, take the last."""
        heap = self._heap
        n = len(heap) - 1
        heap[0], heap[n] = heap[n], heap[0]
        self._down(0, n)
        return heap.pop()

    def _down(self, i: int, n: int) -> None:
        """container/heap's `down` with `Less(a, b) = key[a] > key[b]`."""
        heap, keys = self._heap, self._keys
        while True:
            left = 2 * i + 1
            if left >= n:
                return
            best = left
            right = left + 1
            if right < n and keys[heap[right]] > keys[heap[left]]:
                best = right
            if not keys[heap[best]] > keys[heap[i]]:
                return
            heap[i], heap[best] = heap[best], heap[i]
            i = best


def select_by_heap(totals: Sequence[int], randomizers: Sequence[int] | None = None) -> int:
    """The position of the node v1.37 chooses among nodes with these totals (and
    randomizers; all 0 when None)."""
    if randomizers is None:
        keys = [node_key(int(t)) for t in totals]
    else:
        keys = [node_key(int(t), int(r)) for t, r in zip(totals, randomizers, strict=True)]
    return SortedScoredNodes(keys).top()


def randomizer(seed: int, position: int) -> int:
    """The `Randomizer` (upstream: `rand.Int()`) of the `position`-th scored node that an
    extender scored: drawn from the attempt's recorded seed, so replay draws the same."""
    digest = hashlib.blake2b(f"Randomizer/{seed}/{position}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> (64 - RANDOMIZER_BITS)
