"""A gang (Coscheduling's pod group) from the log: its members, where each stands, and which
of them keep the gang from being bound.

Coscheduling binds none of a gang's members until minMember (the min-available
annotation, or the plugin's `defaultMinAvailable`) of them hold a reservation:
each member that reserves a node waits at Permit (`permitted`, decision `wait`),
and the one that completes the gang approves them all. So a gang that is stuck
has members waiting at Permit and others that are not. Those that failed for
their own reason are the blockers, each with its last failure's message (its
attempt found no node, its binding failed), or with no attempt yet (still
queued, or held by scheduling gates); those Permit sent back with the gang (a
sibling failed, the wait timed out) are listed apart, with Permit's reason.

The members are the pods of the namespace ever observed with the gang's label
(`pod_observed`); each one's state is the fold of its own events. minMember is
what Coscheduling recorded it read (`input_recorded` podgroup/NS/NAME/...), else
the members' annotation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eventsched.events.reader import EventReader
from eventsched.events.record import StoredEvent
from eventsched.model.podgroup import MIN_AVAILABLE_ANNOTATION, POD_GROUP_LABEL, group_in

#: Where a member stands, by its last events.
BOUND = "bound"
WAITING = "waiting at Permit"
PERMITTED = "permitted"
SCHEDULING = "being scheduled"
UNSCHEDULABLE = "unschedulable"
REJECTED = "rejected at Permit"
BIND_FAILED = "binding failed"
NOT_ATTEMPTED = "not attempted yet"
GATED = "held by scheduling gates"
REMOVED = "removed"

#: States in which a member holds (or has) its place in the gang.
PLACED_STATES = (BOUND, WAITING, PERMITTED)
#: States of a member that is not placed and not for its own failure: Permit sent it
#: back with the rest of the gang (a sibling failed, or the wait timed out), or it is gone.
NOT_BLOCKING = (*PLACED_STATES, REJECTED, REMOVED)


@dataclass(slots=True)
class GangMember:
    namespace: str
    name: str
    state: str = NOT_ATTEMPTED
    #: The node it is bound to, or reserved while waiting / being permitted.
    node: str | None = None
    #: Its last failure's message (unschedulable, rejected, binding failed), else "".
    message: str = ""
    attempts: int = 0
    #: The event that put it in its state: when, and where in the log.
    since: str = ""
    position: int = 0
    #: Not placed, for its own reason (no node fit, binding failed, not attempted yet):
    #: the gang waits for this member.
    blocking: bool = True


@dataclass(slots=True)
class Gang:
    namespace: str
    name: str
    #: None: no member says, and Coscheduling recorded none.
    min_member: int | None
    members: list[GangMember] = field(default_factory=list)
    #: One sentence: complete, or what the gang waits for (`describe()` once loaded).
    summary: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def count(self, *states: str) -> int:
        return sum(1 for m in self.members if m.state in states)

    @property
    def live(self) -> int:
        """Members that exist (not removed from the cluster)."""
        return sum(1 for m in self.members if m.state != REMOVED)

    @property
    def blockers(self) -> list[GangMember]:
        return [m for m in self.members if m.blocking]

    @property
    def rejected(self) -> list[GangMember]:
        """Members Permit sent back with the gang, to be tried again."""
        return [m for m in self.members if m.state == REJECTED]

    @property
    def complete(self) -> bool:
        return self.min_member is not None and self.count(BOUND) >= self.min_member

    def describe(self) -> str:
        """One sentence: complete, or what the gang waits for."""
        minimum = "unknown" if self.min_member is None else str(self.min_member)
        if self.complete:
            return f"complete: {self.count(BOUND)} of minMember {minimum} bound"
        held = self.count(*PLACED_STATES)
        parts = [f"{self.count(BOUND)} bound", f"{self.count(WAITING)} waiting at Permit"]
        if self.count(PERMITTED):
            parts.append(f"{self.count(PERMITTED)} permitted, binding")
        text = f"not complete: {held} of minMember {minimum} hold a node ({', '.join(parts)})"
        short = (self.min_member or 0) - self.live
        if short > 0:
            text += f"; {self.live} member(s) exist, {short} too few"
        if self.blockers:
            text += "; blocked by " + ", ".join(f"{m.name} ({m.state})" for m in self.blockers)
        if self.rejected:
            text += "; rejected at Permit with the gang: " + ", ".join(
                m.name for m in self.rejected
            )
        return text


def group_of_events(events: Iterable[StoredEvent]) -> tuple[str, str] | None:
    """(namespace, gang) named by the pod's last observation, None outside any gang."""
    observed = [e for e in events if e.kind == "pod_observed"]
    if not observed:
        return None
    last = observed[-1]
    group = group_in(last.namespace or "", _map(last.data.get("labels")))
    if group is None:
        return None
    namespace, _, name = group.partition("/")
    return namespace, name


def load_gang(reader: EventReader, namespace: str, name: str) -> Gang | None:
    """The gang NAMESPACE/NAME as the log has it; None when no pod ever carried its label."""
    names = reader.pods_labelled(namespace, POD_GROUP_LABEL, name)
    if not names:
        return None
    gang = Gang(namespace, name, None)
    recorded: int | None = None
    annotated: int | None = None
    for pod in names:
        events = reader.read_pod(namespace, pod)
        gang.members.append(member_of(namespace, pod, events))
        recorded = _recorded_min(events, f"podgroup/{namespace}/{name}/") or recorded
        annotated = annotated or _annotated_min(events)
    gang.min_member = recorded or annotated
    gang.summary = gang.describe()
    return gang


def gang_of_pod(reader: EventReader, events: Iterable[StoredEvent]) -> Gang | None:
    """The gang of the pod whose events these are, None outside any gang."""
    found = group_of_events(events)
    return load_gang(reader, *found) if found is not None else None


def member_of(namespace: str, name: str, events: Iterable[StoredEvent]) -> GangMember:
    """Where one member stands after its events, in log order."""
    member = GangMember(namespace, name)
    for event in events:
        _FOLD.get(event.kind, _ignore)(member, event)
    member.blocking = member.state not in NOT_BLOCKING
    return member


def _set(member: GangMember, event: StoredEvent, state: str, message: str | None = None) -> None:
    member.state = state
    member.since = event.recorded_at.isoformat()
    member.position = event.position
    if message is not None:
        member.message = message


def _observed(member: GangMember, event: StoredEvent) -> None:
    node = event.data.get("nodeName")
    gates = event.data.get("schedulingGates")
    if node:  # bound (by us or another scheduler) as the cluster shows it
        member.node = str(node)
        _set(member, event, BOUND)
    elif gates and member.state in (NOT_ATTEMPTED, GATED):
        _set(member, event, GATED, "held by scheduling gates: " + ", ".join(map(str, gates)))
    elif member.state == GATED:
        _set(member, event, NOT_ATTEMPTED, "")


def _started(member: GangMember, event: StoredEvent) -> None:
    member.attempts += 1
    member.node = None
    _set(member, event, SCHEDULING)


def _reserved(member: GangMember, event: StoredEvent) -> None:
    member.node = event.node


def _permitted(member: GangMember, event: StoredEvent) -> None:
    decision = event.data.get("decision")
    if decision == "wait":
        _set(member, event, WAITING)
    elif decision == "approve":
        _set(member, event, PERMITTED)
    elif decision in ("deny", "timeout"):
        _set(member, event, REJECTED, _reasons(event.data.get("status")))


def _bound(member: GangMember, event: StoredEvent) -> None:
    member.node = event.node
    _set(member, event, BOUND)


def _bind_failed(member: GangMember, event: StoredEvent) -> None:
    if member.state != REJECTED:  # a Permit rejection is logged as bind_failed too
        _set(member, event, BIND_FAILED, str(event.data.get("reason", "")))
    member.node = None


def _unschedulable(member: GangMember, event: StoredEvent) -> None:
    member.node = None
    _set(member, event, UNSCHEDULABLE, str(event.data.get("message", "")))


def _removed(member: GangMember, event: StoredEvent) -> None:
    _set(member, event, REMOVED)


def _ignore(member: GangMember, event: StoredEvent) -> None:
    return None


_FOLD = {
    "pod_observed": _observed,
    "attempt_started": _started,
    "reserved": _reserved,
    "permitted": _permitted,
    "bound": _bound,
    "bind_failed": _bind_failed,
    "unschedulable": _unschedulable,
    "pod_removed": _removed,
}


def _reasons(status: Any) -> str:
    reasons = _map(status).get("reasons")
    return "; ".join(map(str, reasons)) if isinstance(reasons, list) else ""


def _recorded_min(events: Iterable[StoredEvent], prefix: str) -> int | None:
    """minAvailable of the member's last Coscheduling input about its gang."""
    found = None
    for event in events:
        if event.kind == "input_recorded" and str(event.data.get("key", "")).startswith(prefix):
            found = _positive(_map(event.data.get("value")).get("minAvailable")) or found
    return found


def _annotated_min(events: Iterable[StoredEvent]) -> int | None:
    observed = [e for e in events if e.kind == "pod_observed"]
    if not observed:
        return None
    raw = _map(observed[-1].data.get("annotations")).get(MIN_AVAILABLE_ANNOTATION, "")
    text = str(raw).strip()
    return _positive(int(text)) if text.isascii() and text.isdigit() else None


def _positive(value: Any) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
    return int(value) if ok else None


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
