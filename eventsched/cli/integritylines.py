"""The warnings `explain` and `query` print when what they show cannot be trusted."""

from __future__ import annotations

from eventsched.audit.integrity import Integrity, describe

#: Events of the hash-chain batches `explain` checks by default: every batch of a pod's
#: attempts, not the batch of everything a starting scheduler listed once it is large.
CHECK_EVENTS = 50_000


def warning_lines(integrity: Integrity | None, budget: str = "") -> list[str]:
    """One `WARNING:` line per finding, and a note when batches were left unchecked
    (`budget`: the option that sets how many events are checked); none when the check
    found nothing and left nothing (or did not run)."""
    if integrity is None:
        return []
    lines = [f"WARNING: {sentence}" for sentence in describe(integrity)]
    if integrity.unchecked:
        lines.append(
            f"Note: {integrity.unchecked} hash-chain batch(es) holding these events "
            f"({integrity.unchecked_events} events) not checked{budget}"
        )
    return lines


def exit_code(integrity: Integrity | None) -> int:
    """1 when the check found a broken chain or a contradiction, else 0."""
    return 0 if integrity is None or integrity.ok else 1
