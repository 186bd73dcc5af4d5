"""PrioritySort (QueueSort): higher priority first, then whoever waited longer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eventsched.framework import LEGACY_FEATURES, Features, Handle, QueuedPodInfo, check_args


class PrioritySort:
    name = "PrioritySort"

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args)

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        if a.pod.priority != b.pod.priority:
            return a.pod.priority > b.pod.priority
        return (a.timestamp, a.sequence) < (b.timestamp, b.sequence)
