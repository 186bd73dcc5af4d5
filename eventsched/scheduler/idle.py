"""When a loop run `until_idle` may stop: nothing left could end differently.

A pod waiting out a backoff counts as done when it failed after the last change (a
cluster event, a binding's answer, another pod placed): trying it again would decide
the same, and a simulation, whose cluster changes only when the scheduler acts, would
retry it forever.
"""

from __future__ import annotations

from collections.abc import Iterable


class Changes:
    """Cluster changes, binding answers and placements so far, and each failed pod's count
    when it last failed."""

    __slots__ = ("count", "failed_at")

    def __init__(self) -> None:
        self.count = 0
        self.failed_at: dict[str, int] = {}

    def changed(self) -> None:
        """A cluster change or a binding's answer reached the loop."""
        self.count += 1

    def placed(self, uid: str) -> None:
        """A pod was placed: others' next attempts see it."""
        self.count += 1
        self.failed_at.pop(uid, None)

    def failed(self, uid: str) -> None:
        self.failed_at[uid] = self.count

    def settled(self, backing_off: Iterable[str]) -> bool:
        """Every pod backing off failed after the last change."""
        return all(self.failed_at.get(uid) == self.count for uid in backing_off)
