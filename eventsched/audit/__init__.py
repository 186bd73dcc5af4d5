"""Reading the log back: explain a pod, replay its decisions."""

from eventsched.audit.explain import (
    AttemptExplanation,
    PodExplanation,
    PodNotFound,
    explain_events,
    explain_full,
    explain_pod,
)
from eventsched.audit.replay import ReplayReport, Selection, replay
from eventsched.audit.replayer import Mismatch

__all__ = [
    "AttemptExplanation",
    "Mismatch",
    "PodExplanation",
    "PodNotFound",
    "ReplayReport",
    "Selection",
    "explain_events",
    "explain_full",
    "explain_pod",
    "replay",
]
