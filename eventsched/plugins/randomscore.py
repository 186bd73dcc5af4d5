"""RandomScore (Score): a uniformly random score 0..100 per node, reproducible from the log.

The randomness comes only from the attempt's seed (`state.seed`, recorded in
`attempt_started`), so replaying the attempt gives every node the same score.
A node's score is a hash of (seed, node name), not the n-th draw of a random
stream: it does not depend on the order of the rows, on which other nodes
are feasible, or on the numpy version (numpy's Generator streams carry no
cross-version guarantee, a fixed hash does). Node names are hashed once per
change of the node set (blake2b); per attempt the work is a handful of
vectorized uint64 operations (a SplitMix64 finalizer), microseconds at 5,000 nodes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from eventsched.framework import (
    LEGACY_FEATURES,
    MAX_NODE_SCORE,
    CycleState,
    Features,
    Handle,
    check_args,
)
from eventsched.model import Indexes, IntArray, NodeTable, Pod

NAME = "RandomScore"
_MASK64 = (1 << 64) - 1
_U64 = npt.NDArray[np.uint64]


def name_hash(name: str) -> int:
    """A node name as 64 stable bits (Python's hash() is salted per process, so not that)."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "little")


def _mix(x: _U64) -> _U64:
    """SplitMix64's finalizer over an array: every input bit flips about half the output bits."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def scores_for(seed: int, hashes: _U64) -> IntArray:
    """Score 0..100 for each node hash under `seed`; a pure function of both."""
    key = _mix(np.array([seed & _MASK64], dtype=np.uint64))[0]
    mixed = _mix(hashes ^ key)
    # 101 divides 2**64 with a remainder below 101, so the modulo bias is under 1e-17.
    return (mixed % np.uint64(MAX_NODE_SCORE + 1)).astype(np.int64)


class RandomScore:
    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args)
        self._table: NodeTable | None = None
        self._generation = -1
        self._hashes: _U64 = np.zeros(0, dtype=np.uint64)

    def _row_hashes(self, table: NodeTable) -> _U64:
        """Each row's name hash, recomputed only when the node set changes."""
        if table is not self._table or table.node_generation != self._generation:
            self._hashes = np.fromiter(
                (name_hash(n) for n in table.names), dtype=np.uint64, count=len(table.names)
            )
            self._table = table
            self._generation = table.node_generation
        return self._hashes

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> IntArray:
        return scores_for(state.seed, self._row_hashes(table)[rows])
