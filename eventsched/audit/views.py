"""The views `eventsched query` offers, as docs/event-log.md and docs/querying.md document
them: a name and what one row is. `query --list-views` prints them, and a query that
names a table or view the log does not have is told their names."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class View:
    """A view (or the table) of the log, and what one of its rows is, in one line."""

    name: str
    row: str


#: Each row's description fits the table format's default width (60).
VIEWS: tuple[View, ...] = (
    View("decisions", "a decision event (every kind but the observed inputs)"),
    View("placements", "a `bound` event, with its identity and first_node"),
    View("filter_rejections", "a node a Filter plugin rejected, per reason"),
    View("plugin_scores", "a score plugin's raw/normalized/weighted score of a top node"),
    View("resource_rejections", "a node and resource a NodeResourcesFit rejection names"),
    View("pod_queue", "a pod queued at the log's head: its queue and place in it"),
    View("preemptions", "a `preempted` event: the preemptor, node and victims"),
    View("preemption_victims", "a victim of a `preempted` event, and its eviction's outcome"),
    View("scheduling_gates", "a gate a pod was held by, from when to when it was lifted"),
    View("shadow_verdicts", "a verdict of `eventsched shadow` on another scheduler's pod"),
)
#: The table itself, which every view reads.
EVENTS = View("events", "an event, input or decision (the table the views read)")


def named() -> str:
    """The views' names, and the table's, for a one-line message."""
    return ", ".join(v.name for v in VIEWS) + f" and the table {EVENTS.name}"
