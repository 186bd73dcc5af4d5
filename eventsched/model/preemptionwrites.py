"""What preempting a pod writes to it, as kube-scheduler v1.28 writes it (`PreemptPod`).

Before deleting a victim, kube-scheduler adds the condition DisruptionTarget
(status True, reason PreemptionByScheduler, message "<scheduler name>:
preempting to accommodate a higher priority pod", the preemptor's scheduler)
to the victim's status; after deleting it, it writes a Normal Event
"Preempted" (action "Preempting") on the victim: "Preempted by a pod on node
<node>". The strings are v1.28.0's (read from the kube-scheduler binary).
"""

from __future__ import annotations

DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
PREEMPTED_REASON = "Preempted"
PREEMPTING_ACTION = "Preempting"


def disruption_message(scheduler_name: str) -> str:
    """The DisruptionTarget condition's message."""
    return f"{scheduler_name}: preempting to accommodate a higher priority pod"


def preempted_event_message(node_name: str) -> str:
    """The victim's Preempted Event."""
    return f"Preempted by a pod on node {node_name}"
