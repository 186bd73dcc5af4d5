"""`decisions` holds `preempt_answered`: `eventsched extender`'s answer to a preempt call.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28

kube-scheduler's preempt call to `eventsched extender` is an attempt like its
filter and prioritize calls; the decision it answers with is the new kind
`preempt_answered` (the candidates the profile keeps, their victims, and why
each other candidate was dropped). The `decisions` view is redefined with it.

Frozen on purpose, like 0001: no eventsched import; eventsched/events/vocabulary.py
lists the same kinds, and a test checks that the two agree.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import context, op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: vocabulary.DECISION_KINDS as of this revision.
DECISION_KINDS = (
    "queued",
    "attempt_started",
    "prefiltered",
    "filtered",
    "post_filtered",
    "preempted",
    "preempt_answered",
    "evicted",
    "scored",
    "selected",
    "reserved",
    "unreserved",
    "permitted",
    "prebound",
    "bound",
    "bind_failed",
    "unschedulable",
    "requeued",
    "shadow_verdict",
    "maintenance",
)
#: DECISION_KINDS of revision 0008, which a downgrade restores.
PREVIOUS_DECISION_KINDS = tuple(k for k in DECISION_KINDS if k != "preempt_answered")

EVENT_COLUMNS = (
    "position, recorded_at, scheduler, instance, attempt, kind, uid, namespace, name, node, "
    "plugin, data"
)


def _decisions(kinds: Sequence[str]) -> str:
    listed = ", ".join(f"'{kind}'" for kind in kinds)
    return f"SELECT {EVENT_COLUMNS} FROM events WHERE kind IN ({listed})"


def _set_decisions(kinds: Sequence[str]) -> None:
    if context.get_context().dialect.name == "postgresql":
        # Same columns: CREATE OR REPLACE keeps the view's grants.
        op.execute(f"CREATE OR REPLACE VIEW decisions AS {_decisions(kinds)}")
    else:
        op.execute("DROP VIEW IF EXISTS decisions")
        op.execute(f"CREATE VIEW decisions AS {_decisions(kinds)}")


def upgrade() -> None:
    _set_decisions(DECISION_KINDS)


def downgrade() -> None:
    _set_decisions(PREVIOUS_DECISION_KINDS)
