"""kube-scheduler v1.28's image states: which nodes hold an image, and each node's snapshot.

upstream `pkg/scheduler/internal/cache/cache.go` keeps `imageStates`, per
image name an `imageState{size, nodes}`: the size the node that created the
state reported, and the names of the nodes listing that name now.
`addNodeImageStates` (AddNode, UpdateNode) inserts the node into the state
of every name its `status.images` lists (creating the state with this node's
`sizeBytes` when there is none) and gives the node its `NodeInfo.ImageStates`:
per name an `ImageStateSummary{Size, NumNodes: len(nodes)}` made by
`createImageStateSummary` at that moment. `removeNodeImageStates` (UpdateNode
before re-adding, RemoveNode) takes the node out of those states and deletes
a state no node holds any more.

A summary is a snapshot: nothing refreshes it but the node's own next add or
update, so a node added before others pulled an image keeps the lower count
(releases after v1.28 refresh it, kubernetes/kubernetes#116938). ImageLocality
scores with these summaries.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from eventsched.model.node import Node

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True, eq=False)
class ImageSummary:
    """One node's `NodeInfo.ImageStates`: each name it lists once (its first listing),
    with the state's size and number of holders as of the node's last add or update."""

    names: tuple[str, ...]
    sizes: IntArray
    num_nodes: IntArray

    def __len__(self) -> int:
        return len(self.names)

    def get(self, name: str) -> tuple[int, int] | None:
        """(Size, NumNodes) of `name`, None when the node does not list it."""
        for i, known in enumerate(self.names):
            if known == name:
                return int(self.sizes[i]), int(self.num_nodes[i])
        return None

    def items(self) -> Iterator[tuple[str, int, int]]:
        for name, size, count in zip(self.names, self.sizes, self.num_nodes, strict=True):
            yield name, int(size), int(count)

    def to_record(self) -> list[list[Any]]:
        return [[name, size, count] for name, size, count in self.items()]

    @classmethod
    def from_record(cls, record: Sequence[Sequence[Any]]) -> ImageSummary:
        return summary_of([(str(n), int(s), int(c)) for n, s, c in record])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ImageSummary):
            return NotImplemented
        return self.to_record() == other.to_record()

    def __hash__(self) -> int:
        return hash(self.names)


def summary_of(entries: Sequence[tuple[str, int, int]]) -> ImageSummary:
    """A summary of (name, size, num_nodes) entries, in that order."""
    if not entries:
        return EMPTY
    return ImageSummary(
        tuple(name for name, _, _ in entries),
        np.fromiter((size for _, size, _ in entries), dtype=np.int64, count=len(entries)),
        np.fromiter((count for _, _, count in entries), dtype=np.int64, count=len(entries)),
    )


EMPTY = ImageSummary((), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


@dataclass(slots=True)
class ImageState:
    """upstream `imageState`: the size its creating node reported, the nodes holding it."""

    size: int
    nodes: set[str]


class ImageStates:
    """upstream `cacheImpl.imageStates`, maintained as nodes are added, updated and removed."""

    def __init__(self) -> None:
        self._states: dict[str, ImageState] = {}

    def __len__(self) -> int:
        return len(self._states)

    def get(self, name: str) -> ImageState | None:
        return self._states.get(name)

    def add_node(self, node: Node) -> ImageSummary:
        """upstream `addNodeImageStates`: hold `node`'s images; its summary as of now."""
        if not node.images:
            return EMPTY
        states = self._states
        found: dict[str, ImageState] = {}
        for image in node.images:
            for name in image.names:
                state = states.get(name)
                if state is None:
                    state = states[name] = ImageState(image.size, {node.name})
                else:
                    state.nodes.add(node.name)
                found.setdefault(name, state)
        return summary_of([(n, s.size, len(s.nodes)) for n, s in found.items()])

    def remove_node(self, node: Node) -> None:
        """upstream `removeNodeImageStates`: `node` no longer holds its images; a state
        no node holds is deleted (a later holder creates it again, with its own size)."""
        states = self._states
        for image in node.images:
            for name in image.names:
                state = states.get(name)
                if state is not None:
                    state.nodes.discard(node.name)
                    if not state.nodes:
                        del states[name]

    def is_current(self, summary: ImageSummary) -> bool:
        """Whether adding the node again would give it the same summary (no holder came
        or went since its snapshot)."""
        states = self._states
        for name, size, count in summary.items():
            state = states.get(name)
            if state is None or state.size != size or len(state.nodes) != count:
                return False
        return True

    def sizes(self) -> dict[str, int]:
        """Every state's size, by name (what a saved view keeps: the holders follow
        from the nodes, the sizes from which node created each state)."""
        return {name: state.size for name, state in self._states.items()}

    def restore_sizes(self, sizes: Mapping[str, int]) -> None:
        """Give the states the sizes `sizes()` saved (states it does not name keep theirs)."""
        for name, size in sizes.items():
            state = self._states.get(name)
            if state is not None:
                state.size = int(size)
