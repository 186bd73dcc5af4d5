"""`eventsched explain`'s lines about preemption: a preemptor's decision, a victim's eviction."""

from __future__ import annotations

from eventsched.audit.explainpreemption import Candidate, PreemptedBy, Preemption, Victim

#: Other candidates listed by name; the rest are counted.
MAX_OTHER_CANDIDATES = 10


def render_preemption(p: Preemption) -> list[str]:
    """The decision, after the attempt's PostFilter line."""
    by = f" by {p.plugin}" if p.plugin else ""
    mine = f" (this pod's priority {p.priority})" if p.priority is not None else ""
    out = [
        f"Preemption{by}: nominated node {p.nominated_node}, "
        f"{_count(len(p.victims), 'victim')}{mine}:"
    ]
    out.extend("  " + _victim(v) for v in p.victims)
    out.append(
        f"Dry run: {_count(p.candidate_count, 'candidate')} among {p.evaluated} node(s) visited "
        f"(of {p.potential_nodes} where preemption might help, from offset {p.offset}, "
        f"looking for {p.num_candidates}); chosen by {p.chosen_by}"
    )
    others = p.others()
    if others:
        shown = ", ".join(_candidate(c) for c in others[:MAX_OTHER_CANDIDATES])
        more = p.candidate_count - 1 - len(others[:MAX_OTHER_CANDIDATES])
        out.append(f"  other candidates: {shown}" + (f" and {more} more" if more > 0 else ""))
    if p.lower_nominated:
        out.append(
            f"  nomination to {p.nominated_node} cleared for lower-priority "
            + ", ".join(p.lower_nominated)
        )
    return out


def render_preempted_by(v: PreemptedBy) -> str:
    """One eviction of the explained pod, as another pod's victim: who, why (its priority
    over this pod's), where, when, and what the eviction did."""
    priority = _priorities(v.preemptor_priority, v.priority)
    when = f" at {v.decided_at}" if v.decided_at else ""
    chosen = f": chosen by {v.chosen_by}" if v.chosen_by else ""
    pdb = "; violates a PodDisruptionBudget" if v.pdb_violation else ""
    outcome = (
        f"outcome {_outcome(v.outcome, v.code, v.reason, v.reconciled)}{_at(v.recorded_at, v.position)}"
        if v.outcome is not None
        else "no eviction recorded yet"
    )
    return (
        f"Preempted by {v.preemptor}{priority} on node {v.node} in attempt {v.attempt}"
        f"{when}{chosen}{pdb}; {outcome}"
    )


def _priorities(preemptor: int | None, victim: int | None) -> str:
    """Why the pod could be a victim: the preemptor's priority over its own."""
    if preemptor is not None and victim is not None:
        # CapacityScheduling may also preempt a pod of equal priority (over its quota).
        relation = "over" if preemptor > victim else "against"
        return f" (priority {preemptor} {relation} this pod's {victim})"
    if preemptor is not None:
        return f" (priority {preemptor})"
    return f" (this pod's priority {victim})" if victim is not None else ""


def _victim(v: Victim) -> str:
    pdb = ", violates a PodDisruptionBudget" if v.pdb_violation else ""
    outcome = (
        _outcome(v.outcome, v.code, v.reason, v.reconciled) + _at(v.evicted_at, v.evicted_position)
        if v.outcome is not None
        else "no eviction recorded yet"
    )
    return f"{v.namespace}/{v.name} (priority {v.priority}{pdb}): {outcome}"


def _at(when: str | None, position: int | None) -> str:
    """When and where in the log an eviction was written."""
    return f" at {when} (log position {position})" if when and position is not None else ""


def _outcome(outcome: str, code: int | None, reason: str | None, reconciled: bool) -> str:
    text = outcome
    if outcome == "failed":
        text += f" ({code}: {reason})" if reason else f" ({code})"
    if reconciled:
        text += " (re-issued on start)"
    return text


def _candidate(c: Candidate) -> str:
    pdb = f" ({_count(c.pdb_violations, 'PDB violation')})" if c.pdb_violations else ""
    return f"{c.node}: {_count(c.victims, 'victim')}{pdb}"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")
