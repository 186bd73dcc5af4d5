"""Text lines for explain: the numbers behind the reasons, and the queue."""

from __future__ import annotations

from collections.abc import Sequence

from eventsched.audit.believed import ClusterAsSeen, NodeAsSeen
from eventsched.audit.numbers import Figure, amount
from eventsched.audit.queuestanding import QueueStanding
from eventsched.model.resources import CPU, MEMORY, PODS


def render_numbers(figures: Sequence[Figure]) -> list[str]:
    """ "Numbers (the view at log position N):" then one line per figure, by plugin."""
    if not figures:
        return []
    out = ["Numbers, from the view this attempt saw:"]
    for figure in figures:
        out.append(f"  {figure.plugin}: {figure.text}")
    return out


def render_queue(standing: QueueStanding) -> list[str]:
    where = f"Queue (at log position {standing.position}): {standing.queue} since {standing.since}"
    if not standing.place:
        return [f"{where} ({standing.reason})"]
    place = f"{standing.place} of {standing.in_queue}"
    out = [
        f"{where} ({standing.reason}); place {place} by priority ({standing.priority}) and time",
    ]
    if standing.backoff_until:
        out.append(f"  backoff until {standing.backoff_until}")
    if standing.ahead:
        shown = ", ".join(f"{a.pod} (priority {a.priority})" for a in standing.ahead)
        more = standing.place - 1 - len(standing.ahead)
        out.append(f"  ahead of it: {shown}" + (f" and {more} more" if more > 0 else ""))
    if standing.moved_by:
        out.append("  moved to the active queue by: " + "; ".join(standing.moved_by))
    return out


def render_cluster(seen: ClusterAsSeen) -> list[str]:
    """The nodes at the position as a table, then what changed by the head."""
    out = [
        f"The cluster as the scheduler saw it at log position {seen.position} "
        f"({len(seen.nodes)} nodes, {seen.pending} pods in the queue):"
    ]
    header = ["NODE", "CPU (req/alloc)", "MEMORY (req/alloc)", "PODS", "TAINTS", "LABELS"]
    rows = [header]
    for node in seen.nodes:
        rows.append(
            [
                node.name + (" (cordoned)" if node.unschedulable else ""),
                _of(CPU, node),
                _of(MEMORY, node),
                f"{len(node.pods)}/{node.allocatable.get(PODS, 0)}",
                ", ".join(node.taints) or "-",
                str(len(node.labels)),
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    out.extend("  " + "  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in rows)
    if seen.head > seen.position:
        out.append(f"Changed by the log's head (position {seen.head}):")
        if not seen.changes:
            out.append("  nothing")
        for change in seen.changes:
            detail = "; ".join(change.described())
            out.append(f"  {change.node}: {change.change}" + (f" ({detail})" if detail else ""))
    return out


def _of(resource: str, node: NodeAsSeen) -> str:
    return (
        f"{amount(resource, node.requested.get(resource, 0))}/"
        f"{amount(resource, node.allocatable.get(resource, 0))}"
    )
