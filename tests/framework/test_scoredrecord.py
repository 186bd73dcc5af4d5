"""The `scored` event's two shapes read as one (logs written before the per-plugin columns)."""

from __future__ import annotations

import numpy as np

from eventsched.framework import in_columns, score_cells, scored_data


def test_old_cells_and_new_columns_give_the_same_scores() -> None:
    new = {
        "nodes": 5,
        **scored_data(
            ["TaintToleration", "NodeResourcesFit"],
            [3, 1],
            ["n1", "n2"],
            [398, 391],
            np.array([[0, 0], [98, 91]]),
            np.array([[100, 100], [98, 91]]),
        ),
    }
    old = {
        "nodes": 5,
        "plugins": [
            {"name": "TaintToleration", "weight": 3},
            {"name": "NodeResourcesFit", "weight": 1},
        ],
        "top": [{"node": "n1", "total": 398}, {"node": "n2", "total": 391}],
        "scores": [
            {"node": n, "plugin": p, "raw": r, "normalized": s, "weighted": s * w}
            for n, (r1, s1, r2, s2) in (("n1", (0, 100, 98, 98)), ("n2", (0, 100, 91, 91)))
            for p, w, r, s in (("TaintToleration", 3, r1, s1), ("NodeResourcesFit", 1, r2, s2))
        ],
    }
    assert score_cells(old) == score_cells(new)
    assert score_cells(new)[("TaintToleration", "n2")].weighted == 300
    assert in_columns(old) == new
    assert in_columns(new) == new
