"""What a cluster adapter tells the scheduler: object changes and Binding answers.

They live in `model` because both `cluster` (which produces them) and
`scheduler` (which consumes them) may import `model` but not each other.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

from eventsched.model.node import Node
from eventsched.model.objects import ClusterObject
from eventsched.model.pod import Pod
from eventsched.model.valueclass import value_class

ChangeType = Literal["ADDED", "MODIFIED", "DELETED"]


@value_class
class ClusterChange:
    """One object as the cluster now has it (for DELETED: as it was last seen)."""

    type: ChangeType
    obj: Node | Pod | ClusterObject
    #: When the change was made (time.monotonic()): when the watch delivered it. The
    #: shadow's lag is measured from here.
    seen: float = field(default_factory=time.monotonic, compare=False)


@dataclass(frozen=True, slots=True)
class BindOutcome:
    """The API's answer to a Binding. `code` is the HTTP status (201 on success)."""

    ok: bool
    code: int = 201
    reason: str = ""
    #: True when retrying cannot help (404: the pod is gone; 409: bound elsewhere).
    final: bool = False


class ApiError(Exception):
    """An API request that failed (VolumeBinding's PreBind reads and writes through the
    cluster adapter): the HTTP status (0 when the server never answered) and its message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
