"""SchedulingGates (PreEnqueue): a pod with `spec.schedulingGates` waits outside activeQ."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eventsched.framework import LEGACY_FEATURES, Features, Handle, Status, check_args
from eventsched.model import Pod


class SchedulingGates:
    name = "SchedulingGates"

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args)

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.scheduling_gates:
            return None
        return Status.unresolvable(
            f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]"
        )
