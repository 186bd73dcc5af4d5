"""NodePorts: the host ports a pod asks for must be free on the node.

PreFilter returns Skip when the pod asks for no host port (upstream since
v1.28), so most pods never reach Filter. Filter rejects, as Unschedulable,
the nodes where a placed pod already holds a conflicting port: the same
port and protocol on the same host IP, or on any IP when either side binds
0.0.0.0 (`HostPortInfo.CheckConflict`, i.e. `HostPort.conflicts`).

A node's used ports are the union of the host ports of the pods placed on
it, as `NodeInfo.UsedPorts` collects them from the regular containers (and
from v1.34, kubernetes#132040, the sidecar init containers: `Pod.host_ports`
holds them when the pod is read with that version's accounting). They
come from an index rebuilt only when the table changed (`table.generation`)
and only when a pod that asks for host ports is being scheduled: nodes that
hold the same set of ports share one code, each distinct set is judged once
per pod, and the candidate rows are classified with array operations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter
from typing import Any

import numpy as np

from eventsched.framework import (
    ASSIGNED_POD_DELETE,
    LEGACY_FEATURES,
    NODE_ADD,
    NODE_UPDATE,
    SKIP,
    BatchFilterResult,
    ClusterEvent,
    CycleState,
    Features,
    Handle,
    PreFilterResult,
    Status,
    check_args,
)
from eventsched.model import Indexes, IntArray, NodeTable, Pod
from eventsched.model.podspec import HostPort

NAME = "NodePorts"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_HOST_PORTS = attrgetter("host_ports")


@dataclass(frozen=True, slots=True)
class WantedPorts:
    """PreFilter's state: the host ports the pod asks for."""

    ports: tuple[HostPort, ...]

    def fit(self, used: frozenset[HostPort]) -> bool:
        """upstream `fitsPorts`: no wanted port conflicts with a used one."""
        return not any(want.conflicts(u) for want in self.ports for u in used)


@dataclass(frozen=True, slots=True)
class PortIndex:
    """The used ports of every node row, as of one table generation.

    `row_code[row]` is -1 for a node whose pods hold no host port, else the
    index in `port_sets` of the ports they hold together.
    """

    generation: int
    row_code: IntArray
    port_sets: tuple[frozenset[HostPort], ...]


def build_port_index(table: NodeTable) -> PortIndex:
    """The used ports of every node row, from the placed pods that hold host ports.

    Finding those pods is one C-level pass over the placed pods (no Python
    statement per pod); only the pods with host ports are visited in Python.
    """
    placed = table.placed
    pods = placed.pods
    hits = list(compress(range(len(pods)), map(_HOST_PORTS, pods)))
    used: dict[int, set[HostPort]] = {}
    for i, row in zip(hits, placed.node_rows[hits].tolist(), strict=True):
        used.setdefault(row, set()).update(pods[i].host_ports)
    row_code = np.full(len(table), -1, dtype=np.int64)
    codes: dict[frozenset[HostPort], int] = {}
    for row, ports in used.items():
        row_code[row] = codes.setdefault(frozenset(ports), len(codes))
    return PortIndex(table.generation, row_code, tuple(codes))


class NodePorts:
    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args)
        self._index: PortIndex | None = None
        self._indexed: NodeTable | None = None

    def events_to_register(self) -> Sequence[ClusterEvent]:
        # v1.28: an assigned pod's deletion may free ports; a node added (or updated,
        # since the add may have been missed by preCheck) may have them free.
        return (ASSIGNED_POD_DELETE, NODE_ADD, NODE_UPDATE)

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.host_ports:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, WantedPorts(pod.host_ports))
        return None, None

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        wanted = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(wanted, WantedPorts):
            error = Status.as_error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
            return BatchFilterResult(np.zeros(len(rows), dtype=np.int64), [error])
        index = self.port_index(table)
        codes = index.row_code[rows]
        present = np.unique(codes[codes >= 0])
        taken = [int(c) for c in present if not wanted.fit(index.port_sets[int(c)])]
        if not taken:
            return BatchFilterResult.passing(len(rows))
        return BatchFilterResult.from_mask(~np.isin(codes, taken), Status.unschedulable(ERR_REASON))

    def port_index(self, table: NodeTable) -> PortIndex:
        """The used-port index of `table`, rebuilt when the table changed since the last build."""
        index = self._index
        if index is None or self._indexed is not table or index.generation != table.generation:
            index = self._index = build_port_index(table)
            self._indexed = table
        return index
