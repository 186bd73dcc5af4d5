"""Numbers and the queue for an explanation: each attempt's figures from the view it saw,
and the pod's standing in the queue at the log's head."""

from __future__ import annotations

from eventsched.audit.explain import AttemptExplanation, PodExplanation
from eventsched.audit.numbers import RejectedNode, ScoredAttempt, attempt_numbers
from eventsched.audit.queuestanding import queue_standing
from eventsched.audit.viewat import FoldError, ViewAt
from eventsched.framework import Registry


def explain_numbers(
    explanation: PodExplanation,
    views: ViewAt,
    registry: Registry | None,
    head: int,
    last: int | None = None,
) -> None:
    """Fill the attempts' `numbers` (the `last` ones only, when given: each folds the log to
    its own position) and the pod's `queue` (folding the log as far as `head`)."""
    try:
        _fill(explanation, views, registry, head, last)
    except FoldError as exc:
        explanation.numbers_unavailable = f"no numbers: {exc}"


def _fill(
    explanation: PodExplanation,
    views: ViewAt,
    registry: Registry | None,
    head: int,
    last: int | None,
) -> None:
    chosen = sorted(explanation.attempts, key=lambda a: a.started_position)
    for attempt in chosen[-last:] if last else chosen:
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
    latest = explanation.attempts[-1] if explanation.attempts else None
    uid = latest.pod_uid if latest is not None else ""
    if not uid or explanation.final_node or explanation.removed:
        return
    explanation.queue = queue_standing(
        views.at(head), uid, registry, latest.config_digest if latest else "", _rejecting(latest)
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
