"""Reading the log back: explain a pod, replay its decisions.

The names below are imported on first use (`eventsched._lazy`): the commands
that read one part of the log (`query`, `db prune`, `export`, `ui`) import
`eventsched.audit.query` or `.retention` without explain's and replay's modules.
"""

from typing import TYPE_CHECKING

from eventsched._lazy import exports

if TYPE_CHECKING:
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

__getattr__ = exports(
    __name__,
    {
        "AttemptExplanation": "explain",
        "PodExplanation": "explain",
        "PodNotFound": "explain",
        "explain_events": "explain",
        "explain_full": "explain",
        "explain_pod": "explain",
        "ReplayReport": "replay",
        "Selection": "replay",
        "replay": "replay",
        "Mismatch": "replayer",
    },
)

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
