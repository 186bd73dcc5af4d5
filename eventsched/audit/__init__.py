"""Reading the log back: explain now; replay and query come with issue 5."""

from eventsched.audit.explain import (
    AttemptExplanation,
    PodExplanation,
    PodNotFound,
    explain_events,
    explain_pod,
)

__all__ = ["AttemptExplanation", "PodExplanation", "PodNotFound", "explain_events", "explain_pod"]
