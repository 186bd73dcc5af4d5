"""The `scored` event's data: written by the algorithm, read by explain, replay and SQL.

Per plugin, the raw and normalized scores of the top K nodes are two arrays
aligned with `top` (the nodes by total, best first); weighted is normalized
times the plugin's weight. Logs written before this shape kept one object
per (node, plugin) under `scores`; `score_cells` reads both, so explain and
replay work on any log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True)
class ScoreCell:
    """One plugin's score of one node, as the log keeps it."""

    raw: int
    normalized: int
    weighted: int


def scored_data(
    plugins: Sequence[str],
    weights: Sequence[int],
    top_nodes: Sequence[str],
    top_totals: Sequence[int],
    raw: np.ndarray,
    normalized: np.ndarray,
) -> dict[str, Any]:
    """`nodes`, `skipped` and `summary` aside: `plugins` with their columns, and `top`.

    `raw` and `normalized` are (plugin, top node) arrays.
    """
    return {
        "plugins": [
            {
                "name": name,
                "weight": int(weight),
                "raw": raw[p].tolist(),
                "normalized": normalized[p].tolist(),
            }
            for p, (name, weight) in enumerate(zip(plugins, weights, strict=True))
        ],
        "top": [
            {"node": node, "total": int(total)}
            for node, total in zip(top_nodes, top_totals, strict=True)
        ],
    }


def score_cells(data: Mapping[str, Any]) -> dict[tuple[str, str], ScoreCell]:
    """(plugin, node) -> its scores, from a `scored` event of either shape."""
    cells: dict[tuple[str, str], ScoreCell] = {}
    for entry in data.get("scores", ()):  # the shape before plugin columns
        cells[(entry["plugin"], entry["node"])] = ScoreCell(
            int(entry["raw"]), int(entry["normalized"]), int(entry["weighted"])
        )
    nodes = [t["node"] for t in data.get("top", ())]
    for plugin in data.get("plugins", ()):
        if "normalized" not in plugin:
            continue
        weight = int(plugin.get("weight", 1))
        for node, raw, normalized in zip(nodes, plugin["raw"], plugin["normalized"], strict=True):
            cells[(plugin["name"], node)] = ScoreCell(
                int(raw), int(normalized), int(normalized) * weight
            )
    return cells


def in_columns(data: Mapping[str, Any]) -> dict[str, Any]:
    """A `scored` event's data in the current shape, whichever shape it was written in."""
    if "scores" not in data:
        return dict(data)
    cells = score_cells(data)
    nodes = [t["node"] for t in data.get("top", ())]
    out = {k: v for k, v in data.items() if k != "scores"}
    out["plugins"] = [
        {
            **plugin,
            "raw": [cells[(plugin["name"], n)].raw for n in nodes],
            "normalized": [cells[(plugin["name"], n)].normalized for n in nodes],
        }
        for plugin in data.get("plugins", ())
    ]
    return out
