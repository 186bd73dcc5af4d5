"""`NodeScore`: one node's row of an attempt's score table, as the log kept it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class NodeScore:
    node: str
    total: int
    #: Plugin -> {"raw", "normalized", "weighted"}.
    plugins: dict[str, dict[str, int]] = field(default_factory=dict)
