"""The scheduler's durable state, as pure folds over the log.

Nothing the scheduler must remember across a restart is stored anywhere
else (the log is the truth; docs/architecture.md): a restart folds the log again,
from the newest snapshot if there is one. Because the folds are pure,
folding from a snapshot and folding from the start give equal state, and
tests compare exactly that.

Each fold reads only what is in the event (including `recorded_at`, never
the clock), so a replay elsewhere or later agrees.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import structlog

from eventsched.events.canonical import digest
from eventsched.events.placements import Placement, PlacementTable
from eventsched.events.record import StoredEvent
from eventsched.events.retention import read_base
from eventsched.events.vocabulary import is_listed, starts_empty_view, starts_relist
from eventsched.model.objects import record_key

if TYPE_CHECKING:
    from eventsched.events.reader import EventReader

log = structlog.get_logger(__name__)

#: Snapshot name; bump the version when the state's shape or a fold's meaning changes,
#: so old snapshots are ignored (and the state is rebuilt from the log) instead of misread.
SNAPSHOT_NAME = "projections/v3"

__all__ = [
    "SNAPSHOT_NAME",
    "Backoff",
    "OpenPreemption",
    "Placement",
    "Projections",
    "Reservation",
    "digest",
    "identity_of",
    "placement_change",
    "rebuild",
    "rebuild_counted",
]


class Reservation(NamedTuple):
    """A pod assumed on a node whose binding has not been confirmed or undone."""

    attempt: str | None
    node: str | None
    position: int
    namespace: str | None
    name: str | None
    scheduler: str
    #: The identity a plugin (StickyNode) gave the pod, which `reserved` records: a
    #: restart that finds the pod bound records its first placement under it.
    identity: str | None = None


class OpenPreemption(NamedTuple):
    """A `preempted` decision (keyed by its attempt) with victims not yet settled by an
    `evicted`: a restart finishes or abandons it (scheduler/eviction.py)."""

    uid: str | None
    namespace: str | None
    name: str | None
    scheduler: str
    node: str | None
    position: int
    #: The victims' uids still to settle, space-separated (a column, as snapshots keep it).
    victims: str


class Backoff(NamedTuple):
    """Where a pod stands in the queue's backoff; `backoff_until` is epoch seconds."""

    namespace: str | None
    name: str | None
    attempts: int
    backoff_until: float


def identity_of(event: StoredEvent) -> str | None:
    """A `bound` pod's identity: what the binder wrote, else namespace/name."""
    return _bound_identity(event.data, event.pod_key)


def _bound_identity(data: Mapping[str, Any], pod_key: str | None) -> str | None:
    identity = data.get("identity")
    if isinstance(identity, str) and identity:
        return identity
    return pod_key


class PlacementChange(NamedTuple):
    """What one event does to the first placements (StickyNode's memory)."""

    identity: str
    #: The node; None when the identity's placement is forgotten.
    node: str | None
    #: A `bound` or a pod found bound records a first placement only if there is none yet.
    first_only: bool


def placement_change(
    kind: str, data: Mapping[str, Any], node: str | None, pod_key: str | None
) -> PlacementChange | None:
    """The first-placement fold of one event, for stored events and for events still pending."""
    if kind == "bound":
        identity = _bound_identity(data, pod_key)
        return PlacementChange(identity, node, True) if identity is not None else None
    if kind == "pod_observed":
        # A pod of ours found bound without a `bound` of ours (placed while the
        # scheduler was down): its node is still the identity's first placement.
        if data.get("firstPlacement") and node and pod_key is not None:
            return PlacementChange(pod_key, node, True)
        return None
    if kind == "maintenance" and data.get("action") == "sticky_forget":
        identity = data.get("identity")
        return PlacementChange(identity, None, False) if isinstance(identity, str) else None
    return None


@dataclass(eq=True)
class Projections:
    """All folds together, with the position of the last event applied."""

    position: int = 0
    first_placements: PlacementTable = field(default_factory=PlacementTable)
    open_reservations: dict[str, Reservation] = field(default_factory=dict)
    backoff: dict[str, Backoff] = field(default_factory=dict)
    observed: dict[str, str] = field(default_factory=dict)
    #: Pods (uid -> node) a `bound` of ours placed and that still exist: a restart that
    #: lists them bound must not take them for pods placed by someone else, nor log them
    #: again if only the node differs from their last observation. The node is "" for
    #: pods a snapshot of an older version held.
    bound: dict[str, str] = field(default_factory=dict)
    open_preemptions: dict[str, OpenPreemption] = field(default_factory=dict)

    def first_node(self, identity: str) -> str | None:
        """The node `identity` was first bound to, if any (what StickyNode asks for)."""
        return self.first_placements.get_node(identity)

    def copy(self) -> Projections:
        """A copy the loop may go on changing this one beside (snapshots are written off-loop)."""
        return Projections(
            self.position,
            self.first_placements.copy(),
            dict(self.open_reservations),
            dict(self.backoff),
            dict(self.observed),
            dict(self.bound),
            dict(self.open_preemptions),
        )

    # -- folding ----------------------------------------------------------------

    def apply(self, event: StoredEvent) -> None:
        """Fold one event. Events at or before `position` are skipped, so re-applying is harmless."""
        if event.position <= self.position:
            return
        handler = _HANDLERS.get(event.kind)
        if handler is not None:
            handler(self, event)
        self.position = event.position

    def apply_all(self, events: Iterable[StoredEvent]) -> None:
        for event in events:
            self.apply(event)

    def _place(self, e: StoredEvent) -> None:
        change = placement_change(e.kind, e.data, e.node, e.pod_key)
        if change is None:
            return
        if not change.first_only:
            self.first_placements.pop(change.identity, None)
        elif change.identity not in self.first_placements:
            self.first_placements[change.identity] = Placement(
                change.node, e.position, e.uid, e.namespace, e.name
            )

    def _bound(self, e: StoredEvent) -> None:
        self._place(e)
        if e.uid is not None:
            self.open_reservations.pop(e.uid, None)
            self.backoff.pop(e.uid, None)
            self.bound[e.uid] = e.node or ""

    def _maintenance(self, e: StoredEvent) -> None:
        self._place(e)
        if starts_relist(e.kind, e.data):
            return  # what it lists is compared with the last observations
        if starts_empty_view(e.kind, e.data):
            # The process logs every object it lists, as the view starts empty.
            self.observed.clear()
        elif is_listed(e.kind, e.data):
            # What was not listed is gone; the next observation of it is logged.
            listed = {
                *(f"node/{name}" for name in e.data.get("nodes") or ()),
                *(f"pod/{uid}" for uid in e.data.get("pods") or ()),
                *(f"object/{key}" for key in e.data.get("objects") or ()),
            }
            self.observed = {k: v for k, v in self.observed.items() if k in listed}

    def _reserved(self, e: StoredEvent) -> None:
        if e.uid is not None:
            identity = e.data.get("identity")
            self.open_reservations[e.uid] = Reservation(
                e.attempt,
                e.node,
                e.position,
                e.namespace,
                e.name,
                e.scheduler,
                identity if isinstance(identity, str) and identity else None,
            )

    def _unreserved(self, e: StoredEvent) -> None:
        if e.uid is not None:
            self.open_reservations.pop(e.uid, None)

    def _backoff(self, e: StoredEvent) -> None:
        """`unschedulable` always sets backoff; `bind_failed` only when it carries it."""
        if e.uid is None:
            return
        if e.kind == "bind_failed" and "attempts" not in e.data and "backoffSeconds" not in e.data:
            return
        previous = self.backoff.get(e.uid)
        attempts = e.data.get("attempts", previous.attempts if previous else 0)
        seconds = float(e.data.get("backoffSeconds", 0) or 0)
        self.backoff[e.uid] = Backoff(
            e.namespace, e.name, int(attempts), e.recorded_at.timestamp() + seconds
        )

    def _preempted(self, e: StoredEvent) -> None:
        victims = " ".join(str(v.get("uid", "")) for v in e.data.get("victims") or ())
        if e.attempt and victims:
            self.open_preemptions[e.attempt] = OpenPreemption(
                e.uid, e.namespace, e.name, e.scheduler, e.node, e.position, victims
            )

    def _evicted(self, e: StoredEvent) -> None:
        """One victim settled; a failed eviction abandons the rest, as the live scheduler does."""
        open_ = self.open_preemptions.get(e.attempt or "")
        if open_ is None:
            return
        left = [uid for uid in open_.victims.split() if uid != e.uid]
        if not left or e.data.get("outcome") == "failed":
            del self.open_preemptions[e.attempt or ""]
        else:
            self.open_preemptions[e.attempt or ""] = open_._replace(victims=" ".join(left))

    def _pod_removed(self, e: StoredEvent) -> None:
        if e.uid is not None:
            self.backoff.pop(e.uid, None)
            self.observed.pop(f"pod/{e.uid}", None)
            self.bound.pop(e.uid, None)

    def _node_observed(self, e: StoredEvent) -> None:
        name = _node_name(e)
        if name is not None:
            self.observed[f"node/{name}"] = e.data_digest

    def _node_removed(self, e: StoredEvent) -> None:
        name = _node_name(e)
        if name is not None:
            self.observed.pop(f"node/{name}", None)

    def _object_observed(self, e: StoredEvent) -> None:
        self.observed[f"object/{record_key(e.data)}"] = e.data_digest

    def _object_removed(self, e: StoredEvent) -> None:
        self.observed.pop(f"object/{record_key(e.data)}", None)

    def _pod_observed(self, e: StoredEvent) -> None:
        uid = e.uid or e.data.get("uid")
        if isinstance(uid, str) and uid:
            self.observed[f"pod/{uid}"] = e.data_digest
        self._place(e)

    # -- (de)serialization ------------------------------------------------------

    def to_state(self) -> dict[str, Any]:
        """A JSON-ready dict (what a snapshot stores): each fold as columns, one list per field.

        Columns, not an object per entry: a million first placements load
        several times faster as seven lists than as a million small objects.
        """
        return {
            "position": self.position,
            "first_placements": self.first_placements.pack(),
            "open_reservations": _columns(Reservation, self.open_reservations),
            "backoff": _columns(Backoff, self.backoff),
            "observed": dict(self.observed),
            "bound": " ".join(self.bound),
            "boundNodes": " ".join(self.bound.values()),
            "open_preemptions": _columns(OpenPreemption, self.open_preemptions),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> Projections:
        return cls(
            position=int(state.get("position", 0)),
            first_placements=PlacementTable.unpack(state.get("first_placements")),
            open_reservations=_rows(Reservation, state.get("open_reservations")),
            backoff=_rows(Backoff, state.get("backoff")),
            observed={str(k): str(v) for k, v in state.get("observed", {}).items()},
            bound=_bound_nodes(state),
            open_preemptions=_rows(OpenPreemption, state.get("open_preemptions")),
        )

    def to_json(self) -> str:
        return json.dumps(self.to_state(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes | Mapping[str, Any]) -> Projections:
        """Accepts the JSON text of `to_json`, or the already-parsed dict."""
        if isinstance(text, Mapping):
            return cls.from_state(text)
        return cls.from_state(json.loads(text))


def _columns(
    kind: type[NamedTuple], entries: Mapping[str, tuple[Any, ...]]
) -> dict[str, list[Any]]:
    columns: dict[str, list[Any]] = {"key": list(entries)}
    values = list(zip(*entries.values(), strict=True)) or [()] * len(kind._fields)
    for name, column in zip(kind._fields, values, strict=True):
        columns[name] = list(column)
    return columns


def _rows(kind: Any, columns: Any) -> dict[str, Any]:
    """The inverse of `_columns`; raises KeyError/TypeError on a malformed state."""
    if not columns:
        return {}
    make = kind._make
    keys = columns["key"]
    defaults = kind._field_defaults
    # A field added with a default since the state was written reads as that default.
    fields = [
        columns[f] if f in columns or f not in defaults else [defaults[f]] * len(keys)
        for f in kind._fields
    ]
    return dict(zip(keys, map(make, zip(*fields, strict=True)), strict=True))


def _node_name(e: StoredEvent) -> str | None:
    name = e.node or e.data.get("name")
    return name if isinstance(name, str) and name else None


_HANDLERS: dict[str, Callable[[Projections, StoredEvent], None]] = {
    "bound": Projections._bound,
    "maintenance": Projections._maintenance,
    "reserved": Projections._reserved,
    "unreserved": Projections._unreserved,
    "unschedulable": Projections._backoff,
    "bind_failed": Projections._backoff,
    "pod_removed": Projections._pod_removed,
    "node_observed": Projections._node_observed,
    "node_removed": Projections._node_removed,
    "pod_observed": Projections._pod_observed,
    "object_observed": Projections._object_observed,
    "object_removed": Projections._object_removed,
    "preempted": Projections._preempted,
    "evicted": Projections._evicted,
}


def rebuild(reader: EventReader) -> Projections:
    """The projections as of the log's end: newest snapshot, then the events after it."""
    return rebuild_counted(reader)[0]


def rebuild_counted(reader: EventReader) -> tuple[Projections, int]:
    """`rebuild`, and how many events the log holds after the snapshot (or base) it began at.

    A pruned log begins at its base: a snapshot older than the base would
    fold from events that are gone, so the base is used instead.
    """
    base = read_base(reader)
    projections = _from_snapshot(reader, base.position if base else 0)
    if projections is None:
        projections = Projections.from_state(base.projections) if base else Projections()
    start = projections.position
    last = reader.last_position()
    folded = 0
    # Only the kinds a fold reads: the decisions in between (filtered, scored, ...) are
    # most of the log and most of its bytes, and change no projection.
    for event in reader.read(after=start, until=last, kinds=_HANDLERS):
        projections.apply(event)
        folded += 1
    projections.position = max(projections.position, last)
    log.info("projections rebuilt", snapshot=start, position=projections.position, folded=folded)
    return projections, projections.position - start


def _from_snapshot(reader: EventReader, not_before: int) -> Projections | None:
    snapshot = reader.latest_snapshot(SNAPSHOT_NAME)
    if snapshot is None:
        return None
    position, state = snapshot
    if position < not_before:
        return None
    try:
        projections = Projections.from_state(state)
    except (KeyError, TypeError, ValueError) as exc:
        log.warning("ignoring an unreadable snapshot", position=position, error=str(exc))
        return None
    if projections.position != position:
        log.warning(
            "ignoring a snapshot whose state disagrees with its position",
            position=position,
            state_position=projections.position,
        )
        return None
    return projections


def _bound_nodes(state: Mapping[str, Any]) -> dict[str, str]:
    """`bound` as a snapshot saved it: uids, and (since the relist) their nodes beside."""
    uids = str(state.get("bound") or "").split()
    nodes = str(state.get("boundNodes") or "").split()
    if len(nodes) != len(uids):
        nodes = [""] * len(uids)
    return dict(zip(uids, nodes, strict=True))
