"""What every event log must satisfy, however the scheduler was stopped or cut off."""

from __future__ import annotations

#: Kinds an attempt records at most once; a second one means a batch was appended twice.
ONCE_PER_ATTEMPT = (
    "attempt_started",
    "selected",
    "reserved",
    "permitted",
    "bound",
    "bind_failed",
    "unschedulable",
)
