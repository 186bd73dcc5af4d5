"""Events of one pod that contradict each other: a record that cannot all be true.

The hash chain proves the stored rows are the ones appended; it says nothing
when the rows were appended wrong (written through the store's own append
API by a buggy or hostile writer), and a reader that sees only the batches
it shows cannot see an edit elsewhere. What a pod's own events say about
where it is can still be checked against each other, in one pass:

- within an attempt, `reserved`, `bound` and `bind_failed` name the node
  `selected` chose, and `unreserved` the node `reserved` held; an attempt
  that selected no node reserves and binds nothing;
- `selected` never names a node its own `filtered` rejected;
- a pod is bound to one node until it is removed: a second `bound` to
  another node, or the pod observed, evicted or removed on another node
  than its `bound` named (or bound to another than the one it was observed
  on), cannot all be true;
- time never goes back along positions (appends take max(now, the head's
  time)).

`PodLedger` takes one pod's events in log order; `LogLedger` keeps one per
pod for a reader of the whole log (replay). Neither reads anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from eventsched.events.record import StoredEvent

#: The kinds the rules read; a reader of many pods needs only these.
LEDGER_KINDS = (
    "attempt_started",
    "filtered",
    "selected",
    "unschedulable",
    "reserved",
    "unreserved",
    "bound",
    "bind_failed",
    "pod_observed",
    "pod_removed",
    "evicted",
)


@dataclass(frozen=True, slots=True)
class Contradiction:
    """An event that contradicts an earlier event of the same pod."""

    #: The pod, as namespace/name, and its uid.
    pod: str
    uid: str
    #: The event that contradicts (its kind and position) and the one it contradicts.
    kind: str
    position: int
    earlier_position: int
    #: The attempt it concerns: the event's own, or the attempt that bound the pod.
    attempt: str
    #: The node the event names ("" when none).
    node: str
    detail: str


@dataclass(slots=True)
class _Attempt:
    #: node -> the Filter plugin that rejected it (in `filtered` at `filtered_at`);
    #: dropped once the attempt selected.
    rejected: dict[str, str] = field(default_factory=dict)
    filtered_at: int = 0
    selected: str | None = None
    selected_at: int = 0
    reserved: str | None = None
    reserved_at: int = 0
    #: Position of the event that ended the attempt with no node (unschedulable).
    failed_at: int = 0


@dataclass(slots=True)
class _Placement:
    node: str
    position: int
    attempt: str
    #: "bound" (our binding) or "observed" (the cluster showed it there).
    how: str


class PodLedger:
    """The rules over one pod's events, fed in log order (any subset of its events that
    holds LEDGER_KINDS of each attempt shown)."""

    def __init__(self) -> None:
        self._attempts: dict[str, _Attempt] = {}
        self._placed: _Placement | None = None
        self._last_time: tuple[datetime, int] | None = None

    def see(self, event: StoredEvent) -> list[Contradiction]:
        found: list[Contradiction] = []
        self._time(event, found)
        handler = _RULES.get(event.kind)
        if handler is not None:
            handler(self, event, found)
        return found

    def cycle_ended(self) -> None:
        """Another pod's event came: this pod's scheduling cycle is over (a cycle's events
        are contiguous in the log), so what its Filter rejected is no longer needed."""
        for attempt in self._attempts.values():
            attempt.rejected = {}

    # -- time --------------------------------------------------------------------------

    def _time(self, event: StoredEvent, found: list[Contradiction]) -> None:
        last = self._last_time
        if last is not None and event.recorded_at < last[0]:
            found.append(
                _said(
                    event,
                    last[1],
                    event.attempt or "",
                    f"{event.kind} at position {event.position} is recorded at "
                    f"{event.recorded_at.isoformat()}, before position {last[1]} "
                    f"({last[0].isoformat()}): time never goes back along positions",
                )
            )
        if last is None or event.recorded_at >= last[0]:
            self._last_time = (event.recorded_at, event.position)

    # -- within an attempt -------------------------------------------------------------

    def _attempt(self, event: StoredEvent) -> _Attempt:
        return self._attempts.setdefault(event.attempt or "", _Attempt())

    def _started(self, event: StoredEvent, found: list[Contradiction]) -> None:
        # A pod's attempts follow one another: an attempt starts once the one before has
        # ended (no node, or its binding answered), so only the newest is kept.
        self._attempts = {event.attempt or "": _Attempt()}

    def _filtered(self, event: StoredEvent, found: list[Contradiction]) -> None:
        attempt = self._attempt(event)
        attempt.rejected, attempt.filtered_at = rejected_nodes(event.data), event.position

    def _selected(self, event: StoredEvent, found: list[Contradiction]) -> None:
        attempt = self._attempt(event)
        node = event.node or ""
        plugin = attempt.rejected.get(node)
        if plugin is not None:
            found.append(
                _said(
                    event,
                    attempt.filtered_at,
                    event.attempt or "",
                    f"selected {node} (position {event.position}), which {plugin} rejected "
                    f"in the same attempt's Filter (position {attempt.filtered_at})",
                )
            )
        attempt.rejected = {}
        attempt.selected, attempt.selected_at = node, event.position

    def _unschedulable(self, event: StoredEvent, found: list[Contradiction]) -> None:
        attempt = self._attempt(event)
        attempt.rejected = {}
        attempt.failed_at = event.position

    def _reserved(self, event: StoredEvent, found: list[Contradiction]) -> None:
        attempt = self._attempt(event)
        self._against_selection(event, attempt, "reserved", found)
        attempt.reserved, attempt.reserved_at = event.node, event.position

    def _unreserved(self, event: StoredEvent, found: list[Contradiction]) -> None:
        attempt = self._attempt(event)
        if attempt.reserved is not None and event.node and event.node != attempt.reserved:
            found.append(
                _said(
                    event,
                    attempt.reserved_at,
                    event.attempt or "",
                    f"unreserved {event.node} (position {event.position}), but the attempt "
                    f"reserved {attempt.reserved} (position {attempt.reserved_at})",
                )
            )
        attempt.reserved = None

    def _bind_failed(self, event: StoredEvent, found: list[Contradiction]) -> None:
        self._against_selection(event, self._attempt(event), "binding to", found)

    def _against_selection(
        self, event: StoredEvent, attempt: _Attempt, did: str, found: list[Contradiction]
    ) -> None:
        node = event.node or ""
        where = f"{did} {node} (position {event.position})"
        if attempt.selected is not None and node != attempt.selected:
            found.append(
                _said(
                    event,
                    attempt.selected_at,
                    event.attempt or "",
                    f"{where}, but the attempt selected {attempt.selected} "
                    f"(position {attempt.selected_at})",
                )
            )
        elif attempt.selected is None and attempt.failed_at:
            found.append(
                _said(
                    event,
                    attempt.failed_at,
                    event.attempt or "",
                    f"{where}, but the attempt found no node "
                    f"(unschedulable at position {attempt.failed_at})",
                )
            )

    # -- where the pod is --------------------------------------------------------------

    def _bound(self, event: StoredEvent, found: list[Contradiction]) -> None:
        self._against_selection(event, self._attempt(event), "bound to", found)
        node = event.node or ""
        placed = self._placed
        if placed is not None and placed.node != node:
            what = "bound to" if placed.how == "bound" else "observed on"
            found.append(
                _said(
                    event,
                    placed.position,
                    event.attempt or "",
                    f"bound to {node} (position {event.position}), but it was {what} "
                    f"{placed.node} (position {placed.position}) and not removed between",
                )
            )
        self._placed = _Placement(node, event.position, event.attempt or "", "bound")

    def _observed(self, event: StoredEvent, found: list[Contradiction]) -> None:
        if event.node:
            self._elsewhere(event, "observed on", found)
            if self._placed is None:
                self._placed = _Placement(event.node, event.position, "", "observed")

    def _evicted(self, event: StoredEvent, found: list[Contradiction]) -> None:
        if event.node:
            self._elsewhere(event, "evicted from", found)

    def _removed(self, event: StoredEvent, found: list[Contradiction]) -> None:
        node = event.node or str(event.data.get("nodeName") or "")
        if node:
            self._elsewhere(event, "removed from", found, node)
        self._placed = None

    def _elsewhere(
        self, event: StoredEvent, what: str, found: list[Contradiction], node: str = ""
    ) -> None:
        """The pod shown on `node` (the event's node by default) while bound elsewhere."""
        node = node or event.node or ""
        placed = self._placed
        if placed is None or placed.how != "bound" or placed.node == node:
            return
        found.append(
            _said(
                event,
                placed.position,
                placed.attempt,
                f"{what} {node} (position {event.position}), but bound to {placed.node} "
                f"(position {placed.position}) and not removed between",
            )
        )


_RULES = {
    "attempt_started": PodLedger._started,
    "filtered": PodLedger._filtered,
    "selected": PodLedger._selected,
    "unschedulable": PodLedger._unschedulable,
    "reserved": PodLedger._reserved,
    "unreserved": PodLedger._unreserved,
    "bound": PodLedger._bound,
    "bind_failed": PodLedger._bind_failed,
    "pod_observed": PodLedger._observed,
    "evicted": PodLedger._evicted,
    "pod_removed": PodLedger._removed,
}


def _said(event: StoredEvent, earlier: int, attempt: str, detail: str) -> Contradiction:
    return Contradiction(
        pod=event.pod_key or "",
        uid=event.uid or "",
        kind=event.kind,
        position=event.position,
        earlier_position=earlier,
        attempt=attempt,
        node=event.node or "",
        detail=detail,
    )


def rejected_nodes(data: Mapping[str, Any]) -> dict[str, str]:
    """node -> the Filter plugin that rejected it, from a `filtered` record."""
    rejected: dict[str, str] = {}
    for rejection in data.get("rejections") or ():
        for node in rejection.get("nodes") or ():
            rejected.setdefault(str(node), str(rejection.get("plugin", "")))
    return rejected


def contradictions(events: Iterable[StoredEvent]) -> list[Contradiction]:
    """What the events (of any pods, in log order) say against each other, pod by pod."""
    ledger = LogLedger()
    return [found for event in events for found in ledger.see(event)]


class LogLedger:
    """A PodLedger per pod uid, fed the log in order; a pod's is dropped once removed.

    What an attempt's Filter rejected (a list as long as the cluster) is kept for one
    pod at a time: the one whose scheduling cycle the log is in."""

    def __init__(self) -> None:
        self._pods: dict[str, PodLedger] = {}
        self._cycle: str = ""

    def see(self, event: StoredEvent) -> list[Contradiction]:
        uid = event.uid
        if not uid:
            return []
        if uid != self._cycle:
            previous = self._pods.get(self._cycle)
            if previous is not None:
                previous.cycle_ended()
            self._cycle = uid
        ledger = self._pods.get(uid)
        if ledger is None:
            ledger = self._pods[uid] = PodLedger()
        found = ledger.see(event)
        if event.kind == "pod_removed":
            del self._pods[uid]
        return found
