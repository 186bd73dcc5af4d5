"""Figures computed from the bind times the watch recorded."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Failover:
    """Bind times around a kill (seconds on one clock)."""

    kill_at: float
    last_before: float | None  # the last bind not made by the new leader
    first_after: float | None  # the new leader's first bind of its own

    @property
    def from_kill(self) -> float | None:
        return None if self.first_after is None else self.first_after - self.kill_at

    @property
    def from_last_bind(self) -> float | None:
        if self.first_after is None or self.last_before is None:
            return None
        return self.first_after - self.last_before


def failover(kill_at: float, bind_times: Mapping[str, float], by_new_leader: set[str]) -> Failover:
    """Failover from each pod's bind time and which pods the new leader bound itself.

    A bind the old leader made just before the kill may be seen a little after it, so
    "before" is "not by the new leader", not "seen before the kill".
    """
    old = [t for pod, t in bind_times.items() if pod not in by_new_leader]
    new = [t for pod, t in bind_times.items() if pod in by_new_leader]
    return Failover(kill_at, max(old, default=None), min(new, default=None))


def longest_gap(times: Iterable[float]) -> tuple[float, float]:
    """(start, length) of the longest pause between consecutive binds."""
    ordered = sorted(times)
    gaps = [(a, b - a) for a, b in itertools.pairwise(ordered)]
    return max(gaps, key=lambda g: g[1], default=(0.0, 0.0))
