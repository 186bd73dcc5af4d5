"""The scheduler's view of nodes and of pods placed on them, assumed pods included.

In `model` because replay rebuilds the very same view from the log (audit may
not import the scheduler).

An assumed pod is one the scheduler reserved a node for but whose Binding the
API has not confirmed; it counts toward the node's usage so the next cycle
does not hand out the same room twice (kube-scheduler's `cache.AssumePod`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import structlog

from eventsched.model.node import Node
from eventsched.model.nodetable import NodeTable
from eventsched.model.pod import Pod

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class CacheSizes:
    """kube-scheduler's `scheduler_scheduler_cache_size` types."""

    nodes: int
    pods: int
    assumed_pods: int


@dataclass(slots=True)
class _Placed:
    pod: Pod
    node: str
    assumed: bool
    binding_finished: bool = False


class Cache:
    def __init__(self) -> None:
        self.table = NodeTable()
        self._pods: dict[str, _Placed] = {}
        self._assumed = 0

    # -- nodes ------------------------------------------------------------------

    def upsert_node(self, node: Node) -> bool:
        """Returns True for a node not seen before."""
        new = self.table.row_of(node.name) is None
        self.table.upsert_node(node)
        if new:
            # Pods observed on this node before the node itself now count.
            for placed in self._pods.values():
                if placed.node == node.name:
                    self.table.add_pod(placed.pod, node.name)
        return new

    def remove_node(self, name: str) -> None:
        self.table.remove_node(name)

    def node_names(self) -> list[str]:
        return list(self.table.names)

    # -- pods -------------------------------------------------------------------

    def is_assumed(self, uid: str) -> bool:
        placed = self._pods.get(uid)
        return placed is not None and placed.assumed

    def node_of(self, uid: str) -> str | None:
        placed = self._pods.get(uid)
        return placed.node if placed is not None else None

    def assume(self, pod: Pod, node: str) -> None:
        if pod.uid in self._pods:
            raise ValueError(f"pod {pod.key} ({pod.uid}) is already in the cache")
        assumed = pod.with_node(node)
        self._pods[pod.uid] = _Placed(assumed, node, assumed=True)
        self._assumed += 1
        self.table.add_pod(assumed, node)

    def binding_finished(self, uid: str) -> bool:
        """An assumed pod whose Binding the API accepted (the informer has not shown it yet)."""
        placed = self._pods.get(uid)
        return placed is not None and placed.binding_finished

    def finish_binding(self, uid: str) -> None:
        placed = self._pods.get(uid)
        if placed is not None and placed.assumed:
            placed.binding_finished = True

    def forget(self, uid: str) -> None:
        """Undo an assumption after a failed Reserve, Permit or Binding."""
        placed = self._pods.get(uid)
        if placed is None or not placed.assumed:
            return
        del self._pods[uid]
        self._assumed -= 1
        self.table.remove_pod(uid, placed.node)

    def add_or_update_pod(self, pod: Pod) -> None:
        """An assigned pod as the cluster reports it; confirms an assumption if there was one."""
        placed = self._pods.get(pod.uid)
        if placed is not None:
            if placed.node != pod.node_name:
                log.warning(
                    "pod placed on another node than assumed",
                    pod=pod.key,
                    assumed=placed.node,
                    actual=pod.node_name,
                )
            self.table.remove_pod(pod.uid, placed.node)
            self._assumed -= placed.assumed
        self._pods[pod.uid] = _Placed(pod, pod.node_name, assumed=False)
        self.table.add_pod(pod, pod.node_name)

    def add_pods(self, pods: Sequence[Pod]) -> None:
        """`add_or_update_pod` of each pod, in order. Those not in the cache yet are counted
        on their nodes together (`NodeTable.add_pods`); one that is, or comes again, is
        added by add_or_update_pod after what came before it is counted."""
        fresh: list[Pod] = []
        for pod in pods:
            if pod.uid in self._pods:
                self.table.add_pods(fresh)
                fresh = []
                self.add_or_update_pod(pod)
                continue
            self._pods[pod.uid] = _Placed(pod, pod.node_name, assumed=False)
            fresh.append(pod)
        self.table.add_pods(fresh)

    def remove_pod(self, uid: str) -> Pod | None:
        placed = self._pods.pop(uid, None)
        if placed is None:
            return None
        self._assumed -= placed.assumed
        self.table.remove_pod(uid, placed.node)
        return placed.pod

    def clear(self) -> None:
        """Forget every pod and node, keeping the same table (handles hold it)."""
        for uid in list(self._pods):
            self.remove_pod(uid)
        for name in reversed(self.table.names[:]):
            self.table.remove_node(name)

    def __len__(self) -> int:
        return len(self._pods)

    def sizes(self) -> CacheSizes:
        """Counts kept as the cache changes, so a scrape on another thread reads them
        without walking the pods."""
        return CacheSizes(len(self.table), len(self._pods), self._assumed)

    # -- saving and restoring (a pruned log's base) --------------------------------

    def placements(self) -> Iterator[tuple[Pod, str, bool, bool]]:
        """(pod, node, assumed, binding finished) of every placed pod, in placement order."""
        for placed in self._pods.values():
            yield placed.pod, placed.node, placed.assumed, placed.binding_finished

    def restore(self, pod: Pod, node: str, assumed: bool, binding_finished: bool) -> None:
        """Put back one entry of `placements()` (call after the nodes are in)."""
        self._pods[pod.uid] = _Placed(pod, node, assumed, binding_finished)
        self._assumed += assumed
        self.table.add_pod(pod, node)
