"""DefaultPreemption's `GetOffsetAndNumCandidates`: where the dry run starts and how many
candidates it looks for; the offset drawn from the attempt's recorded seed instead of
Go's global `rand.Int31n`."""

from __future__ import annotations

import hashlib

from eventsched.plugins.defaultpreemption.args import DefaultPreemptionArgs


def num_candidates(num_nodes: int, args: DefaultPreemptionArgs) -> int:
    """`calculateNumCandidates`: the percentage of the nodes (rounded down), at least
    minCandidateNodesAbsolute, at most every node."""
    n = num_nodes * args.min_candidate_nodes_percentage // 100
    n = max(n, args.min_candidate_nodes_absolute)
    return min(n, num_nodes)


def preemption_offset(seed: int, num_nodes: int) -> int:
    """Where the dry run starts, 0..num_nodes-1: upstream's `rand.Int31n(numNodes)`.

    Drawn from the attempt's recorded seed (`CycleState.seed`, logged in
    `attempt_started`) so replay starts at the same node; a hash of it rather than
    a numpy stream (no cross-version guarantee), as RandomScore does.
    """
    if num_nodes <= 0:
        return 0
    digest = hashlib.blake2b(f"DefaultPreemption/{seed}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") % num_nodes


def offset_and_num_candidates(
    seed: int, num_nodes: int, args: DefaultPreemptionArgs
) -> tuple[int, int]:
    """`GetOffsetAndNumCandidates`."""
    return preemption_offset(seed, num_nodes), num_candidates(num_nodes, args)
