"""Where each pod stands in the scheduling queue, as the log's queue events say.

Every move of the queue is an event: `queued` (the pod entered a queue),
`requeued` (moved between queues: a cluster event a rejecting plugin
registered, a backoff that ended), `attempt_started` (popped from the active
queue into a scheduling cycle), `unschedulable` (back to a queue after a
failed cycle); `bound` and `pod_removed` take it out. `QueueBook.apply` folds
them, so the book at a log position is the queue the scheduler had then.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime

from eventsched.events.record import StoredEvent
from eventsched.events.vocabulary import is_process_start

#: The kinds the book reads.
QUEUE_KINDS = frozenset(
    {"queued", "requeued", "attempt_started", "unschedulable", "bound", "pod_removed"}
    | {"shadow_verdict", "maintenance"}
)
#: The pseudo-queue of a pod popped into a scheduling cycle (not in any queue).
IN_CYCLE = "scheduling cycle"


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """One pod's place: which queue, since when and why it went there."""

    uid: str
    namespace: str
    name: str
    queue: str
    since: datetime
    position: int
    #: The cluster event or step that put it there ("PodAdd", "NodeAdd", "backoff ended", ...).
    event: str
    backoff_until: str | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class QueueBook:
    """Every queued pod's `QueueEntry`, by uid, as the queue events applied so far say."""

    def __init__(self) -> None:
        self._entries: dict[str, QueueEntry] = {}

    def apply(self, event: StoredEvent) -> None:
        if is_process_start(event.kind, event.data):
            self._entries.clear()
            return
        if event.kind not in QUEUE_KINDS or not event.uid:
            return
        if event.kind in ("bound", "pod_removed", "shadow_verdict"):
            self._entries.pop(event.uid, None)
            return
        queue, why, until = _where(event)
        if queue is None:
            return
        self._entries[event.uid] = QueueEntry(
            event.uid,
            event.namespace or "",
            event.name or "",
            queue,
            event.recorded_at,
            event.position,
            why,
            until,
        )

    def get(self, uid: str) -> QueueEntry | None:
        return self._entries.get(uid)

    def __iter__(self) -> Iterator[QueueEntry]:
        return iter(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def copy(self) -> QueueBook:
        book = QueueBook()
        book._entries = dict(self._entries)
        return book


def _where(event: StoredEvent) -> tuple[str | None, str, str | None]:
    """The queue an event puts its pod in, the reason, and the end of a backoff."""
    data: Mapping[str, object] = event.data
    if event.kind == "queued":
        return str(data.get("queue", "active")), str(data.get("event", "PodAdd")), None
    if event.kind == "requeued":
        until = data.get("backoffUntil")
        return (
            str(data.get("to", "")),
            str(data.get("event", "")),
            None if until is None else str(until),
        )
    if event.kind == "attempt_started":
        if data.get("extender") is not None:
            return None, "", None  # kube-scheduler's call to the extender: not our queue
        return IN_CYCLE, "popped from the active queue", None
    queue = data.get("queue")
    if queue is None:
        return None, "", None
    return str(queue), "failed scheduling cycle", None
