"""Where the runtime puts its decisions. The scheduler turns them into log events.

The framework may not import the event store (pyproject.toml's layers), so it
records decisions through this protocol; `eventsched.scheduler` supplies a
sink that stamps attempt, pod and profile and appends one batch per attempt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class DecisionSink(Protocol):
    def record(
        self,
        kind: str,
        data: Mapping[str, Any],
        *,
        node: str | None = None,
        plugin: str | None = None,
    ) -> None: ...


def record_input(sink: DecisionSink, plugin: str, key: str, value: Mapping[str, Any]) -> None:
    """`input_recorded`: a value `plugin` read beyond the snapshot, which replay feeds back."""
    sink.record("input_recorded", {"key": key, "value": dict(value)}, plugin=plugin)


@dataclass(slots=True)
class Decision:
    kind: str
    data: Mapping[str, Any]
    node: str | None = None
    plugin: str | None = None


@dataclass(slots=True)
class ListSink:
    """Collects decisions in order; what tests and replay use."""

    decisions: list[Decision] = field(default_factory=list)

    def record(
        self,
        kind: str,
        data: Mapping[str, Any],
        *,
        node: str | None = None,
        plugin: str | None = None,
    ) -> None:
        self.decisions.append(Decision(kind, data, node, plugin))

    def kinds(self) -> list[str]:
        return [d.kind for d in self.decisions]

    def of(self, kind: str) -> list[Decision]:
        return [d for d in self.decisions if d.kind == kind]
