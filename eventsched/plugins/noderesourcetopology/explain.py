"""The detail of a NodeResourceTopologyMatch rejection: which NUMA zones each request fits.

Upstream logs why a container cannot be aligned (klog V(2) names the container and
its kind, V(5)/V(6) each resource's verdict on each NUMA zone). eventsched puts the
same facts in the rejection's `Status.detail`, one line, which the `filtered` event
keeps with the rejected nodes and `eventsched explain` prints under them:

    container c0: cpu 6 fits no NUMA zone (node-0 has 4, node-1 has 4)
    container c0: no single NUMA zone fits cpu 6 (node-1) and vendor.com/nic 2 (node-0)
    init container i0: the node has no vendor.com/gpu

The message stays upstream's (`cannot align container` ...), so kube-scheduler's
"0/N nodes are available" text is unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from eventsched.model.resources import CPU


class _Aligned(Protocol):
    @property
    def fitting(self) -> tuple[tuple[str, int, int], ...]: ...

    @property
    def missing(self) -> str: ...


class _Cell(Protocol):
    @property
    def numa_id(self) -> int: ...

    @property
    def resources(self) -> Mapping[str, int]: ...


def describe(who: str, alignment: _Aligned, cells: Sequence[_Cell]) -> str:
    """One line: why `who` (a container, an init container, the pod) fits no NUMA zone."""
    if alignment.missing:
        return f"{who}: the node has no {alignment.missing}"
    last_name, last_amount, last_mask = alignment.fitting[-1]
    if last_mask == 0:
        reported = [c for c in cells if last_name in c.resources]
        if not reported:
            return f"{who}: {last_name} {amount(last_name, last_amount)} is in no NUMA zone"
        have = ", ".join(
            f"node-{c.numa_id} has {amount(last_name, c.resources[last_name])}" for c in reported
        )
        return f"{who}: {last_name} {amount(last_name, last_amount)} fits no NUMA zone ({have})"
    parts = [
        f"{name} {amount(name, value)} ({zones(mask)})" for name, value, mask in alignment.fitting
    ]
    return f"{who}: no single NUMA zone fits {' and '.join(parts)}"


def zones(mask: int) -> str:
    return ", ".join(f"node-{i}" for i in range(64) if mask >> i & 1)


def amount(name: str, value: int) -> str:
    """An amount as a manifest writes it: whole cores or millicores, binary units for bytes."""
    if name == CPU:
        return f"{value // 1000}" if value % 1000 == 0 else f"{value}m"
    for suffix, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if value and value % size == 0:
            return f"{value // size}{suffix}"
    return str(value)
