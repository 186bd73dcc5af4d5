"""PostFilter after a failed Filter pass, recorded: the live scheduler and replay share it.

kube-scheduler's `schedulePod` failure path: the per-node statuses of the
failed pass go to the PostFilter plugins; their message joins the FitError's
(`Diagnosis.post_filter_msg`). The attempt records `post_filtered` (the status,
and the nomination: a name overrides, "" clears, null leaves the pod's own)
and, when a plugin preempts, `preempted` with its decision.
"""

from __future__ import annotations

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.diagnosis import Diagnosis
from eventsched.framework.runtime import Framework
from eventsched.framework.types import PostFilterResult
from eventsched.model import NodeTable, Pod


def run_post_filter(
    fw: Framework,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    diagnosis: Diagnosis,
    *,
    dry_run: bool = False,
) -> PostFilterResult | None:
    """PostFilter over the failed pass's statuses; None when no plugin gave a result.

    `dry_run`: the choice is not a decision that will evict anyone (the shadow's), so no
    `preempted` is recorded: the caller records the result where it compares it."""
    if not fw.plugins_at("postFilter"):
        return None
    statuses = diagnosis.post_filter_statuses(table)
    result, status = fw.run_post_filter(state, pod, statuses)
    state.record(
        "post_filtered",
        {
            "status": status.to_record(),
            "nominatedNodeName": result.nominated_node_name if result is not None else None,
        },
        plugin=status.plugin or None,
    )
    # `PostFilterMsg = status.Message()` whatever the code: since v1.37 a successful
    # preemption says where it found room (no v1.28 or v1.34 PostFilter says anything then).
    diagnosis.post_filter_msg = status.message
    if result is not None and result.record and not dry_run:
        state.record(
            "preempted",
            dict(result.record),
            node=result.nominated_node_name,
            plugin=status.plugin or None,
        )
    return result
