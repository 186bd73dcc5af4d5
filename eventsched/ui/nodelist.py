"""The node list: every node as the log last saw it, with what is placed on it.

A node's own fields (allocatable, taints, labels) come from its last observation
(nodereads.py, through the index on rare kinds), at once. Which pods are on it
has no index (it takes every placement, deletion and re-observation of every pod
in the log: 0.4 to 0.9 s of SQL on a PostgreSQL log of a million events, growing
with it), so its pods and their requests come from the page's shared fold of the
log at its head (ui/folds.py: the fold the scheduler keeps its own view with),
the nodes as `cluster-at` shows them; while that fold is short of the head, the
list says how far it has got. A pruned log's nodes not observed since the cut
come from the fold alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine

from eventsched.audit.believed import NodeAsSeen, nodes_of
from eventsched.audit.numbers import amount
from eventsched.audit.viewat import FoldError, ViewAt
from eventsched.model import Node
from eventsched.model.resources import CPU, MEMORY, PODS
from eventsched.ui import nodereads

#: Labels every node has, left out of the summary.
COMMON_LABELS = ("kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch")
#: Labels the summary names; the rest are counted.
LABELS_SHOWN = 3


@dataclass(frozen=True, slots=True)
class Counted:
    """The pods on each node, from the fold at the log's head, or why there are none."""

    head: int
    #: Where the page's fold is (the head, when `nodes` holds it).
    position: int
    nodes: Mapping[str, NodeAsSeen] = field(default_factory=dict)
    #: Why `nodes` is empty: the fold is short of the head, or stopped (FoldError).
    missing: str = ""


@dataclass(frozen=True, slots=True)
class NodeRow:
    """One node of the list."""

    name: str
    #: "removed" (its last event is `node_removed`, or a later start did not list it),
    #: "unschedulable" or "".
    state: str
    #: When the log last observed it (None: only in a pruned log's base).
    observed_at: datetime | None
    #: What its pods request against what it has ("4.25 / 15.89", "5 / 110"); "— / 110"
    #: while the fold has not counted it; empty for a removed node.
    pods: str
    cpu: str
    memory: str
    taints: int
    labels: str


@dataclass(frozen=True, slots=True)
class NodeList:
    rows: list[NodeRow]
    counted: Counted


def count(views: ViewAt | None, head: int, warmed: int) -> Counted:
    """The nodes at `head` from the shared fold (`views`: None while it is short of it)."""
    if views is None:
        short = f"the page's fold of the log is at position {warmed:,} of {head:,}"
        return Counted(head, warmed, missing=short + "; reload in a few seconds")
    try:
        folded = views.at(head)
    except FoldError as exc:
        return Counted(head, warmed, missing=f"the page's fold of the log stopped: {exc}")
    return Counted(head, head, {n.name: n for n in nodes_of(folded.view)})


def load(engine: Engine, counted: Counted) -> NodeList:
    rows = []
    seen = set()
    for observed in nodereads.last_observations(engine):
        seen.add(observed.node)
        at = observed.recorded_at
        if observed.kind == "node_removed" or _gone(observed.node, counted):
            rows.append(NodeRow(observed.node, "removed", at, "", "", "", 0, ""))
            continue
        node = Node.from_record(observed.data)
        rows.append(
            _row(
                node.name,
                node.allocatable,
                node.labels,
                len(node.taints),
                node.unschedulable,
                at,
                counted.nodes.get(node.name),
            )
        )
    for name, seen_node in counted.nodes.items():
        if name not in seen:  # in a pruned log's base, not observed since the cut
            rows.append(
                _row(
                    name,
                    seen_node.allocatable,
                    seen_node.labels,
                    len(seen_node.taints),
                    seen_node.unschedulable,
                    None,
                    seen_node,
                )
            )
    rows.sort(key=lambda r: r.name)
    return NodeList(rows, counted)


def _gone(name: str, counted: Counted) -> bool:
    """The fold at the head has no such node: a scheduler that started since its last
    observation did not list it (deleted while none ran; no `node_removed` says so)."""
    return not counted.missing and name not in counted.nodes


def _row(
    name: str,
    allocatable: Mapping[str, int],
    labels: Mapping[str, str],
    taints: int,
    unschedulable: bool,
    at: datetime | None,
    seen: NodeAsSeen | None,
) -> NodeRow:
    """A node's row: its own fields, and what the fold counted on it (`seen`)."""
    used = seen.requested if seen is not None else None
    return NodeRow(
        name=name,
        state="unschedulable" if unschedulable else "",
        observed_at=at,
        pods=_share(PODS, len(seen.pods) if seen is not None else None, allocatable),
        cpu=_share(CPU, used.get(CPU, 0) if used is not None else None, allocatable),
        memory=_share(MEMORY, used.get(MEMORY, 0) if used is not None else None, allocatable),
        taints=taints,
        labels=labels_summary(labels),
    )


def _share(resource: str, used: int | None, allocatable: Mapping[str, int]) -> str:
    """`used / allocatable` as the cluster-at page writes them; `— / allocatable` when
    nothing was counted."""
    have = amount(resource, allocatable.get(resource, 0))
    return f"{'—' if used is None else amount(resource, used)} / {have}"


def labels_summary(labels: Mapping[str, Any]) -> str:
    """The first few labels but the ones every node has, and how many more there are."""
    shown = sorted(k for k in labels if k not in COMMON_LABELS)
    parts = [f"{k}={labels[k]}" for k in shown[:LABELS_SHOWN]]
    if len(shown) > LABELS_SHOWN:
        parts.append(f"+{len(shown) - LABELS_SHOWN} more")
    return ", ".join(parts)
