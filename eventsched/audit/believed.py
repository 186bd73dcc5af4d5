"""The cluster as the scheduler saw it at a log position, and what changed since.

Each node's allocatable, requested, pods, taints and labels, from the view
folded to the position (`ViewAt`), beside the same at the log's head: a
decision is judged by what the scheduler believed, not by what is true now.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from eventsched.audit.numbers import amount
from eventsched.audit.viewat import ViewAt
from eventsched.view import ClusterView


@dataclass(frozen=True, slots=True)
class NodeAsSeen:
    name: str
    allocatable: dict[str, int]
    requested: dict[str, int]
    pods: list[str]
    taints: list[str]
    labels: dict[str, str]
    unschedulable: bool = False


@dataclass(frozen=True, slots=True)
class NodeChange:
    """How a node differs at the head from the position: each field that changed."""

    node: str
    #: "added", "removed" or "changed".
    change: str
    fields: dict[str, dict[str, Any]] = field(default_factory=dict)

    def described(self) -> list[str]:
        """Each changed field in words: "requested: cpu 1 → 4.25", "pods: +shop/db-0"."""
        return [_field(name, v["then"], v["now"]) for name, v in self.fields.items()]


@dataclass(frozen=True, slots=True)
class ClusterAsSeen:
    position: int
    head: int
    nodes: list[NodeAsSeen]
    changes: list[NodeChange]
    pending: int = 0


def cluster_as_seen(views: ViewAt, position: int, head: int) -> ClusterAsSeen:
    """The nodes at `position` and how each differs at `head` (folds both)."""
    then_folded = views.at(position)
    then = nodes_of(then_folded.view)
    queued = len(then_folded.queue)
    now = {n.name: n for n in nodes_of(views.at(head).view)} if head > position else {}
    changes = _changes({n.name: n for n in then}, now) if head > position else []
    return ClusterAsSeen(position, head, then, changes, queued)


def nodes_of(view: ClusterView) -> list[NodeAsSeen]:
    table = view.table
    out = []
    for row, node in enumerate(table.nodes):
        requested = {
            resource: int(table.requested[row, col])
            for col, resource in enumerate(table.resource_names)
            if int(table.requested[row, col])
        }
        out.append(
            NodeAsSeen(
                name=node.name,
                allocatable=dict(node.allocatable),
                requested=requested,
                pods=sorted(f"{p.namespace}/{p.name}" for p in table.pods[row].values()),
                taints=[_taint(t.key, t.value, t.effect) for t in node.taints],
                labels=dict(node.labels),
                unschedulable=bool(node.unschedulable),
            )
        )
    return sorted(out, key=lambda n: n.name)


def _taint(key: str, value: str, effect: str) -> str:
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


_COMPARED = ("allocatable", "requested", "pods", "taints", "labels", "unschedulable")


def _changes(then: dict[str, NodeAsSeen], now: dict[str, NodeAsSeen]) -> list[NodeChange]:
    changes = [NodeChange(name, "removed") for name in sorted(set(then) - set(now))]
    changes += [NodeChange(name, "added") for name in sorted(set(now) - set(then))]
    for name in sorted(set(then) & set(now)):
        fields = {
            f: {"then": getattr(then[name], f), "now": getattr(now[name], f)}
            for f in _COMPARED
            if getattr(then[name], f) != getattr(now[name], f)
        }
        if fields:
            changes.append(NodeChange(name, "changed", fields))
    return changes


def _field(name: str, then: Any, now: Any) -> str:
    if isinstance(then, Mapping) and isinstance(now, Mapping):
        keys = sorted(set(then) | set(now))
        shown = ", ".join(
            f"{k} {_value(name, k, then.get(k))} → {_value(name, k, now.get(k))}"
            for k in keys
            if then.get(k) != now.get(k)
        )
        return f"{name}: {shown}"
    if isinstance(then, list) and isinstance(now, list):
        gone = [f"-{x}" for x in then if x not in now]
        new = [f"+{x}" for x in now if x not in then]
        return f"{name}: " + ", ".join(gone + new)
    return f"{name}: {then} → {now}"


def _value(field: str, key: str, value: object) -> str:
    if value is None:
        return "-"
    if field in ("allocatable", "requested") and isinstance(value, int):
        return amount(key, value)
    return str(value)
