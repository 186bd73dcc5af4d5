"""Preemption as explain reads it: the preemptor's decision and each victim's eviction.

A `preempted` event (uid = the preemptor) is in the preemptor's attempt; an
`evicted` event carries the victim's uid and name but the preemptor's
attempt. So a preemptor's explanation reads its attempt's `evicted` events
for the victims' outcomes, and a victim's explanation reads the attempt its
`evicted` names for the decision that chose it (node, criterion, its own
priority and PodDisruptionBudget as the decision saw them) and the
preemptor's last `pod_observed` before it for the preemptor's priority, which
is why a victim is one: DefaultPreemption evicts only pods of lower priority. A
victim chosen but not (yet) evicted has no `evicted` event: the view
`preemption_victims` (migration 0005) finds those decisions by its uid.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eventsched.events.reader import EventReader
from eventsched.events.record import StoredEvent


@dataclass(slots=True)
class Victim:
    uid: str
    namespace: str
    name: str
    priority: int
    pdb_violation: bool
    #: The `evicted` event's outcome: deleted, gone, rejected or failed; None while unwritten.
    outcome: str | None = None
    code: int | None = None
    reason: str | None = None
    reconciled: bool = False
    #: Where and when the `evicted` event was written; None while unwritten.
    evicted_position: int | None = None
    evicted_at: str | None = None


@dataclass(slots=True)
class Candidate:
    node: str
    victims: int
    pdb_violations: int


@dataclass(slots=True)
class Preemption:
    """What DefaultPreemption decided in one attempt (a `preempted` event)."""

    position: int
    nominated_node: str
    victims: list[Victim]
    #: The candidates the dry run found, in the order found, the chosen one included (the
    #: log keeps at most 21 of them; `candidate_count` is how many there were).
    candidates: list[Candidate]
    chosen_by: str
    offset: int = 0
    num_candidates: int = 0
    evaluated: int = 0
    potential_nodes: int = 0
    candidate_count: int = 0
    #: Lower-priority pods nominated to the node whose nomination is cleared (ns/name).
    lower_nominated: list[str] = field(default_factory=list)
    #: The plugin that decided (DefaultPreemption, CapacityScheduling) and when.
    plugin: str = ""
    recorded_at: str = ""
    #: The preemptor's priority as last observed before the decision (None: not in the log).
    priority: int | None = None

    def others(self) -> list[Candidate]:
        """The candidates not chosen (the first one on the nominated node is the chosen)."""
        chosen = next((c for c in self.candidates if c.node == self.nominated_node), None)
        return [c for c in self.candidates if c is not chosen]


@dataclass(slots=True)
class PreemptedBy:
    """A pod evicted as a victim of another pod's preemption (an `evicted` event)."""

    attempt: str
    position: int
    recorded_at: str
    preemptor: str
    preemptor_uid: str
    node: str | None
    #: The `evicted` event's outcome; None: the decision chose the pod, no eviction is logged.
    outcome: str | None
    code: int | None = None
    reason: str | None = None
    reconciled: bool = False
    #: From the attempt's `preempted` event and the preemptor's `pod_observed`.
    chosen_by: str | None = None
    preemptor_priority: int | None = None
    #: This pod's own priority, and whether evicting it violates a PodDisruptionBudget,
    #: as the decision recorded them.
    priority: int | None = None
    pdb_violation: bool = False
    #: The decision's position and time (`position` and `recorded_at` are the eviction's,
    #: or the decision's while no eviction is logged).
    decided_position: int | None = None
    decided_at: str | None = None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def preemption_of(event: StoredEvent) -> Preemption:
    """The decision a `preempted` event records (tolerant of missing fields)."""
    data = event.data
    victims = [
        Victim(
            uid=str(v.get("uid", "")),
            namespace=str(v.get("namespace", "")),
            name=str(v.get("name", "")),
            priority=_int(v.get("priority")) or 0,
            pdb_violation=bool(v.get("pdbViolation", False)),
        )
        for v in _objects(data.get("victims"))
    ]
    candidates = [
        Candidate(
            node=str(c.get("node", "")),
            victims=len(c.get("victims") or ()),
            pdb_violations=_int(c.get("pdbViolations")) or 0,
        )
        for c in _objects(data.get("candidates"))
    ]
    return Preemption(
        position=event.position,
        nominated_node=str(data.get("nominatedNodeName") or event.node or ""),
        victims=victims,
        candidates=candidates,
        chosen_by=str(data.get("chosenBy", "")),
        offset=_int(data.get("offset")) or 0,
        num_candidates=_int(data.get("numCandidates")) or 0,
        candidate_count=_int(data.get("candidateCount")) or len(candidates),
        evaluated=_int(data.get("evaluated")) or 0,
        potential_nodes=_int(data.get("potentialNodes")) or 0,
        lower_nominated=[
            f"{p.get('namespace')}/{p.get('name')}" for p in _objects(data.get("lowerNominated"))
        ],
        plugin=event.plugin or "",
        recorded_at=event.recorded_at.isoformat(),
    )


def preempted_by_of(event: StoredEvent) -> PreemptedBy:
    """What an `evicted` event says by itself about the pod it names."""
    data = event.data
    preemptor = data.get("preemptor") or {}
    return PreemptedBy(
        attempt=event.attempt or "",
        position=event.position,
        recorded_at=event.recorded_at.isoformat(),
        preemptor=f"{preemptor.get('namespace')}/{preemptor.get('name')}",
        preemptor_uid=str(preemptor.get("uid", "")),
        node=event.node,
        outcome=str(data.get("outcome", "")),
        code=_int(data.get("code")),
        reason=data.get("reason"),
        reconciled=bool(data.get("reconciled", False)),
    )


def apply_evictions(preemption: Preemption, events: Iterable[StoredEvent]) -> None:
    """Each victim's outcome from the attempt's `evicted` events (the latest one counts)."""
    by_uid = {v.uid: v for v in preemption.victims}
    for event in events:
        victim = by_uid.get(event.uid or "")
        if event.kind != "evicted" or victim is None:
            continue
        data = event.data
        victim.outcome = str(data.get("outcome", ""))
        victim.code = _int(data.get("code"))
        victim.reason = data.get("reason")
        victim.reconciled = bool(data.get("reconciled", False))
        victim.evicted_position = event.position
        victim.evicted_at = event.recorded_at.isoformat()


def complete_preemption(
    preemption: Preemption,
    attempt_events: Iterable[StoredEvent],
    preemptor_events: Iterable[StoredEvent],
) -> None:
    """The victims' outcomes from the attempt's events, and the preemptor's priority from
    its own events (its last `pod_observed` before the decision)."""
    apply_evictions(preemption, attempt_events)
    preemption.priority = priority_before(preemptor_events, preemption.position)


def priority_before(events: Iterable[StoredEvent], position: int) -> int | None:
    """The priority of the pod's last `pod_observed` among `events` before `position`."""
    observed = [e for e in events if e.kind == "pod_observed" and e.position < position]
    return _int(observed[-1].data.get("priority", 0)) if observed else None


def complete_preempted_by(reader: EventReader, found: PreemptedBy, uid: str | None) -> None:
    """The decision's criterion, this pod's priority as the decision saw it, and the
    preemptor's priority as last observed before the decision."""
    decision = next(
        (e for e in reader.read_attempt(found.attempt) if e.kind == "preempted"),
        None,
    )
    if decision is None:
        return
    found.chosen_by = decision.data.get("chosenBy")
    found.decided_position = decision.position
    found.decided_at = decision.recorded_at.isoformat()
    for victim in _objects(decision.data.get("victims")):
        if uid is not None and victim.get("uid") == uid:
            found.priority = _int(victim.get("priority"))
            found.pdb_violation = bool(victim.get("pdbViolation", False))
    found.preemptor_priority = priority_before(
        reader.read_uid(decision.uid or found.preemptor_uid), decision.position
    )


def not_evicted(reader: EventReader, uids: set[str]) -> list[PreemptedBy]:
    """Each decision that chose one of `uids` as a victim and logged no eviction of it
    (the eviction is under way, was never made, or an earlier victim's failed)."""
    if not uids:
        return []
    found = []
    for chosen in reader.victims_not_evicted(uids):
        events = reader.read_attempt(chosen.attempt)
        decision = next((e for e in events if e.kind == "preempted"), None)
        if decision is None:
            continue
        victim = PreemptedBy(
            attempt=chosen.attempt,
            position=decision.position,
            recorded_at=decision.recorded_at.isoformat(),
            preemptor=f"{decision.namespace}/{decision.name}",
            preemptor_uid=decision.uid or "",
            node=decision.node,
            outcome=None,
        )
        complete_preempted_by(reader, victim, chosen.uid)
        found.append(victim)
    return found


def _objects(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []
