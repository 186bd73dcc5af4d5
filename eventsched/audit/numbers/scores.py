"""Why the winner won: each plugin's score of the chosen node and the runner-up.

The log keeps the top nodes' raw, normalized and weighted scores (`scored`); the
inputs behind the largest difference, when it is a resource plugin's, are the two
nodes' requested and allocatable cpu and memory in the view the attempt saw.
"""

from __future__ import annotations

from collections.abc import Sequence

from eventsched.audit.numbers.figure import Figure, amount
from eventsched.audit.scoretable import NodeScore
from eventsched.model import NodeTable
from eventsched.model.resources import CPU, MEMORY

_RESOURCE_SCORERS = ("NodeResourcesFit", "NodeResourcesBalancedAllocation")


def score_figures(
    table: NodeTable, plugins: Sequence[str], winner: NodeScore, runner_up: NodeScore | None
) -> list[Figure]:
    """Each plugin's cells of the two nodes, the largest difference and its inputs."""
    if runner_up is None:
        return []
    w_name, r_name = winner.node, runner_up.node
    w_cells, r_cells = winner.plugins, runner_up.plugins
    figures = []
    widest = ("", 0)
    for plugin in plugins:
        w, r = w_cells.get(plugin), r_cells.get(plugin)
        if w is None or r is None:
            continue
        diff = int(w["weighted"]) - int(r["weighted"])
        if abs(diff) > abs(widest[1]):
            widest = (plugin, diff)
        figures.append(
            Figure(
                plugin,
                f"{w_name} {w['weighted']} (raw {w['raw']} → {w['normalized']}) "
                f"against {r_name} {r['weighted']} (raw {r['raw']} → {r['normalized']})",
                w_name,
                {
                    "winner": dict(w),
                    "runnerUp": dict(r),
                    "runnerUpNode": r_name,
                    "difference": diff,
                },
            )
        )
    plugin, diff = widest
    if plugin:
        figures.append(Figure(plugin, f"the largest difference: {diff:+d} for {w_name}", w_name))
    if plugin in _RESOURCE_SCORERS:
        figures.extend(_resource_inputs(plugin, table, (w_name, r_name)))
    return figures


def _resource_inputs(plugin: str, table: NodeTable, nodes: Sequence[str]) -> list[Figure]:
    figures = []
    for node in nodes:
        row = table.row_of(node)
        if row is None:
            continue
        parts = []
        for resource in (CPU, MEMORY):
            col = table.column(resource)
            if col is None:
                continue
            req, alloc = int(table.requested[row, col]), int(table.allocatable[row, col])
            parts.append(
                f"{resource} {amount(resource, req)} of {amount(resource, alloc)} requested"
            )
        figures.append(Figure(plugin, f"{node} before this pod: " + ", ".join(parts), node))
    return figures
