"""The simulated cluster's writes to pods besides binding, as kube-scheduler makes them.

Events (with the related object a victim's Preempted Event names), the
PodScheduled=False condition and status.nominatedNodeName (`updatePod`),
clearing a nomination (`util.ClearNominatedNodeName`) and preempting a victim
(`PreemptPod`); and the kubelet's part the scheduler reads back, a bound pod's
status.startTime (`started`). Only the nominated node, the DisruptionTarget
reason and the start time are part of the scheduler's view of a pod, so a
MODIFIED is delivered only when one of them changes; conditions are kept in
`conditions` and Events in `events`, for tests and the CLI summary.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import structlog

from eventsched.cluster.naming import rfc3339
from eventsched.cluster.simstate import SimState
from eventsched.cluster.types import SimEvent
from eventsched.model import Pod
from eventsched.model.preemptionwrites import PREEMPTION_BY_SCHEDULER

log = structlog.get_logger(__name__)


def started(pod: Pod) -> Pod:
    """A pod on a node as the simulated kubelet leaves it: started at once, so with the
    status.startTime (now, RFC 3339 as the API server writes it) DefaultPreemption orders
    victims by."""
    if not pod.node_name or pod.start_time or pod.terminal:
        return pod
    return replace(pod, start_time=rfc3339(datetime.now(UTC)))


class SimulatedPodStatus:
    """`SimulatedCluster`'s Events and pod status writes (the scheduler's `Cluster`
    protocol), over the cluster's state; the cluster delegates to it."""

    __slots__ = ("_state", "reporting_controller")

    def __init__(self, state: SimState, reporting_controller: str) -> None:
        self._state = state
        #: The Events' reportingController.
        self.reporting_controller = reporting_controller

    def emit_event(
        self,
        pod: Pod,
        event_type: str,
        reason: str,
        action: str,
        message: str,
        related: Pod | None = None,
    ) -> None:
        """Keep the Event; the API accepts Events about pods that no longer exist, so do we."""
        event = SimEvent(
            type=event_type,
            reason=reason,
            action=action,
            message=message,
            pod_key=pod.key,
            pod_uid=pod.uid,
            reporting_controller=self.reporting_controller,
            related_key=related.key if related is not None else "",
            related_uid=related.uid if related is not None else "",
        )
        with self._state.lock:
            self._state.events.append(event)

    def set_unschedulable(
        self,
        pod: Pod,
        message: str,
        nominated_node: str | None = None,
        reason: str = "Unschedulable",
    ) -> None:
        """Set PodScheduled=False/Unschedulable and, unless `nominated_node` is None or what
        `pod` already has, status.nominatedNodeName ("" clears it), as one status update.

        Only the nominated node is part of the scheduler's view of a pod, so a
        MODIFIED is delivered only when it changes; the condition is kept in
        `conditions`.
        """
        with self._state.lock:
            current = self._state.pods.get(pod.key)
            if current is None:
                log.debug("unschedulable condition for a pod that is gone", pod=pod.key)
                return
            self._state.conditions[pod.key] = {
                "type": "PodScheduled",
                "status": "False",
                "reason": reason,
                "message": message,
                "lastTransitionTime": rfc3339(datetime.now(UTC)),
            }
            if nominated_node is not None and nominated_node != pod.nominated_node_name:
                self._nominate_locked(current, nominated_node)
        self._state.feed.deliver()

    def clear_nomination(self, pod: Pod) -> None:
        """Empty status.nominatedNodeName (`ClearNominatedNodeName`); a pod gone is no error."""
        if not pod.nominated_node_name:
            return
        with self._state.lock:
            current = self._state.pods.get(pod.key)
            if current is not None:
                self._nominate_locked(current, "")
        self._state.feed.deliver()

    def preempt(self, victim: Pod, preemptor: Pod) -> None:
        """The victim marked DisruptionTarget (PreemptionByScheduler), then deleted at once:
        the simulated kubelet terminates it without a grace period. A victim gone is no error."""
        with self._state.lock:
            current = self._state.pods.pop(victim.key, None)
            if current is not None:
                marked = replace(current, disruption_target=PREEMPTION_BY_SCHEDULER)
                self._state.feed.enqueue("MODIFIED", marked)
                self._state.conditions.pop(victim.key, None)
                self._state.feed.enqueue("DELETED", marked)
        self._state.feed.deliver()

    def _nominate_locked(self, current: Pod, nominated_node: str) -> None:
        """status.nominatedNodeName as a status patch would leave it; MODIFIED if it changed."""
        if current.nominated_node_name != nominated_node:
            updated = replace(current, nominated_node_name=nominated_node)
            self._state.pods[current.key] = updated
            self._state.feed.enqueue("MODIFIED", updated)
