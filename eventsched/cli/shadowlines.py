"""`eventsched explain`'s line about a shadow attempt: what the shadowed scheduler did, and
eventsched's verdict on it."""

from __future__ import annotations

from eventsched.audit.explainshadow import ShadowVerdict


def render_shadow_verdict(v: ShadowVerdict) -> str:
    """One line, after the attempt's own decisions (which are eventsched's)."""
    return f"Shadow: {_theirs(v)}; {_ours(v)}"


def _theirs(v: ShadowVerdict) -> str:
    who = v.scheduler
    if v.observed == "placed":
        return f"{who} placed it on {v.node}"
    if v.observed == "nominated":
        deleting = f" (deleting {', '.join(v.victims)})" if v.victims else ""
        return f"{who} nominated {v.node} for preemption{deleting}, leaving it pending: {v.message}"
    return f"{who} left it pending: {v.message}"


def _ours(v: ShadowVerdict) -> str:
    if v.our_error:
        return f"eventsched's own attempt erred: {v.our_message} ({v.verdict})"
    if v.verdict == "agree":
        return _agreement(v)
    if v.verdict == "tie" and v.observed == "nominated":
        return f"eventsched's PostFilter nominates {v.our_nomination}, a tie: {v.cause}"
    if v.verdict == "tie":
        return f"eventsched picks {v.picked}, a tie: {v.cause}"
    if v.picked and v.observed == "placed":
        return f"eventsched would pick {v.picked} because {v.cause}"
    if v.picked:
        return f"eventsched would pick {v.picked}, which fits"
    if v.observed == "unschedulable":
        return f"eventsched gives another message: {v.our_message}"
    if v.observed == "nominated" and v.our_nomination == v.node and v.our_message != v.message:
        return (
            f"eventsched's PostFilter nominates {v.node} too, with another message: {v.our_message}"
        )
    return f"eventsched differs: {v.cause}"


def _agreement(v: ShadowVerdict) -> str:
    if v.observed == "placed":
        total = f" (total {v.our_total})" if v.our_total is not None else ""
        return f"eventsched agrees{total}"
    if v.observed == "nominated":
        evicting = f" (evicting {', '.join(v.our_victims)} in its dry run)" if v.our_victims else ""
        return (
            f"eventsched agrees: its PostFilter nominates {v.node} too{evicting}, "
            "with the same message"
        )
    return "eventsched gives the same message"
