"""The shape of one event, before and after it is stored."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class EventRecord:
    """An event to append. Position, time and hash are assigned by the store."""

    kind: str
    scheduler: str = ""
    instance: str = ""
    attempt: str | None = None
    uid: str | None = None
    namespace: str | None = None
    name: str | None = None
    node: str | None = None
    plugin: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as read back from the log."""

    position: int
    recorded_at: datetime
    kind: str
    scheduler: str
    instance: str
    attempt: str | None
    uid: str | None
    namespace: str | None
    name: str | None
    node: str | None
    plugin: str | None
    data: Mapping[str, Any]

    @property
    def pod_key(self) -> str | None:
        if self.namespace is None or self.name is None:
            return None
        return f"{self.namespace}/{self.name}"
