"""What preempting a pod writes to it, as kube-scheduler v1.28 writes it (`PreemptPod`).

Before deleting a victim, kube-scheduler adds the condition DisruptionTarget
(status True, reason PreemptionByScheduler, message "<scheduler name>:
preempting to accommodate a higher priority pod", the preemptor's scheduler)
to the victim's status; after deleting it, it writes a Normal Event
"Preempted" (action "Preempting") on the victim: "Preempted by a pod on node
<node>". The strings are v1.28.0's (read from the kube-scheduler binary).

From v1.34 the Event names the preemptor: "Preempted by pod <preemptor UID> on node
<node>" (v1.37 formats it "Preempted by %s %v on node %v" with the type "pod"), and v1.37
adds " (in kube-scheduler memory)." when the victim was waiting on Permit and was
preempted there instead of deleted. The DisruptionTarget message reads the same in
every version.
"""

from __future__ import annotations

DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
PREEMPTED_REASON = "Preempted"
PREEMPTING_ACTION = "Preempting"


def disruption_message(scheduler_name: str) -> str:
    """The DisruptionTarget condition's message."""
    return f"{scheduler_name}: preempting to accommodate a higher priority pod"


def preempted_event_message(
    node_name: str, preemptor_uid: str | None = None, in_memory: bool = False
) -> str:
    """The victim's Preempted Event: v1.28's without `preemptor_uid`, v1.34's and v1.37's
    with it (`in_memory`: v1.37's victim preempted while waiting on Permit)."""
    if preemptor_uid is None:
        return f"Preempted by a pod on node {node_name}"
    message = f"Preempted by pod {preemptor_uid} on node {node_name}"
    return message + " (in kube-scheduler memory)." if in_memory else message
