"""One scenario's result: its timeline, figures and checks, as lines or JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from eventsched.benchmarks.failover.checks import Checks


@dataclass(slots=True)
class Result:
    scenario: str
    nodes: int
    pods: int
    #: seconds from the first replica's start; name -> time (None when it did not happen)
    timeline: dict[str, float | None] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)
    checks: Checks | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.checks is not None and self.checks.ok

    def lines(self) -> list[str]:
        out = [f"{self.scenario} ({self.nodes} nodes, {self.pods} pods):"]
        out += [f"  t={_fmt(t)}  {name}" for name, t in self.timeline.items()]
        out += [f"  {name}: {_fmt(value)}" for name, value in self.figures.items()]
        if self.checks is not None:
            out.append(f"  {self.checks.line()}")
        if self.error:
            out.append(f"  ERROR: {self.error}")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return "-" if value is None else str(value)
