"""`eventsched explain`'s lines about preemption: a preemptor's decision, a victim's eviction."""

from __future__ import annotations

from eventsched.audit.explainpreemption import Candidate, PreemptedBy, Preemption, Victim

#: Other candidates listed by name; the rest are counted.
MAX_OTHER_CANDIDATES = 10


def render_preemption(p: Preemption) -> list[str]:
    """The decision, after the attempt's PostFilter line."""
    out = [f"Preemption: nominated node {p.nominated_node}, {_count(len(p.victims), 'victim')}:"]
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
    """One eviction of the explained pod, as another pod's victim."""
    priority = f" (priority {v.preemptor_priority})" if v.preemptor_priority is not None else ""
    chosen = f": chosen by {v.chosen_by}" if v.chosen_by else ""
    outcome = (
        f"outcome {_outcome(v.outcome, v.code, v.reason, v.reconciled)}"
        if v.outcome is not None
        else "no eviction recorded yet"
    )
    return (
        f"Preempted by {v.preemptor}{priority} on node {v.node} in attempt {v.attempt}{chosen}; "
        + outcome
    )


def _victim(v: Victim) -> str:
    pdb = ", violates a PodDisruptionBudget" if v.pdb_violation else ""
    outcome = (
        _outcome(v.outcome, v.code, v.reason, v.reconciled)
        if v.outcome is not None
        else "no eviction recorded yet"
    )
    return f"{v.namespace}/{v.name} (priority {v.priority}{pdb}): {outcome}"


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
