"""The shape of one event, before and after it is stored."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from eventsched.events.canonical import digest_normalized, text_digest


@dataclass(slots=True)
class EventRecord:
    """An event to append. Position, time and hash are assigned by the store. Treat it
    as read-only.

    Not frozen, as StoredEvent is not: a dozen are made for each pod scheduled, and a
    frozen dataclass sets each of its eleven fields through object.__setattr__ (3.7 µs
    against 0.9 µs a record, timeit on this machine).
    """

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
    #: `canonical.encode(data).text` when the caller already encoded it: then `data`
    #: is the normalized value and the store writes this text as it is.
    data_json: str | None = None

    @property
    def pod_key(self) -> str | None:
        return pod_key(self.namespace, self.name)


@dataclass(slots=True)
class StoredEvent:
    """An event as read back from the log. Treat it as read-only.

    Not frozen: a frozen dataclass sets each of its twelve fields through
    object.__setattr__, and one is made per appended event (1.07 us against
    0.14 us per event, timeit on this machine).
    """

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
    #: The canonical JSON of `data` when this process appended the event (None when
    #: read back): what the projections digest, so an observation is not dumped twice.
    data_json: str | None = field(default=None, compare=False, repr=False)

    @property
    def data_digest(self) -> str:
        """SHA-1 of the canonical JSON of `data` (an observation's identity)."""
        if self.data_json is not None:
            return text_digest(self.data_json)
        return digest_normalized(self.data)

    @property
    def pod_key(self) -> str | None:
        return pod_key(self.namespace, self.name)


def pod_key(namespace: str | None, name: str | None) -> str | None:
    """`namespace/name` of an event's pod; None for an event about no pod."""
    if namespace is None or name is None:
        return None
    return f"{namespace}/{name}"
