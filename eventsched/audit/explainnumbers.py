"""Numbers and the queue for an explanation: each attempt's figures from the view it saw,
and the pod's standing in the queue at the log's head."""

from __future__ import annotations

from eventsched.audit.explain import AttemptExplanation, PodExplanation
from eventsched.audit.numbers import RejectedNode, ScoredAttempt, attempt_numbers
from eventsched.audit.queuestanding import queue_standing
from eventsched.audit.viewat import ViewAt
from eventsched.framework import Registry


def explain_numbers(
    explanation: PodExplanation, views: ViewAt, registry: Registry | None, head: int
) -> None:
    """Fill each attempt's `numbers` and the pod's `queue` (folding the log as far as `head`)."""
    for attempt in sorted(explanation.attempts, key=lambda a: a.started_position):
        folded = views.at(attempt.started_position - 1)
        attempt.numbers = attempt_numbers(
            folded.view,
            attempt.pod_uid,
            [RejectedNode(r.node, r.plugin, r.reasons) for r in attempt.rejections],
            [s for s in attempt.steps if s.get("kind") == "input_recorded"],
            ScoredAttempt(
                [p["name"] for p in attempt.score_plugins], attempt.top, attempt.selected
            ),
        )
    last = explanation.attempts[-1] if explanation.attempts else None
    uid = last.pod_uid if last is not None else ""
    if not uid or explanation.final_node or explanation.removed:
        return
    explanation.queue = queue_standing(
        views.at(head), uid, registry, last.config_digest if last else "", _rejecting(last)
    )


def _rejecting(attempt: AttemptExplanation | None) -> set[str]:
    """The plugins whose rejections keep the pod out: its Filter and PreFilter rejections."""
    if attempt is None:
        return set()
    plugins = {r.plugin for r in attempt.rejections}
    status = (attempt.prefilter or {}).get("status") or {}
    if status.get("plugin"):
        plugins.add(str(status["plugin"]))
    return plugins
