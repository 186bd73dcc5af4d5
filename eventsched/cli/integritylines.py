"""The warnings `explain` and `query` print when what they show cannot be trusted."""

from __future__ import annotations

from eventsched.audit.integrity import Integrity, describe


def warning_lines(integrity: Integrity | None) -> list[str]:
    """One `WARNING:` line per finding; none when the check found nothing (or did not run)."""
    if integrity is None or integrity.ok:
        return []
    return [f"WARNING: {sentence}" for sentence in describe(integrity)]


def exit_code(integrity: Integrity | None) -> int:
    """1 when the check found a broken chain or a contradiction, else 0."""
    return 0 if integrity is None or integrity.ok else 1
