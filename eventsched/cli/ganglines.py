"""`eventsched explain`'s lines about a gang member's gang: where each member stands and
which keep the gang from being bound."""

from __future__ import annotations

from eventsched.audit.gang import REJECTED, Gang, GangMember


def render_gang(gang: Gang) -> list[str]:
    """The gang's sentence, then one line per member, blockers marked."""
    out = [f"Gang {gang.key} (Coscheduling pod group), {gang.summary}"]
    out.extend("  " + _member(m) for m in gang.members)
    return out


def _member(m: GangMember) -> str:
    mark = "blocks the gang: " if m.blocking else ""
    where = f" on {m.node}" if m.node else ""
    since = f" since {m.since} (log position {m.position})" if m.since else ""
    tries = f", {m.attempts} attempt(s)" if m.attempts else ""
    message = f": {m.message}" if m.message and (m.blocking or m.state == REJECTED) else ""
    return f"{m.namespace}/{m.name}: {mark}{m.state}{where}{since}{tries}{message}"
