"""A shadow attempt as explain reads it: what the shadowed scheduler did, and the verdict.

`eventsched shadow` decides each pod another scheduler placed, failed or nominated
with an attempt of its own (Filter, Score, the node it selects, or its PostFilter's
choice as a dry run), which ends with a `shadow_verdict` instead of a binding: that
scheduler's side (data.scheduler, observed, node, message, the pods it deleted to
preempt), eventsched's (picked, ourMessage, ourError, the dry run's preemption) and
the verdict with its cause.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from eventsched.events.record import StoredEvent


@dataclass(slots=True)
class ShadowVerdict:
    """One `shadow_verdict` event."""

    position: int
    #: The shadowed scheduler (data.scheduler), e.g. default-scheduler.
    scheduler: str
    #: What it did: placed, unschedulable or nominated.
    observed: str
    #: agree, tie or differ.
    verdict: str
    #: Its node: where it placed the pod, or the node it nominated (None when it failed it).
    node: str | None
    #: The node eventsched picks (None when none fits).
    picked: str | None
    #: Its FailedScheduling message (unschedulable, nominated).
    message: str = ""
    #: The message eventsched gives when no node fits.
    our_message: str = ""
    #: eventsched's attempt erred (a plugin's error), rather than finding no node.
    our_error: bool = False
    #: Why they part, in one sentence with the numbers; for a tie, the shared total.
    cause: str = ""
    #: Weighted totals of eventsched's pick and of that scheduler's node (None: not scored).
    our_total: int | None = None
    their_total: int | None = None
    #: The node eventsched's PostFilter nominates in its dry run ("" when none), and the
    #: victims it chose there (namespace/name; nothing is evicted).
    our_nomination: str = ""
    our_victims: list[str] = field(default_factory=list)
    #: The pods (namespace/name) that scheduler deleted to preempt.
    victims: list[str] = field(default_factory=list)
    lag_seconds: float = 0.0


def shadow_verdict_of(event: StoredEvent) -> ShadowVerdict:
    data = event.data
    totals = data.get("totals") or {}
    preemption = data.get("preemption") or {}
    return ShadowVerdict(
        position=event.position,
        scheduler=str(data.get("scheduler") or event.scheduler),
        observed=str(data.get("observed", "")),
        verdict=str(data.get("verdict", "")),
        node=event.node or _text(data.get("node")) or None,
        picked=_text(data.get("picked")) or None,
        message=_text(data.get("message")),
        our_message=_text(data.get("ourMessage")),
        our_error=bool(data.get("ourError")),
        cause=_text(data.get("cause")),
        our_total=_int(totals.get("ours")),
        their_total=_int(totals.get("theirs")),
        our_nomination=_text(preemption.get("nominatedNodeName")),
        our_victims=_pods(preemption.get("victims")),
        victims=_pods(data.get("victims")),
        lag_seconds=float(data.get("lagSeconds") or 0.0),
    )


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None


def _pods(victims: Any) -> list[str]:
    """namespace/name of each pod of a recorded list of victims."""
    if not isinstance(victims, list):
        return []
    return [f"{v.get('namespace')}/{v.get('name')}" for v in victims if isinstance(v, Mapping)]
