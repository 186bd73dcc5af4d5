"""A columnar view of every node and what is placed on it.

Filter and Score plugins run over all nodes at once as numpy arrays; a
per-node Python loop over 5,000 nodes costs tens of milliseconds, an array
operation tens of microseconds. The table is mutated only between
scheduling cycles, so during a cycle it is the cycle's snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager

import numpy as np
import numpy.typing as npt

from eventsched.model.imagestates import EMPTY, ImageStates, ImageSummary
from eventsched.model.namespaceusage import NamespaceUsage
from eventsched.model.node import Node
from eventsched.model.nominator import Nominator
from eventsched.model.objects import ClusterObjects
from eventsched.model.pod import Pod
from eventsched.model.podtable import PodTable
from eventsched.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from eventsched.model.taints import Taint

BASE_RESOURCES = (CPU, MEMORY, PODS, EPHEMERAL_STORAGE)

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
Indexes = npt.NDArray[np.intp]


class NodeTable:
    """Nodes as rows, resources as columns; pods are kept per row for plugins that need them."""

    def __init__(self, nodes: Iterable[Node] = ()) -> None:
        self.resource_names: list[str] = list(BASE_RESOURCES)
        self._column: dict[str, int] = {r: i for i, r in enumerate(self.resource_names)}
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.nodes: list[Node] = []
        self.pods: list[dict[str, Pod]] = []
        #: Per row, the `generation` at which its pods last changed (`pods_version`).
        self._pods_version: list[int] = []
        #: kube-scheduler's image states, and each row's snapshot of them (ImageLocality).
        self.images = ImageStates()
        self.image_summaries: list[ImageSummary] = []
        self._capacity = 0
        self._n = 0
        self._alloc = np.zeros((0, len(self.resource_names)), dtype=np.int64)
        self._req = np.zeros((0, len(self.resource_names)), dtype=np.int64)
        self._non_zero = np.zeros((0, 2), dtype=np.int64)
        self._unschedulable = np.zeros(0, dtype=np.bool_)
        #: Per row, the code of its node's taints in `_taint_sets` (-1: none): nodes share a
        #: few taint sets, and a taint check judges each once (TaintToleration).
        self._taint_set = np.zeros(0, dtype=np.int64)
        self._taint_sets: list[tuple[Taint, ...]] = []
        self._taint_set_codes: dict[tuple[Taint, ...], int] = {}
        #: Bumped on every change, so plugins may cache what they derive from the table.
        self.generation = 0
        #: Bumped only when nodes change (not pods), for caches of node labels.
        self.node_generation = 0
        self._label_columns: dict[str, npt.NDArray[np.object_]] = {}
        self._label_codes: dict[str, tuple[dict[str, int], IntArray]] = {}
        #: Every placed pod as a row, for selectors over pods (spread, pod affinity).
        self.placed = PodTable()
        #: Namespaces and the workloads that select pods (pod affinity, default spreading).
        self.objects = ClusterObjects()
        #: Pods nominated to nodes by preemption (Filter counts them, see nominator.py).
        self.nominated = Nominator()
        #: `request_vector`'s answers: (the pod it was for, its vector), by uid.
        self._vectors: dict[str, tuple[Pod, IntArray]] = {}
        #: Per namespace, what its placed pods request; kept once a plugin asked for it.
        self._namespace_usage: NamespaceUsage | None = None
        for node in nodes:
            self.upsert_node(node)

    # -- columns ----------------------------------------------------------------

    def __len__(self) -> int:
        return self._n

    @property
    def allocatable(self) -> IntArray:
        return self._alloc[: self._n]

    @property
    def requested(self) -> IntArray:
        return self._req[: self._n]

    @property
    def non_zero_requested(self) -> IntArray:
        """CPU and memory as scoring counts them (columns 0 and 1)."""
        return self._non_zero[: self._n]

    @property
    def unschedulable(self) -> BoolArray:
        return self._unschedulable[: self._n]

    @property
    def taint_sets(self) -> IntArray:
        """Per row, the code of its node's taints (`taints_of`), -1 for a node without any:
        the rows at 0 or more are the only ones taint checks must visit."""
        return self._taint_set[: self._n]

    def taints_of(self, code: int) -> tuple[Taint, ...]:
        """The taints a `taint_sets` code stands for."""
        return self._taint_sets[code]

    def _taint_set_code(self, taints: tuple[Taint, ...]) -> int:
        if not taints:
            return -1
        code = self._taint_set_codes.get(taints)
        if code is None:
            code = self._taint_set_codes[taints] = len(self._taint_sets)
            self._taint_sets.append(taints)
        return code

    def column(self, resource: str) -> int | None:
        return self._column.get(resource)

    def ensure_column(self, resource: str) -> int:
        col = self._column.get(resource)
        if col is not None:
            return col
        self.resource_names.append(resource)
        col = len(self.resource_names) - 1
        self._column[resource] = col
        extra = np.zeros((self._alloc.shape[0], 1), dtype=np.int64)
        self._alloc = np.hstack([self._alloc, extra])
        self._req = np.hstack([self._req, extra.copy()])
        return col

    # -- nodes --------------------------------------------------------------------

    def node(self, row: int) -> Node:
        return self.nodes[row]

    def row_of(self, name: str) -> int | None:
        return self.index.get(name)

    def pods_version(self, row: int) -> int:
        """Changes whenever the pods on `row` do, and is never the same for two states of
        any row (it is the `generation` of the change): a cache of what a row's pods give
        may keep it to tell whether it is current."""
        return self._pods_version[row]

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def upsert_node(self, node: Node) -> int:
        for resource in node.allocatable:
            self.ensure_column(resource)
        row = self.index.get(node.name)
        if row is None:
            row = self._append_row(node)
        else:
            self.images.remove_node(self.nodes[row])
            self.nodes[row] = node
        self.image_summaries[row] = self.images.add_node(node)
        alloc = self._alloc[row]
        alloc[:] = 0
        for resource, amount in node.allocatable.items():
            alloc[self._column[resource]] = amount
        self._unschedulable[row] = node.unschedulable
        self._taint_set[row] = self._taint_set_code(node.taints)
        self._nodes_changed()
        return row

    def image_summary_current(self, name: str) -> bool:
        """Whether node `name`'s image summary is what adding it again would give it
        (True for a node not in the table)."""
        row = self.index.get(name)
        return row is None or self.images.is_current(self.image_summaries[row])

    def restore_images(
        self, sizes: Mapping[str, int], summaries: Mapping[str, ImageSummary]
    ) -> None:
        """Put back the image states' sizes and the nodes' summaries a saved view kept.

        Re-adding saved nodes in row order gives each node the counts of the nodes
        before it and each state the size of its first holder in row order; the log
        may have said otherwise (a node updated later, a creating node removed since).
        """
        self.images.restore_sizes(sizes)
        for name, summary in summaries.items():
            row = self.index.get(name)
            if row is not None:
                self.image_summaries[row] = summary
        self._nodes_changed()

    def _nodes_changed(self) -> None:
        self.generation += 1
        self.node_generation += 1
        self._label_columns.clear()
        self._label_codes.clear()

    def label_codes(self, key: str) -> tuple[dict[str, int], IntArray]:
        """Label `key` dictionary-encoded: value -> code, and each node's code (-1 where absent).

        Cached until nodes change. Topology domains are these codes, so grouping
        nodes by zone is `bincount` over an integer column.
        """
        entry = self._label_codes.get(key)
        if entry is None:
            codes: dict[str, int] = {}
            column = np.full(self._n, -1, dtype=np.int64)
            for row, node in enumerate(self.nodes):
                value = node.labels.get(key)
                if value is not None:
                    column[row] = codes.setdefault(value, len(codes))
            entry = self._label_codes[key] = (codes, column)
        return entry

    def label_values(self, key: str) -> npt.NDArray[np.object_]:
        """Every node's value of label `key` (None where absent), cached until nodes change.

        Selector matching then runs as array comparisons instead of a dict lookup per node.
        """
        column = self._label_columns.get(key)
        if column is None:
            column = np.array([n.labels.get(key) for n in self.nodes], dtype=object)
            self._label_columns[key] = column
        return column

    @property
    def namespace_usage(self) -> NamespaceUsage:
        """What each namespace's placed pods request (CapacityScheduling); kept up to date
        from the first time it is asked for."""
        if self._namespace_usage is None:
            self._namespace_usage = NamespaceUsage(p for pods in self.pods for p in pods.values())
        return self._namespace_usage

    def remove_node(self, name: str) -> list[Pod]:
        """Drop a node's row; returns the pods that were on it. Later rows shift up by one."""
        row = self.index.pop(name, None)
        if row is None:
            return []
        pods = list(self.pods[row].values())
        if self._namespace_usage is not None:
            for pod in pods:
                self._namespace_usage.add(pod, -1)
        self.images.remove_node(self.nodes[row])
        n = self._n
        for arr in (self._alloc, self._req, self._non_zero, self._unschedulable, self._taint_set):
            arr[row : n - 1] = arr[row + 1 : n]
        del self.names[row]
        del self.nodes[row]
        del self.pods[row]
        del self._pods_version[row]
        del self.image_summaries[row]
        self._n -= 1
        self.placed.node_removed(row)
        for later in range(row, self._n):
            self.index[self.names[later]] = later
        self._nodes_changed()
        return pods

    def _append_row(self, node: Node) -> int:
        if self._n == self._capacity:
            self._grow(max(16, self._capacity * 2))
        row = self._n
        self._n += 1
        self.names.append(node.name)
        self.index[node.name] = row
        self.nodes.append(node)
        self.pods.append({})
        self.generation += 1
        self._pods_version.append(self.generation)
        self.image_summaries.append(EMPTY)
        self._req[row] = 0
        self._non_zero[row] = 0
        return row

    def _grow(self, capacity: int) -> None:
        def grown(arr: np.ndarray) -> np.ndarray:
            new = np.zeros((capacity, *arr.shape[1:]), dtype=arr.dtype)
            new[: self._n] = arr[: self._n]
            return new

        self._alloc = grown(self._alloc)
        self._req = grown(self._req)
        self._non_zero = grown(self._non_zero)
        self._unschedulable = grown(self._unschedulable)
        self._taint_set = grown(self._taint_set)
        self._capacity = capacity

    # -- pods ---------------------------------------------------------------------

    def add_pod(self, pod: Pod, node_name: str) -> bool:
        """Count a pod's requests on a node; False when the node is unknown."""
        row = self.index.get(node_name)
        if row is None:
            return False
        if pod.uid in self.pods[row]:
            self._subtract(row, self.pods[row][pod.uid])
        self.pods[row][pod.uid] = pod
        self.placed.add(pod, row)
        self._add(row, pod, 1)
        self._pods_changed(row)
        return True

    def add_pods(self, pods: Sequence[Pod]) -> None:
        """`add_pod` of each pod on its node, in order, counted column by column: a start
        places every listed pod at once. For pods not counted yet, each once (the cache
        adds any other one by one); a pod on an unknown node is left out, as add_pod
        leaves it."""
        fresh: list[Pod] = []
        rows: list[int] = []
        for pod in pods:
            row = self.index.get(pod.node_name)
            if row is not None:
                self.pods[row][pod.uid] = pod
                fresh.append(pod)
                rows.append(row)
        self.placed.add_many(fresh, rows)
        self._count(fresh, rows)

    def _count(self, pods: Sequence[Pod], rows: Sequence[int]) -> None:
        """`_add(row, pod, 1)` and `_pods_changed(row)` of each pod and its row."""
        cells = [(row, self.ensure_column(r), n) for pod, row in zip(pods, rows, strict=True)
                 for r, n in pod.requests.items()]  # fmt: skip
        if self._namespace_usage is not None:
            for pod in pods:
                self._namespace_usage.add(pod, 1)
        for row in rows:
            self._pods_changed(row)
        if not pods:
            return
        at = np.asarray(rows, dtype=np.intp)
        if cells:
            cell_rows, cell_cols, amounts = zip(*cells, strict=True)
            np.add.at(self._req, (np.asarray(cell_rows), np.asarray(cell_cols)), amounts)
        np.add.at(self._req[:, self._column[PODS]], at, 1)
        np.add.at(self._non_zero, at, np.asarray([p.non_zero for p in pods], dtype=np.int64))

    def remove_pod(self, pod_uid: str, node_name: str) -> Pod | None:
        row = self.index.get(node_name)
        if row is None:
            return None
        pod = self.pods[row].pop(pod_uid, None)
        if pod is not None:
            self.placed.remove(pod_uid)
            self._subtract(row, pod)
            self._pods_changed(row)
        return pod

    @contextmanager
    def changed_pods(
        self, node_name: str, removed: Sequence[Pod] = (), added: Sequence[Pod] = ()
    ) -> Iterator[int]:
        """Node `node_name` (its row is yielded) without `removed` and with `added`, until the
        block ends; then every column and the node's pod order are as before.

        Preemption's what-ifs (kube-scheduler clones a NodeInfo, removes victims, adds
        nominated pods) run the Filter plugins on the changed row in between.
        """
        row = self.index[node_name]
        before = dict(self.pods[row])
        added = [pod for pod in added if pod.uid not in before]
        for pod in removed:
            self.remove_pod(pod.uid, node_name)
        for pod in added:
            self.add_pod(pod, node_name)
        try:
            yield row
        finally:
            for pod in added:
                self.remove_pod(pod.uid, node_name)
            for pod in removed:
                if pod.uid in before:
                    self.add_pod(pod, node_name)
            pods = self.pods[row]
            pods.clear()
            pods.update(before)
            self._pods_changed(row)

    def request_vector(self, pod: Pod) -> IntArray:
        """What placing `pod` adds to a row of `requested` (resources without a column, which
        no node has, left out)."""
        cached = self._vectors.get(pod.uid)
        if cached is not None and cached[0] is pod and len(cached[1]) == len(self.resource_names):
            return cached[1]
        vector = np.zeros(len(self.resource_names), dtype=np.int64)
        for resource, amount in pod.requests.items():
            col = self._column.get(resource)
            if col is not None:
                vector[col] += amount
        vector[self._column[PODS]] += 1
        vector.flags.writeable = False
        if len(self._vectors) > 100_000:
            self._vectors.clear()
        self._vectors[pod.uid] = (pod, vector)
        return vector

    @contextmanager
    def requested_as(self, requested: IntArray) -> Iterator[None]:
        """`requested` (one row per node, the table's columns) is what Filter plugins see
        as requested until the block ends: preemption's dry run of many nodes at once."""
        saved = self._req
        self._req = requested
        try:
            yield
        finally:
            self._req = saved

    def _pods_changed(self, row: int) -> None:
        self.generation += 1
        self._pods_version[row] = self.generation

    def _subtract(self, row: int, pod: Pod) -> None:
        self._add(row, pod, -1)

    def _add(self, row: int, pod: Pod, sign: int) -> None:
        columns = [self.ensure_column(resource) for resource in pod.requests]
        req = self._req[row]
        for col, amount in zip(columns, pod.requests.values(), strict=True):
            req[col] += sign * amount
        req[self._column[PODS]] += sign
        if self._namespace_usage is not None:
            self._namespace_usage.add(pod, sign)
        self._non_zero[row, 0] += sign * pod.non_zero[0]
        self._non_zero[row, 1] += sign * pod.non_zero[1]
