"""DefaultBinder (Bind): posts the Binding through the scheduler's cluster adapter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eventsched.framework import LEGACY_FEATURES, CycleState, Features, Handle, Status, check_args
from eventsched.model import Pod


class DefaultBinder:
    name = "DefaultBinder"

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args)
        self.handle = handle

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if self.handle.bind is None:
            return Status.as_error("no binder configured on the framework handle")
        return self.handle.bind(pod, node_name)
