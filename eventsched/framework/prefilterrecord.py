"""How `prefiltered` records which PreFilter plugins returned Skip.

A plugin whose PreFilter returns Skip has its Filter skipped for the attempt.
Most pods skip most PreFilter plugins (no volumes, ports, affinity or spread
constraints: eleven of the default profile's twelve), so the record names
whichever side is shorter: `skipped`, or `notSkipped` (the profile's other
PreFilter plugins, in profile order).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any


def prefilter_skips(plugins: Sequence[str], skipped: Collection[str]) -> dict[str, list[str]]:
    """`prefiltered`'s record of the PreFilter plugins that returned Skip: their names,
    or, when fewer, the names of the others (`notSkipped`; most pods skip most of them)."""
    kept = [name for name in plugins if name not in skipped]
    if len(kept) < len(skipped):
        return {"notSkipped": kept}
    return {"skipped": sorted(skipped)}


def skipped_at_prefilter(data: Mapping[str, Any], plugins: Sequence[str]) -> list[str]:
    """The PreFilter plugins a `prefiltered` event says returned Skip, however it says it."""
    if "notSkipped" in data:
        kept = set(data["notSkipped"])
        return sorted(name for name in plugins if name not in kept)
    return sorted(data.get("skipped") or ())
