"""Events gathered for one append: a scheduling attempt, or a drain of the inbox."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eventsched.events import Encoded, EventRecord
from eventsched.model import Pod


@dataclass(slots=True)
class Batch:
    instance: str
    records: list[EventRecord] = field(default_factory=list)
    #: Told of every record added (the scheduler's pending batch: see UnfoldedPlacements).
    observer: Callable[[EventRecord], None] | None = None

    def add(
        self,
        kind: str,
        data: Mapping[str, Any],
        *,
        pod: Pod | None = None,
        scheduler: str = "",
        attempt: str | None = None,
        node: str | None = None,
        plugin: str | None = None,
        encoded: Encoded | None = None,
    ) -> None:
        """Queue one event; `encoded` is `data` already normalized and dumped (not done again)."""
        record = EventRecord(
            kind=kind,
            scheduler=scheduler,
            instance=self.instance,
            attempt=attempt,
            uid=pod.uid if pod else None,
            namespace=pod.namespace if pod else None,
            name=pod.name if pod else None,
            node=node,
            plugin=plugin,
            data=encoded.data if encoded is not None else data,
            data_json=encoded.text if encoded is not None else None,
        )
        self.records.append(record)
        if self.observer is not None:
            self.observer(record)

    def extend(self, other: Batch) -> None:
        self.records.extend(other.records)
        if self.observer is not None:
            for record in other.records:
                self.observer(record)

    def __len__(self) -> int:
        return len(self.records)


class AttemptSink:
    """The DecisionSink the framework writes to during one attempt: stamps pod and attempt."""

    __slots__ = ("attempt", "batch", "pod", "scheduler")

    def __init__(self, batch: Batch, pod: Pod, scheduler: str, attempt: str | None) -> None:
        self.batch = batch
        self.pod = pod
        self.scheduler = scheduler
        self.attempt = attempt

    def record(
        self,
        kind: str,
        data: Mapping[str, Any],
        *,
        node: str | None = None,
        plugin: str | None = None,
    ) -> None:
        self.batch.add(
            kind,
            data,
            pod=self.pod,
            scheduler=self.scheduler,
            attempt=self.attempt,
            node=node,
            plugin=plugin,
        )
